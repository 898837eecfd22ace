package results

// Sender is scrape mode (issue 15): the agent that scraped tsbench's targets and wrote to the
// storages, what tsbench served it, the agent's own account per storage and its resources.
// Nil when tsbench wrote directly.
type Sender struct {
	Kind string `json:"kind"` // vmagent or prometheus-agent
	// URL is the agent's HTTP root when the user runs it (senderURL); "" when tsbench
	// started it.
	URL string `json:"url,omitempty"`
	// ExporterURL is the real exporter served behind tsbench's 1 s cache, "" for the profile.
	ExporterURL      string `json:"exporterURL,omitempty"`
	ExporterFetches  int64  `json:"exporterFetches,omitempty"`
	ExposeTimestamps bool   `json:"exposeTimestamps"`

	// ServedScrapes and ServedSamples are the pages tsbench served and the samples in them,
	// counted exactly; FailedScrapes were asked for and not served (a target no longer
	// listed, an exporter that failed).
	ServedScrapes int64 `json:"servedScrapes"`
	ServedSamples int64 `json:"servedSamples"`
	ServedBytes   int64 `json:"servedBytes"`
	FailedScrapes int64 `json:"failedScrapes"`
	// ScrapeDurationSecondsMean and Max are from a request to its page's last byte, as
	// tsbench measured them.
	ScrapeDurationSecondsMean float64 `json:"scrapeDurationSecondsMean"`
	ScrapeDurationSecondsMax  float64 `json:"scrapeDurationSecondsMax"`

	// ScrapedSamples is what the agent says it scraped (vmagent); nil when it does not count
	// them (Prometheus) or its counters could not be read. It must equal ServedSamples.
	ScrapedSamples *int64 `json:"scrapedSamples"`
	// AppendedSamples is everything the agent took in to send: what it scraped, its own
	// series per scrape (up, scrape_duration_seconds, ...) and its staleness markers; nil
	// when its counters could not be read (Reasons says why).
	AppendedSamples *int64 `json:"appendedSamples"`
	// AgentAddedSamples is AppendedSamples less ServedSamples: the agent's own series and
	// markers; nil with AppendedSamples.
	AgentAddedSamples *int64 `json:"agentAddedSamples"`
	// Reasons says, for each figure above that is null, why (figure name → why unknown).
	Reasons map[string]string `json:"reasons,omitempty"`

	Storages []SenderStorage `json:"storages"` // in name order

	// Resources is the agent's CPU, RSS and disk (its queue), as a storage's.
	Resources *Resources `json:"resources,omitempty"`
	// CPUSecondsPerMillionSamples is the agent's CPU over the load per million samples it
	// took in: the figure to compare two agents by.
	CPUSecondsPerMillionSamples *float64 `json:"cpuSecondsPerMillionSamples"`
	// ReadBack says why the storages' samples were not read back, when they were not: an
	// exporter's values are not the workload's, so there is nothing to check them against.
	ReadBack string `json:"readBack,omitempty"`
	// Problems are what went wrong with the agent (its counters unreadable, it exited, ...).
	Problems []string `json:"problems,omitempty"`
	// Changes is what the agent changed of the pages served (senderchanges.go).
	Changes *SenderChanges `json:"changes,omitempty"`
}

// SenderStorage is one storage's part of the agent's account, by the agent's own counters:
// InSamples = AckedSamples + sum(DroppedSamples) + PendingSamples + UnexplainedSamples.
type SenderStorage struct {
	Name           string           `json:"name"`
	ServedSamples  int64            `json:"servedSamples"` // every storage gets what was served
	InSamples      int64            `json:"inSamples"`     // queued for it by the agent: served + the agent's own
	AckedSamples   int64            `json:"ackedSamples"`
	DroppedSamples map[string]int64 `json:"droppedSamples"`
	PendingSamples int64            `json:"pendingSamples"`
	Retries        int64            `json:"retries"`
	// UnexplainedSamples is what the agent's counters do not account for: 0 on a good run.
	UnexplainedSamples int64 `json:"unexplainedSamples"`
	// Known is false when the agent's counters cannot give acked and pending in samples
	// (vmagent not drained: it counts pending data in bytes); Why says so.
	Known        bool   `json:"known"`
	Why          string `json:"why,omitempty"`
	PendingBytes int64  `json:"pendingBytes,omitempty"`
}
