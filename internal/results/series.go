package results

import "time"

// WriteHeld is the account of the samples sent later than their scrape (issue 22), of one
// kind: late or out of order. They are in Write's account too; here they are counted apart,
// where Sent == Acked + sum(Refused) + Pending.
type WriteHeld struct {
	Sent    int64            `json:"sent"` // generated, × copies
	Acked   int64            `json:"acked"`
	Refused map[string]int64 `json:"refused"` // by reason: http_400, retry_timeout, ...
	Pending int64            `json:"pending"`
}

// RefusedTotal is the sum of Refused over every reason.
func (h *WriteHeld) RefusedTotal() int64 {
	var n int64
	for _, v := range h.Refused {
		n += v
	}
	return n
}

// VerifyHeld is the read-back of one held kind (late or out of order): of the held samples
// checked (sent before the checked window's end), how many the storage stored. Those not
// stored are not counted as missing in Verify: compare with the write account's refused.
type VerifyHeld struct {
	Checked int64 `json:"checked"`
	Stored  int64 `json:"stored"`
}

// Verdict says in a word what the storage did with them: stored, refused (none stored), or
// partly stored.
func (h *VerifyHeld) Verdict() string {
	switch h.Stored {
	case h.Checked:
		return "stored"
	case 0:
		return "refused"
	}
	return "partly stored"
}

// WorkloadSeries is what the series section did to the workload (issue 22): its events and
// the series it was expected to hold over time.
type WorkloadSeries struct {
	// EventsOmitted is how many events beyond the first TimelinePoints are left out of Events
	// (and of each storage's figures): a run of days stays the same size.
	EventsOmitted int `json:"eventsOmitted,omitempty"`
	// SeriesWritten is every distinct series the run wrote, its first scrapes' included: what
	// a storage that keeps every series holds (Prometheus' head within 2 h).
	SeriesWritten int64         `json:"seriesWritten"`
	Events        []Event       `json:"events,omitempty"`
	Timeline      []SeriesPoint `json:"timeline,omitempty"`
}

// Event is one occurrence of a cardinality event within the run.
type Event struct {
	Name  string    `json:"name"` // ramp, spike, doubleHalve
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// SeriesPoint is the workload's series at one moment: active (the active targets' series)
// and created: every series written so far, the first scrapes' included (the generator's
// own count, as a storage's created-series counter counts).
type SeriesPoint struct {
	Time    time.Time `json:"time"`
	Active  int64     `json:"active"`
	Created int64     `json:"created"`
	N       int       `json:"n,omitempty"` // observations the point stands for (absent: one)
}

// Merge is the point standing for p and the later one: the later one's figures (the created
// count is cumulative, and active series move in steps a mean would blur).
func (p SeriesPoint) Merge(later SeriesPoint) SeriesPoint {
	later.N = p.Count() + later.Count()
	return later
}

// Count is how many observations p stands for.
func (p SeriesPoint) Count() int { return count(p.N) }

// StorageSeries is one storage's figures around each event: the means of its CPU, RSS and
// query p99 during the event and in the calm of the same length before it.
type StorageSeries struct {
	Events []EventFigures `json:"events"`
}

// EventFigures compares one event with the calm before it; nil where no observation fell
// in a window.
type EventFigures struct {
	Name     string    `json:"name"`
	Start    time.Time `json:"start"`
	CPUCores Change    `json:"cpuCores"`
	RSSBytes Change    `json:"rssBytes"`
	QueryP99 Change    `json:"queryP99Seconds"`
}

// Change is a figure's mean before an event and during it.
type Change struct {
	Before *float64 `json:"before"`
	During *float64 `json:"during"`
}

// addHeld adds src to *dst, making it when needed; nil src adds nothing.
func addHeld(dst **WriteHeld, src *WriteHeld) {
	if src == nil {
		return
	}
	if *dst == nil {
		*dst = &WriteHeld{Refused: map[string]int64{}}
	}
	d := *dst
	d.Sent += src.Sent
	d.Acked += src.Acked
	d.Pending += src.Pending
	d.Refused = AddCounts(d.Refused, src.Refused)
}

// addVerifyHeld adds src to *dst, making it when needed; nil src adds nothing.
func addVerifyHeld(dst **VerifyHeld, src *VerifyHeld) {
	if src == nil {
		return
	}
	if *dst == nil {
		*dst = &VerifyHeld{}
	}
	(*dst).Checked += src.Checked
	(*dst).Stored += src.Stored
}

// mergeSeries adds the shards' series section up: series written and the expected timeline
// point by point (shards share startTime and record within milliseconds), events as the
// lead's (they are the whole workload's).
func mergeSeries(lead *Run, shards []*Run) *WorkloadSeries {
	if lead.Workload.Series == nil {
		return nil
	}
	m := &WorkloadSeries{Events: lead.Workload.Series.Events}
	for i, r := range shards {
		s := r.Workload.Series
		if s == nil {
			continue
		}
		m.SeriesWritten += s.SeriesWritten
		if i == 0 {
			m.Timeline = append([]SeriesPoint(nil), s.Timeline...)
			continue
		}
		m.Timeline = m.Timeline[:min(len(m.Timeline), len(s.Timeline))]
		for j := range m.Timeline {
			m.Timeline[j].Active += s.Timeline[j].Active
			m.Timeline[j].Created += s.Timeline[j].Created
		}
	}
	return m
}
