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
	t    int64     // its timestamp, ms
	ack  time.Time // when its write was acknowledged
	miss time.Time // the start of the last query after ack that answered without it; zero: none
}

// poll is one scheduled ask for the sample of timestamp t.
type poll struct {
	at time.Time
	t  int64
}

// probe is one way of asking for the canary. It asks for every sample as many times as the
// schedule has polls, whether the sample has shown or not, so that a storage is asked as
// often as another whatever it shows when, at times its staircase places from where its
// latest samples showed; each answer counts for every sample still pending.
type probe struct {
	query string
	ask   ask
	exact bool // a sample is seen only when its own timestamp is returned, not a newer one
	step  time.Duration
	wake  chan struct{} // a new sample's polls were added

	mu           sync.Mutex // guards below
	stairs       staircase
	last         []time.Duration // the polls of the newest sample the end did not cut
	pending      []acked         // by t
	polls        []poll          // by at
	visible      int64
	neverVisible int64
	abandoned    int64 // pending at the checkpoint a resumed run continued from (resume.go)
	queries      int64
	merged       int64 // polls due while the previous query was in flight
	errors       map[string]int64
	firstErr     string
	h            *hdrhistogram.Histogram // ack → the first query that returned the sample
	lower        *hdrhistogram.Histogram // ack → the last query before it that did not
	longest      time.Duration
	longestLower time.Duration
	tl           timeline
}

func newProbe(q string, step time.Duration, stairs staircase, a ask) *probe {
	return &probe{
		query: q, ask: a, step: step, stairs: stairs, wake: make(chan struct{}, 1), errors: map[string]int64{},
		h: newHistogram(), lower: newHistogram(), tl: timeline{step: step},
	}
}

// acked schedules the polls of the sample t acked at at: at the ladder when the end of the
// run will cut them, else where the staircase places them.
func (p *probe) acked(t int64, at time.Time, cut bool) {
	p.mu.Lock()
	p.pending = append(p.pending, acked{t: t, ack: at})
	polls := p.stairs.ladder
	if !cut {
		polls = p.stairs.polls()
		p.last = polls
	}
	for _, d := range polls {
		pl := poll{at: at.Add(d), t: t}
		i, _ := slices.BinarySearchFunc(p.polls, pl, func(a, b poll) int { return a.at.Compare(b.at) })
		p.polls = slices.Insert(p.polls, i, pl)
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // a wake-up is already waiting
	}
}

// run makes the scheduled polls, one query at a time, until ctx ends.
func (p *probe) run(ctx context.Context, timeout time.Duration) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		var wait <-chan time.Time
		if len(p.polls) > 0 {
			timer.Reset(time.Until(p.polls[0].at))
			wait = timer.C
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
			continue
		case <-wait:
		}
		p.poll(ctx, time.Now(), timeout)
	}
}

// poll makes the polls due at now with one query: for the samples they are of, and every
// sample acked before now and not seen yet.
func (p *probe) poll(ctx context.Context, now time.Time, timeout time.Duration) {
	p.mu.Lock()
	n := 0
	for n < len(p.polls) && !p.polls[n].at.After(now) {
		n++
	}
	if n == 0 {
		p.mu.Unlock()
		return
	}
	due := p.polls[:n:n]
	p.polls = p.polls[n:]
	p.merged += int64(n - 1)
	// A sample is given up when a poll scheduled later than timeout after its ack falls due:
	// the poll's scheduled time, not now, so that a poll at the timeout itself still asks.
	p.expireLocked(due[0].at, timeout)
	ts := make([]int64, 0, len(p.pending)+n)
	for _, a := range p.pending {
		if a.ack.Before(now) {
			ts = append(ts, a.t)
		}
	}
	for _, pl := range due {
		ts = append(ts, pl.t) // a sample already seen is asked for as if it were not
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	p.mu.Unlock()
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

// seeLocked takes the samples acked before now that the answer seen shows out of pending,
// and notes the others as not seen at now.
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
		var lo time.Duration
		if !a.miss.IsZero() {
			lo = a.miss.Sub(a.ack)
		}
		_ = p.lower.RecordValue(lo.Microseconds())
		p.longestLower = max(p.longestLower, lo)
		p.stairs.seen(bracket{lo: lo, hi: d})
		p.visible++
		p.tl.add(now, d, false)
		return true
	})
	for i := range p.pending {
		if p.pending[i].ack.Before(now) {
			p.pending[i].miss = now
		}
	}
}

// expireLocked gives up the samples acked more than timeout before at.
func (p *probe) expireLocked(at time.Time, timeout time.Duration) {
	p.pending = slices.DeleteFunc(p.pending, func(a acked) bool {
		if at.Sub(a.ack) <= timeout {
			return false
		}
		p.neverVisible++
		p.tl.add(at, 0, true)
		return true
	})
}

func (p *probe) results() *results.FreshnessProbe {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &results.FreshnessProbe{
		Query: p.query, Visible: p.visible, NeverVisible: p.neverVisible, Pending: int64(len(p.pending)), Abandoned: p.abandoned,
		Queries: p.queries, MergedPolls: p.merged, FirstError: p.firstErr, Timeline: p.tl.snapshot(),
	}
	if p.h.TotalCount() > 0 {
		r.Seconds = results.LatencyOf(p.h, p.longest)
		r.LowerBoundSeconds = results.LowerBoundOf(p.lower, p.longestLower)
	}
	if len(p.errors) > 0 {
		r.Errors = p.errors
	}
	for _, d := range p.last {
		r.LastPollSeconds = append(r.LastPollSeconds, d.Seconds())
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
