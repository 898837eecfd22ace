package report

// Verify is the read-back check of one storage (issue: verify).
type Verify struct {
	CheckedSamples    int64      `json:"checkedSamples"`
	MissingSamples    int64      `json:"missingSamples"`
	DuplicateSamples  int64      `json:"duplicateSamples"`
	UnexpectedSamples int64      `json:"unexpectedSamples"`
	ChangedValues     int64      `json:"changedValues"`
	MaxRelativeError  float64    `json:"maxRelativeError"`
	NaNAltered        int64      `json:"nanAltered"`
	StalenessIgnored  int64      `json:"stalenessIgnored"`
	ShiftedTimestamps int64      `json:"shiftedTimestamps"`
	Probes            []Probe    `json:"probes"`
	RuleDiffs         []RuleDiff `json:"ruleDiffs"`
}

// Probe is one PromQL behaviour: the correct Prometheus answer and this storage's.
type Probe struct {
	Name     string `json:"name"`
	Query    string `json:"query"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
	Same     bool   `json:"same"`
}

// RuleDiff is one rule whose range-query result differs from the other storages'.
type RuleDiff struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}
