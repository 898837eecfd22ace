package freshness

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
)

// ask runs one query at now and returns the canary timestamps it saw; pending are the
// timestamps still looked for (ascending).
type ask func(ctx context.Context, now time.Time, pending []int64) ([]int64, error)

// acked is a canary sample waiting to be seen.
type acked struct {
	t   int64     // its timestamp, ms
	ack time.Time // when its write was acknowledged
}

// probe is one way of asking for the canary. It asks only while a sample is pending: a
// storage that shows a sample at once costs one query per write.
type probe struct {
	query string
	ask   ask
	exact bool // a sample is seen only when its own timestamp is returned, not a newer one
	step  time.Duration

	mu           sync.Mutex // guards below
	pending      []acked    // by t
	visible      int64
	neverVisible int64
	abandoned    int64 // pending at the checkpoint a resumed run continued from (resume.go)
	queries      int64
	errors       map[string]int64
	firstErr     string
	h            *hdrhistogram.Histogram
	longest      time.Duration
	tl           timeline
}

func newProbe(q string, step time.Duration, a ask) *probe {
	return &probe{query: q, ask: a, step: step, errors: map[string]int64{}, h: newHistogram(), tl: timeline{step: step}}
}

func (p *probe) acked(t int64, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = append(p.pending, acked{t: t, ack: at})
}

// run asks every interval, on a schedule anchored at its start, until ctx ends.
func (p *probe) run(ctx context.Context, interval, timeout time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.poll(ctx, time.Now(), timeout)
	}
}

// poll asks once at now for the samples acked before now, if any.
func (p *probe) poll(ctx context.Context, now time.Time, timeout time.Duration) {
	p.mu.Lock()
	p.expireLocked(now, timeout)
	var ts []int64
	for _, a := range p.pending {
		if a.ack.Before(now) {
			ts = append(ts, a.t)
		}
	}
	p.mu.Unlock()
	if len(ts) == 0 {
		return
	}
	seen, err := p.ask(ctx, now, ts)
	if ctx.Err() != nil {
		return // the run ended during the query: it counts for nothing
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queries++
	if err != nil {
		kind := query.ErrorKind(err)
		p.errors[kind]++
		if p.firstErr == "" {
			p.firstErr = err.Error()
		}
		return
	}
	p.seeLocked(now, seen)
}

// seeLocked takes the samples acked before now that the answer seen shows out of pending.
func (p *probe) seeLocked(now time.Time, seen []int64) {
	newest := int64(-1 << 63)
	for _, t := range seen {
		newest = max(newest, t)
	}
	p.pending = slices.DeleteFunc(p.pending, func(a acked) bool {
		if !a.ack.Before(now) {
			return false
		}
		if p.exact && !slices.Contains(seen, a.t) || !p.exact && newest < a.t {
			return false
		}
		d := now.Sub(a.ack)
		_ = p.h.RecordValue(max(1, d.Microseconds()))
		p.longest = max(p.longest, d)
		p.visible++
		p.tl.add(now, d, false)
		return true
	})
}

// expireLocked gives up the samples acked more than timeout before now.
func (p *probe) expireLocked(now time.Time, timeout time.Duration) {
	p.pending = slices.DeleteFunc(p.pending, func(a acked) bool {
		if now.Sub(a.ack) <= timeout {
			return false
		}
		p.neverVisible++
		p.tl.add(now, 0, true)
		return true
	})
}

func (p *probe) results() *results.FreshnessProbe {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &results.FreshnessProbe{
		Query: p.query, Visible: p.visible, NeverVisible: p.neverVisible, Pending: int64(len(p.pending)), Abandoned: p.abandoned,
		Queries: p.queries, FirstError: p.firstErr, Timeline: p.tl.snapshot(),
	}
	if p.h.TotalCount() > 0 {
		r.Seconds = results.LatencyOf(p.h, p.longest)
	}
	if len(p.errors) > 0 {
		r.Errors = p.errors
	}
	return r
}

// timeline keeps one point per step: the samples seen in it, their median and largest
// freshness, and the samples given up in it. Steps with nothing are left out; a long run's
// points are merged two by two (results.Timeline).
type timeline struct {
	step   time.Duration
	end    time.Time // of the open step; zero before the first event
	h      *hdrhistogram.Histogram
	max    time.Duration
	given  int64
	points results.Timeline[results.FreshnessPoint] // bounded however long the run
}

func (t *timeline) add(now time.Time, d time.Duration, gaveUp bool) {
	if t.h == nil {
		t.h = newHistogram()
	}
	if t.end.IsZero() {
		t.end = now.Truncate(t.step).Add(t.step)
	}
	if !now.Before(t.end) {
		t.close()
		t.end = now.Truncate(t.step).Add(t.step)
	}
	if gaveUp {
		t.given++
		return
	}
	_ = t.h.RecordValue(max(1, d.Microseconds()))
	t.max = max(t.max, d)
}

func (t *timeline) close() {
	if t.h == nil || t.h.TotalCount() == 0 && t.given == 0 {
		return
	}
	t.points.Add(t.point())
	t.h.Reset()
	t.max, t.given = 0, 0
}

func (t *timeline) snapshot() []results.FreshnessPoint {
	out := t.points.Points()
	if t.h != nil && (t.h.TotalCount() > 0 || t.given > 0) {
		out = append(out, t.point())
	}
	return out
}

// point is the open step's point.
func (t *timeline) point() results.FreshnessPoint {
	pt := results.FreshnessPoint{Time: t.end.UTC().Format(time.RFC3339), Visible: t.h.TotalCount(), NeverVisible: t.given}
	if t.h.TotalCount() > 0 {
		l := results.LatencyOf(t.h, t.max)
		pt.P50, pt.Max = l.P50, l.Max
	}
	return pt
}
