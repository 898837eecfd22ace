package query

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tsbench/tsbench/internal/results"
)

// Resume continues the storage's read account from a checkpoint's (issue 19): each query's
// counts and latency histograms, matched by kind and name, and the timeline. Call it before Run.
func (r *Runner) Resume(q *results.Query) error {
	byKey := map[string]*results.QueryStat{}
	for i := range q.PerQuery {
		p := &q.PerQuery[i]
		byKey[p.Kind+" "+p.Name] = p
	}
	for i, s := range r.stats {
		p := byKey[r.plan.Queries[i].Kind+" "+r.plan.Queries[i].Name]
		if p == nil {
			continue
		}
		if err := s.resume(p); err != nil {
			return fmt.Errorf("query %s: %w", p.Name, err)
		}
	}
	r.tl.mu.Lock()
	defer r.tl.mu.Unlock()
	r.tl.points.Restore(q.Timeline)
	return nil
}

func (s *stat) resume(p *results.QueryStat) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.executed += p.Executed
	s.ok += p.OK
	s.warnings += p.Warnings
	s.missed += p.Missed
	s.errors = results.AddCounts(s.errors, p.Errors)
	if p.ResultSeries != nil {
		s.resultSeries = *p.ResultSeries
	}
	if s.firstError == "" {
		s.firstError = p.FirstError
	}
	if err := s.lat.resume(p.LatencySeconds); err != nil {
		return err
	}
	return s.service.resume(p.ServiceSeconds)
}

// resume adds a checkpoint's latencies, kept as a histogram, to l.
func (l *latency) resume(from results.Latency) error {
	if from.Histogram == "" {
		return nil
	}
	h, err := hdrhistogram.Decode([]byte(from.Histogram))
	if err != nil {
		return fmt.Errorf("decode latency histogram: %w", err)
	}
	l.h.Merge(h)
	if from.Max != nil {
		l.max = max(l.max, time.Duration(*from.Max*float64(time.Second)))
	}
	return nil
}
