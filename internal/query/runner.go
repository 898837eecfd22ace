package query

import (
	"container/heap"
	"context"
	"hash/fnv"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// Runner runs the plan against one storage on an open-model schedule.
//
// Query q's evaluations are scheduled at start + offset(q) + k·interval(q), k = 0, 1, …; the
// offset is a hash of the storage's name and q's, so the load is spread over the interval the
// same way in every run, and each storage gets a query at a phase of its own: with one phase
// for all, the storage whose runner started first got every query a moment before the others,
// and on a starved machine answered faster by that alone (an A/A run of two identical
// storages once ranked "a" best on every latency row). At its scheduled time an evaluation either starts or, when the
// previous evaluation of the same query is still waiting or running, is counted missed: no
// query ever has two evaluations at once, and none is ever delayed into the next slot.
//
// A started evaluation waits for one of queryConcurrency slots (like a ruler's concurrency
// limit); a rule of a group with a concurrency first waits for one of its group's slots
// (vmalert's group concurrency), holding no storage-wide slot meanwhile. The wait is part of
// its latency, since latency runs from the scheduled time: a storage that answers slowly makes
// the queue, and the queue shows in the figures instead of slowing the schedule (no
// coordinated omission). At most one evaluation per query waits, so the queue is bounded by
// the number of queries.
type Runner struct {
	storage string
	plan    *Plan
	api     *API
	// apis[i] is query i's client: api, or a copy that sends its group's params and headers.
	apis    []*API
	timeout time.Duration
	log     *slog.Logger
	m       *Metrics
	slots   chan struct{}
	// groupSlots[i] is query i's group's slots, shared by the group's queries; nil when the
	// group sets no concurrency.
	groupSlots []chan struct{}

	stats []*stat
	busy  []atomic.Bool // busy[i]: query i has an evaluation waiting or running
	tl    *timeline

	// earlyWake: see the constant. Tests in a synctest bubble set it to 0: there, time
	// stands still while a goroutine yields, so the last stretch would never pass.
	earlyWake time.Duration
}

// New returns a Runner of plan against storage's API at readURL, through client. The client is
// the runner's own, sized for queryConcurrency: a query must never wait for a connection that
// another part of tsbench holds, since the wait would count as the storage's. Run closes its
// idle connections when it returns.
func New(cfg *config.Config, plan *Plan, storage string, client *storage.Client, readURL string, logger *slog.Logger, m *Metrics) *Runner {
	r := &Runner{
		storage:   storage,
		plan:      plan,
		api:       NewAPI(client, readURL),
		timeout:   cfg.QueryTimeout,
		log:       logger.With("component", "query", "storage", storage),
		m:         m,
		slots:     make(chan struct{}, max(cfg.QueryConcurrency, 1)),
		stats:     make([]*stat, len(plan.Queries)),
		busy:      make([]atomic.Bool, len(plan.Queries)),
		tl:        &timeline{step: max(cfg.ObserveInterval, time.Second), lat: newLatency(), recent: newLatency()},
		earlyWake: earlyWake,
	}
	for i := range r.stats {
		r.stats[i] = newStat()
	}
	r.apis = make([]*API, len(plan.Queries))
	for i, q := range plan.Queries {
		r.apis[i] = r.api
		if len(q.Params) > 0 || len(q.Header) > 0 {
			r.apis[i] = r.api.With(q.Params, q.Header)
		}
	}
	r.groupSlots = make([]chan struct{}, len(plan.Queries))
	byGroup := map[string]chan struct{}{}
	for i, q := range plan.Queries {
		if q.GroupConcurrency <= 0 {
			continue
		}
		if byGroup[q.Group] == nil {
			byGroup[q.Group] = make(chan struct{}, q.GroupConcurrency)
		}
		r.groupSlots[i] = byGroup[q.Group]
	}
	return r
}

// earlyWake is how much before an evaluation's scheduled time the scheduler's timer fires;
// it then yields until the time comes. A Go timer can fire up to a millisecond late (the
// poller waits in whole milliseconds), and that delay would count in every latency.
const earlyWake = 2 * time.Millisecond

// offset spreads a storage's queries over their interval, stably: the same storage and query
// names get the same offset.
func offset(storage, name string, interval time.Duration) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(storage))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(name))
	return time.Duration(h.Sum64() % uint64(interval))
}

// Run evaluates the plan until ctx is done, then waits for the requests in flight (each
// bounded by queryTimeout) and returns nil. Evaluations still waiting for a slot when ctx ends
// are never sent and are counted missed.
func (r *Runner) Run(ctx context.Context) error {
	defer r.api.client.Close() // deferred first, so it runs after wg.Wait: nothing in flight
	for _, q := range r.plan.Queries {
		if q.ParseError != "" {
			r.log.Warn("query expression does not parse, sent anyway", "query", q.Name, "group", q.Group, "err", q.ParseError)
		}
	}
	if len(r.plan.Queries) == 0 {
		<-ctx.Done()
		return nil
	}
	start := time.Now()
	r.tl.start(start)
	var wg sync.WaitGroup
	defer wg.Wait()

	sched := make(schedule, len(r.plan.Queries))
	for i, q := range r.plan.Queries {
		sched[i] = tick{at: start.Add(offset(r.storage, q.Name, q.Interval)), query: i}
	}
	heap.Init(&sched)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := sched[0]
		timer.Reset(time.Until(next.at) - r.earlyWake)
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		spinUntil(next.at)
		sched[0].at = next.at.Add(r.plan.Queries[next.query].Interval)
		heap.Fix(&sched, 0)
		i, at := next.query, next.at
		if !r.busy[i].CompareAndSwap(false, true) {
			r.miss(i)
			continue
		}
		wg.Go(func() {
			defer r.busy[i].Store(false)
			r.evaluate(ctx, i, at)
		})
	}
}

// spinUntil yields until at: the last stretch, which a timer may overshoot. Where the clock
// stands still between two readings, as in a synctest bubble (where it moves only when every
// goroutine waits), it sleeps the rest instead, which is exact there.
func spinUntil(at time.Time) {
	var last time.Time
	for now := time.Now(); now.Before(at); now = time.Now() {
		if now.Equal(last) {
			time.Sleep(at.Sub(now))
			return
		}
		last = now
		runtime.Gosched()
	}
}

// evaluate waits for a slot of its group (if it has a concurrency) and one of the storage's,
// sends query i scheduled at at, and records the outcome.
func (r *Runner) evaluate(ctx context.Context, i int, at time.Time) {
	if group := r.groupSlots[i]; group != nil {
		select {
		case group <- struct{}{}:
		case <-ctx.Done():
			r.miss(i)
			return
		}
		defer func() { <-group }()
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		r.miss(i)
		return
	}
	defer func() { <-r.slots }()
	if ctx.Err() != nil { // both were ready: the run is over, do not start anything new
		r.miss(i)
		return
	}
	// The request outlives the run's ctx so that a started query is always accounted; its own
	// deadline, queryTimeout from the send, bounds the wait at shutdown.
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	defer cancel()
	sent := time.Now()
	out := r.send(qctx, r.apis[i], &r.plan.Queries[i], at)
	done := time.Now()
	r.record(i, at, sent, done, out)
}

// send runs one evaluation of q scheduled at at, through api.
func (r *Runner) send(ctx context.Context, api *API, q *Query, at time.Time) outcome {
	var matchers []string
	if q.Expr != "" && q.Kind != KindInstant && q.Kind != KindRange {
		matchers = []string{q.Expr}
	}
	switch q.Kind {
	case KindInstant:
		res, err := api.Instant(ctx, q.Expr, at.Add(-q.TimeOffset))
		if err != nil {
			return outcome{err: err}
		}
		return outcome{series: int64(len(res.Series)), warnings: len(res.Warnings)}
	case KindRange:
		// Dashboards align the range to the step so that consecutive refreshes share points.
		end := at.Truncate(q.Step)
		res, err := api.Range(ctx, q.Expr, end.Add(-q.Range), end, q.Step)
		if err != nil {
			return outcome{err: err}
		}
		return outcome{series: int64(len(res.Series)), warnings: len(res.Warnings)}
	case KindSeries:
		res, err := api.SeriesLookup(ctx, matchers, at.Add(-q.Window), at)
		if err != nil {
			return outcome{err: err}
		}
		return outcome{series: int64(len(res.Series)), warnings: len(res.Warnings)}
	case KindLabels:
		res, err := api.Labels(ctx, matchers, at.Add(-q.Window), at)
		if err != nil {
			return outcome{err: err}
		}
		return outcome{series: int64(len(res.Names)), warnings: len(res.Warnings)}
	default: // KindLabelValues
		res, err := api.LabelValues(ctx, q.Label, matchers, at.Add(-q.Window), at)
		if err != nil {
			return outcome{err: err}
		}
		return outcome{series: int64(len(res.Names)), warnings: len(res.Warnings)}
	}
}

func (r *Runner) record(i int, at, sent, done time.Time, out outcome) {
	q := &r.plan.Queries[i]
	lat := done.Sub(at)
	s := r.stats[i]
	s.mu.Lock()
	s.executed++
	if out.err == nil { // latency is over the successful evaluations; errors are counted apart
		s.lat.record(lat)
		s.service.record(done.Sub(sent))
	}
	first := false
	var kind string
	if out.err != nil {
		kind = ErrorKind(out.err)
		s.errors[kind]++
		if s.firstError == "" {
			s.firstError, first = out.err.Error(), true
		}
	} else {
		s.ok++
		s.resultSeries = out.series
		if out.warnings > 0 {
			s.warnings++
		}
	}
	s.mu.Unlock()
	r.tl.add(done, lat, out.err != nil)
	r.m.executed.WithLabelValues(r.storage, q.Kind, q.Name).Inc()
	r.m.duration.WithLabelValues(r.storage, q.Kind, q.Name).Observe(lat.Seconds())
	switch {
	case out.err != nil:
		r.m.errors.WithLabelValues(r.storage, q.Kind, q.Name, kind).Inc()
	case out.warnings > 0:
		r.m.warnings.WithLabelValues(r.storage, q.Kind, q.Name).Inc()
	}
	if first { // once per query: the hot path counts, the log shows the first occurrence
		r.log.Warn("query error", "query", q.Name, "kind", q.Kind, "reason", kind, "err", out.err)
	}
}

func (r *Runner) miss(i int) {
	s := r.stats[i]
	s.mu.Lock()
	s.missed++
	s.mu.Unlock()
	q := &r.plan.Queries[i]
	r.m.missed.WithLabelValues(r.storage, q.Kind, q.Name).Inc()
}

// Results returns a snapshot of the storage's read account; safe while Run runs.
func (r *Runner) Results() *results.Query {
	res := &results.Query{Errors: map[string]int64{}, PerQuery: make([]results.QueryStat, len(r.stats))}
	all, service := newLatency(), newServiceTime()
	for i, s := range r.stats {
		qs := s.snapshot(&r.plan.Queries[i])
		res.PerQuery[i] = qs
		res.Executed += qs.Executed
		res.OK += qs.OK
		res.Warnings += qs.Warnings
		res.Missed += qs.Missed
		res.Errors = results.AddCounts(res.Errors, qs.Errors)
		s.mu.Lock()
		all.merge(&s.lat)
		service.merge(&s.service)
		s.mu.Unlock()
	}
	res.LatencySeconds = all.report()
	res.ServiceSeconds = service.report()
	res.Timeline = r.tl.snapshot(time.Now())
	return res
}

// Progress is the read path as the progress line shows it.
type Progress struct {
	Completed int64   // evaluations completed successfully since the previous call
	P99       float64 // their latency's p99 in seconds; 0 when none completed
	Errors    int64   // errors since the start
}

// Progress returns the p99 of the evaluations completed since its previous call (or the
// start), so that a storage that degrades late shows at once, and the errors so far. Each call
// starts a new window: the progress line is its one caller. Results keeps the cumulative
// figures.
func (r *Runner) Progress() Progress {
	var p Progress
	p.Completed, p.P99 = r.tl.window()
	for _, s := range r.stats {
		s.mu.Lock()
		for _, n := range s.errors {
			p.Errors += n
		}
		s.mu.Unlock()
	}
	return p
}

// tick is the next scheduled evaluation of one query.
type tick struct {
	at    time.Time
	query int
}

// schedule is a min-heap of ticks by time, then query index (a stable order for equal times).
type schedule []tick

func (s schedule) Len() int { return len(s) }
func (s schedule) Less(i, j int) bool {
	if !s[i].at.Equal(s[j].at) {
		return s[i].at.Before(s[j].at)
	}
	return s[i].query < s[j].query
}
func (s schedule) Swap(i, j int) { s[i], s[j] = s[j], s[i] }
func (s *schedule) Push(x any)   { *s = append(*s, x.(tick)) }
func (s *schedule) Pop() any {
	old := *s
	t := old[len(old)-1]
	*s = old[:len(old)-1]
	return t
}
