package bench

import (
	"context"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/verify"
)

// watchSeries records the workload's expected series at the start, every observeInterval
// (as often as the storages' own counts are observed) and at the end of the load.
func (r *run) watchSeries(ctx context.Context) {
	if !r.cfg.Series.On() {
		return
	}
	r.recordSeries(time.Now())
	every(ctx, r.cfg.ObserveInterval, r.recordSeries)
	at := time.Now()
	if e := r.writer.End; !e.IsZero() && !at.Before(e) {
		at = e.Add(-time.Millisecond) // the last moment of the load, not what follows it
	}
	r.recordSeries(at)
}

// recordSeries appends the workload's expected series at now to the series timeline.
func (r *run) recordSeries(now time.Time) {
	p := results.SeriesPoint{Time: now.UTC(), Active: r.part.ActiveSeries(now.UnixMilli()), Created: r.writer.SeriesWritten()}
	r.mu.Lock()
	r.seriesTimeline.Add(p)
	r.mu.Unlock()
}

// addSeries fills the series section's results: the events of the run, the expected series
// over time, and each storage's figures during each event against the calm before it.
func (r *run) addSeries(res *results.Run) {
	if !r.cfg.Series.On() {
		return
	}
	ws := &results.WorkloadSeries{Timeline: r.seriesTimeline.Points(), SeriesWritten: r.writer.SeriesWritten()}
	end := r.writer.GeneratedBefore().UnixMilli() // the load's end: no scrape at or after it
	if e := r.writer.End; !e.IsZero() {
		end = min(end, e.UnixMilli())
	}
	spans := r.part.EventSpans(end)
	if n := len(spans); n > results.TimelinePoints {
		spans, ws.EventsOmitted = spans[:results.TimelinePoints], n-results.TimelinePoints
	}
	for _, e := range spans {
		ws.Events = append(ws.Events, results.Event{Name: e.Name, Start: time.UnixMilli(e.Start).UTC(), End: time.UnixMilli(e.End).UTC()})
	}
	res.Workload.Series = ws
	// The pool's series are in Targets × SeriesPerTarget; active are those at the end.
	res.Workload.ActiveSeries = r.part.ActiveSeries(end)
	if len(ws.Events) == 0 {
		return
	}
	for i := range res.Storages {
		s := &res.Storages[i]
		ss := &results.StorageSeries{Events: []results.EventFigures{}}
		for _, e := range ws.Events {
			ss.Events = append(ss.Events, eventFigures(s, e))
		}
		s.Series = ss
	}
}

// eventFigures compares the storage's observations during e with those in the calm of the
// same length just before it.
func eventFigures(s *results.Storage, e results.Event) results.EventFigures {
	before := e.Start.Add(-e.End.Sub(e.Start))
	f := results.EventFigures{Name: e.Name, Start: e.Start}
	var cpu, rss, p99 [2][]float64 // before, during
	put := func(dst *[2][]float64, at string, v *float64) {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || v == nil {
			return
		}
		switch {
		case !t.Before(before) && t.Before(e.Start):
			dst[0] = append(dst[0], *v)
		case !t.Before(e.Start) && !t.After(e.End):
			dst[1] = append(dst[1], *v)
		}
	}
	if s.Resources != nil {
		for _, p := range s.Resources.Timeline {
			put(&cpu, p.Time, p.CPUCores)
			put(&rss, p.Time, p.RSSBytes)
		}
	}
	if s.Query != nil {
		for _, p := range s.Query.Timeline {
			put(&p99, p.Time, p.P99)
		}
	}
	f.CPUCores = results.Change{Before: mean(cpu[0]), During: mean(cpu[1])}
	f.RSSBytes = results.Change{Before: mean(rss[0]), During: mean(rss[1])}
	f.QueryP99 = results.Change{Before: mean(p99[0]), During: mean(p99[1])}
	return f
}

// mean is the mean of vs, nil when there are none.
func mean(vs []float64) *float64 {
	if len(vs) == 0 {
		return nil
	}
	var sum float64
	for _, v := range vs {
		sum += v
	}
	m := sum / float64(len(vs))
	return &m
}

// verifyHA adds the HA pair's read-back to each storage's, when HA pairs are written.
func verifyHA(ctx context.Context, v *verify.Verifier, res map[string]*results.Verify, from, to time.Time) {
	for name, h := range v.HA(ctx, from, to) {
		if res[name] != nil {
			res[name].HA = h
		}
	}
}
