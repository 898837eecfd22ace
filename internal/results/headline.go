package results

import "time"

// Headline is who is better at what, by how much and with what certainty (issue 35): one
// row per figure of the side-by-side table, each storage's median over the rounds with its
// interval, and the best storage only where the difference holds at the run's confidence,
// controlled across every row judged.
type Headline struct {
	// Rounds is how many times the whole run was repeated (tsbench run -rounds).
	Rounds int `json:"rounds"`
	// Confidence is the family-wise level: the chance that no row of an A/A run gets a best
	// is at least this.
	Confidence float64 `json:"confidence"`
	// Judged is how many rows were tested for a best: the Bonferroni divisor.
	Judged int `json:"judged"`
	// Method says, in words, how the intervals and the tests were made.
	Method string        `json:"method"`
	Rows   []HeadlineRow `json:"rows"`
}

// HeadlineRow is one figure of the table judged across the storages.
type HeadlineRow struct {
	// Figure names the figure (threshold's names where it has one, e.g. query.p99).
	Figure string `json:"figure"`
	Label  string `json:"label"`
	// Better is "lower" or "higher".
	Better string          `json:"better"`
	Values []HeadlineValue `json:"values"` // per storage, in name order
	// Best is the storage whose value is better than every other's beyond the noise; "" when
	// none is, and Reason says why.
	Best   string `json:"best,omitempty"`
	Reason string `json:"reason,omitempty"`
	// P is the p-value of the best candidate against the next one; null when not tested.
	P *float64 `json:"p"`
	// Ratios are the medians' ratios of every pair of storages ranked, A over B, each with
	// its simultaneous interval.
	Ratios []Ratio `json:"ratios,omitempty"`
}

// HeadlineValue is one storage's figure over the rounds.
type HeadlineValue struct {
	Storage string   `json:"storage"`
	Median  *float64 `json:"median"`
	// Low and High bound the interval at Confidence (per figure, not simultaneous); null
	// when no noise estimate exists.
	Low  *float64 `json:"low"`
	High *float64 `json:"high"`
	// N is how many rounds had the figure.
	N int `json:"n"`
	// Ranked is false for a storage kept out of the row's ranking: failed, or, on latency,
	// more than the degraded share of its queries failed.
	Ranked bool `json:"ranked"`
}

// Ratio is A's median over B's, with the interval of their ratio (null when it has none).
type Ratio struct {
	A     string   `json:"a"`
	B     string   `json:"b"`
	Ratio *float64 `json:"ratio"`
	Low   *float64 `json:"low"`
	High  *float64 `json:"high"`
}

// Round is one repetition of the run (tsbench run -rounds): its storages' figures, without
// the timelines and lists that only the last round, the run's own storages, keeps.
type Round struct {
	Round     int       `json:"round"`
	StartTime time.Time `json:"startTime"`
	EndTime   time.Time `json:"endTime"`
	Storages  []Storage `json:"storages"`
}

// Storage is the named storage's figures in the round, or nil.
func (r *Round) Storage(name string) *Storage {
	for i := range r.Storages {
		if r.Storages[i].Name == name {
			return &r.Storages[i]
		}
	}
	return nil
}

// RoundOf is r's figures as a Round: every storage without timelines, per-query figures,
// probe answers and examples, so that many rounds stay small.
func RoundOf(index int, r *Run) Round {
	out := Round{Round: index, StartTime: r.StartTime, EndTime: r.EndTime}
	for _, s := range r.Storages {
		out.Storages = append(out.Storages, s.trimmed())
	}
	return out
}

func (s Storage) trimmed() Storage {
	if s.Write != nil {
		w := *s.Write
		w.Timeline = nil
		s.Write = &w
	}
	if s.Query != nil {
		q := *s.Query
		q.Timeline, q.PerQuery = nil, nil
		q.LatencySeconds.Histogram, q.ServiceSeconds.Histogram = "", ""
		s.Query = &q
	}
	if s.Resources != nil {
		res := *s.Resources
		res.Timeline = nil
		s.Resources = &res
	}
	if s.Verify != nil {
		v := *s.Verify
		v.Examples, v.Checks, v.Probes = nil, nil, onlyDifferent(v.Probes)
		s.Verify = &v
	}
	s.Series, s.Conformance = nil, nil
	return s
}

// onlyDifferent keeps the probes that differ, without their answers: enough to count them.
func onlyDifferent(probes []Probe) []Probe {
	var out []Probe
	for _, p := range probes {
		if !p.Same {
			out = append(out, Probe{Name: p.Name})
		}
	}
	return out
}
