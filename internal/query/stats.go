package query

import (
	"maps"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tsbench/tsbench/internal/results"
)

// Histograms hold microseconds from 1 µs to 1 h; a longer latency is recorded as 1 h, and the
// exact maximum is kept beside. One hour is not a bound of queryTimeout's: latency runs from
// the scheduled time, and an evaluation may wait for a slot behind every other query, each
// up to queryTimeout (78 default queries, queryConcurrency 1, 30 s: up to 39 min).
//
// Latency, the headline figure, keeps 3 significant digits (relative error ≤ 0.1%, 184 KiB a
// histogram); service time, beside it, keeps 2 (≤ 1%, 26 KiB). With two per query, 3 digits
// for both took 28 MiB per storage for the default plan; this takes 16 MiB.
const (
	histMin           = 1
	histMax           = int64(time.Hour / time.Microsecond)
	latencyDigits     = 3
	serviceTimeDigits = 2
)

// latency is an HDR histogram of microseconds with its exact maximum.
type latency struct {
	h   *hdrhistogram.Histogram
	max time.Duration
}

func newLatency() latency { return latency{h: hdrhistogram.New(histMin, histMax, latencyDigits)} }

func newServiceTime() latency {
	return latency{h: hdrhistogram.New(histMin, histMax, serviceTimeDigits)}
}

func (l *latency) record(d time.Duration) {
	us := d.Microseconds()
	us = max(us, histMin)
	us = min(us, histMax)
	_ = l.h.RecordValue(us) // in range by construction
	l.max = max(l.max, d)
}

func (l *latency) reset() {
	l.h.Reset()
	l.max = 0
}

// report gives quantiles in seconds; a quantile is the highest value equivalent to its
// bucket, never above the exact maximum.
func (l *latency) report() results.Latency { return results.LatencyOf(l.h, l.max) }

func (l *latency) merge(o *latency) {
	l.h.Merge(o.h)
	l.max = max(l.max, o.max)
}

// stat is one query's account against one storage.
type stat struct {
	mu           sync.Mutex // guards every field below
	executed     int64
	ok           int64
	warnings     int64
	missed       int64
	errors       map[string]int64
	lat          latency // from the scheduled time
	service      latency // from the send
	resultSeries int64
	firstError   string
}

func newStat() *stat {
	return &stat{errors: map[string]int64{}, lat: newLatency(), service: newServiceTime()}
}

// outcome is what one evaluation gave.
type outcome struct {
	series   int64
	warnings int
	err      error
}

// snapshot copies the account into q's report entry.
func (s *stat) snapshot(q *Query) results.QueryStat {
	s.mu.Lock()
	defer s.mu.Unlock()
	var resultSeries *int64
	if s.ok > 0 {
		resultSeries = new(s.resultSeries)
	}
	return results.QueryStat{
		Name: q.Name, Kind: q.Kind, Expr: describe(q), Group: q.Group, IntervalSeconds: q.Interval.Seconds(),
		Executed: s.executed, OK: s.ok, Errors: maps.Clone(s.errors), Warnings: s.warnings, Missed: s.missed,
		LatencySeconds: s.lat.report(), ServiceSeconds: s.service.report(),
		ResultSeries: resultSeries, FirstError: s.firstError,
	}
}

// describe is the text a reader needs to rerun the query.
func describe(q *Query) string {
	switch q.Kind {
	case KindLabelValues:
		if q.Expr == "" {
			return q.Label
		}
		return q.Label + " of " + q.Expr
	default:
		return q.Expr
	}
}

// timeline keeps the storage's latency and errors per interval of completion time; a closed
// interval becomes a point, so memory stays one histogram however long the run. Beside it, the
// progress line's window: the latency since the line before.
type timeline struct {
	mu     sync.Mutex // guards every field below
	step   time.Duration
	end    time.Time // of the open interval; zero before the run starts
	lat    latency   // successful evaluations only
	errors int64
	done   int64                                // evaluations finished in the open interval, failed ones included
	points results.Timeline[results.QueryPoint] // bounded: a long run's points are merged
	recent latency                              // since the previous progress
}

func (t *timeline) start(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.end = now.Add(t.step)
}

// add records one finished evaluation at now.
func (t *timeline) add(now time.Time, d time.Duration, failed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.roll(now)
	t.done++
	if failed { // a refused connection is fast: its latency would flatter the storage
		t.errors++
		return
	}
	t.lat.record(d)
	t.recent.record(d)
}

// window returns the completions and p99 since the previous call and starts a new window.
func (t *timeline) window() (completed int64, p99 float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	completed = t.recent.h.TotalCount()
	if v := t.recent.report().P99; v != nil {
		p99 = *v
	}
	t.recent.reset()
	return completed, p99
}

// roll closes every interval that ended by now. Empty intervals become points with zeros, so
// a storage that stops answering shows as a gap of zero completions, not a missing stretch.
func (t *timeline) roll(now time.Time) {
	if t.end.IsZero() {
		return
	}
	for !now.Before(t.end) {
		l := t.lat.report()
		t.points.Add(results.QueryPoint{
			Time: t.end.UTC().Format(time.RFC3339), P50: l.P50, P99: l.P99, Errors: t.errors,
			Completed: t.done,
		})
		t.lat.reset()
		t.errors, t.done = 0, 0
		t.end = t.end.Add(t.step)
	}
}

func (t *timeline) snapshot(now time.Time) []results.QueryPoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.roll(now)
	return t.points.Points()
}
