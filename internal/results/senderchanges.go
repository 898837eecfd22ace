package results

import "fmt"

// SenderChanges is what the agent changed of what tsbench served, in scrape mode (issue 21):
// the changes every storage shows alike, which the storages were given, not made. Each
// storage's read-back is then checked against what the agent sent.
type SenderChanges struct {
	// ComparedSamples is how many served samples (NaN ones by their timestamp) were compared
	// across the storages: those two storages or more returned.
	ComparedSamples int64 `json:"comparedSamples"`
	// SingleAnswers are served samples one storage alone returned: what it holds tells
	// nothing of what the agent sent, so each is expected as served (at the agent's scrape
	// time where the other series of that scrape showed it) and a difference is that
	// storage's own (issue 29).
	SingleAnswers int64 `json:"singleAnswers"`
	// ChangedValues came back from every storage with the same other bits than served: the
	// agent's parsing of the page. MaxRelativeError is the largest |sent − served| / |served|.
	ChangedValues    int64   `json:"changedValues"`
	MaxRelativeError float64 `json:"maxRelativeError"`
	// ShiftedTimestamps came back from every storage at the same other millisecond than
	// served: the agent's own scrape time. MaxShiftMillis is the largest shift.
	ShiftedTimestamps int64 `json:"shiftedTimestamps"`
	MaxShiftMillis    int64 `json:"maxShiftMillis"`
	// Disagreements are served samples the storages returned differently from each other:
	// taken as the agent sent what a Prometheus storage returned (its TSDB keeps float64 bits
	// and milliseconds as received) when the agent's parsing could have made that value of
	// the served one, else as served, and left to each storage's verdict.
	Disagreements int64 `json:"disagreements"`
	// Note says why nothing was attributed, when nothing was (one storage read back).
	Note string `json:"note,omitempty"`
}

// Line is the changes in one sentence.
func (c *SenderChanges) Line(agent string) string {
	if c.Note != "" {
		return fmt.Sprintf("%s's changes: %s", agent, c.Note)
	}
	var s string
	if c.ChangedValues == 0 && c.ShiftedTimestamps == 0 {
		s = fmt.Sprintf("%s's changes: none: every storage returned the %d values compared as served", agent, c.ComparedSamples)
	} else {
		s = fmt.Sprintf("%s's changes (every storage got them alike, of %d values compared): %d values changed by its parsing (max relative error %.3g), %d timestamps set to its own scrape time (up to %dms)",
			agent, c.ComparedSamples, c.ChangedValues, c.MaxRelativeError, c.ShiftedTimestamps, c.MaxShiftMillis)
	}
	if c.SingleAnswers > 0 {
		s += fmt.Sprintf("; %d values one storage alone returned are checked as served: that storage answers for any change", c.SingleAnswers)
	}
	return s
}
