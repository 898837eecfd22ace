// Package freshness measures how soon a storage lets a query see a sample it acknowledged
// (issue 21): it writes canary series of its own to each storage and asks for them in three
// ways (an instant query, a range query over the last 5 minutes, /api/v1/series).
//
// Every storage is asked the same number of times per sample, whatever it shows when (issue
// 29, item 8): each probe asks for each sample PollsPerSample times after its ack and keeps
// asking after the sample has shown. Polling until a sample shows, as tsbench did before,
// asked a storage that shows samples a second late ten times as often as one that shows them
// at once (29.8 against 3.0 queries/s), and that load moved the query latency the run
// reported by 11 to 19 %. A probe's first sample is asked for at the schedule's ladder, polls
// spaced geometrically from freshness.interval to the write interval (Schedule), which places
// a delay within a factor of 2.3; each later one at the ladder's ends and, between them,
// where the probe's latest samples showed (staircase, issue 37 item 6), which places a steady
// delay to a tenth of itself or 0.2 s from the third sample on. Each figure is stated with the
// poll before it (lowerBoundSeconds), so the resolution bought is in the results. With
// freshness.writeInterval 0, the default, samples are written as seldom as keeps the canary's
// queries at a tenth of the workload's own read load: at the default workload (6.2
// queries/s) a sample every 38.7 s, 24 queries per sample, 0.62 queries/s.
//
// Invariant: every acked canary sample lands, per probe, in exactly one of visible (with the
// time from its ack to the start of the first query made after the ack that returned it, and
// of the last one before it that did not), never visible (not returned by a query scheduled
// within freshness.timeout), pending (younger than the timeout at the end) or abandoned
// (pending at a resumed run's checkpoint). Each probe makes at most len(Schedule.Polls)
// queries per sample, exactly that many unless the run ended first or a poll fell due while
// the previous query was in flight (merged into one). The canary is apart from the workload:
// its own metric names and `canary` label, outside the write account, the read-back and the
// query load.
package freshness

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// The canary's metric names. A sample's value is its own timestamp in milliseconds (exact in
// a float64), so an answer says which sample it is, whatever else the storage holds.
const (
	MetricName = "tsbench_canary"
	// SeriesMetricName gets a new series per sample (label canary_ts): the index probe.
	SeriesMetricName = "tsbench_canary_series"
	// Job is the canary's job label, apart from the workload's.
	Job = "tsbench_canary"
)

// rangeWindow and rangeStep are the range probe's: a dashboard's "last 5 minutes" at
// Grafana's smallest default step. start = now − 5m makes end a step of the grid, so the
// newest point is evaluated at now.
const (
	rangeWindow = 5 * time.Minute
	rangeStep   = 15 * time.Second
)

// Writer sends canary samples; remotewrite.Canary in a run.
type Writer interface {
	// Write sends one sample per label set and returns the storage's HTTP status (0 when
	// none came) and, for anything but a 2xx, an error.
	Write(ctx context.Context, series [][]workload.Label, t int64, v float64) (status int, err error)
}

// Prober runs the canary of one storage.
type Prober struct {
	name   string
	cfg    config.Freshness
	sched  Schedule
	load   float64 // the workload's read load, queries/s
	w      Writer
	api    *query.API
	log    *slog.Logger
	probes []*probe // instant, range, series

	mu       sync.Mutex // guards the write counts
	written  int64
	acked    int64
	wErrors  map[string]int64
	firstErr string
	began    time.Time
	ended    time.Time
	before   time.Duration // the polling time of the run a resumed one continues (resume.go)
}

// New makes the prober of storage name on the schedule of cfg for a workload reading readLoad
// queries/s (NewSchedule): canary samples go through w, queries through api; step is the
// timeline's interval (observeInterval).
func New(name string, cfg config.Freshness, readLoad float64, w Writer, api *query.API, step time.Duration, logger *slog.Logger) *Prober {
	p := &Prober{
		name: name, cfg: cfg, sched: NewSchedule(cfg, readLoad), load: readLoad, w: w, api: api, wErrors: map[string]int64{},
		log: logger.With("component", "freshness", "storage", name),
	}
	sel := `{__name__="` + MetricName + `",canary=` + strconv.Quote(name) + `}`
	stairs := staircase{ladder: p.sched.Polls, interval: cfg.Interval} // each probe places its own
	p.probes = []*probe{
		newProbe(sel, step, stairs, p.instant),
		newProbe(sel+"["+rangeWindow.String()+"] every "+rangeStep.String(), step, stairs, p.rangeQuery),
		newProbe(`{__name__="`+SeriesMetricName+`",canary=`+strconv.Quote(name)+`,canary_ts=~"…"}`, step, stairs, p.seriesLookup),
	}
	p.probes[2].exact = true
	return p
}

// labels are the canary's series for a sample at t, sorted by name as remote write requires.
func (p *Prober) labels(t int64) [][]workload.Label {
	return [][]workload.Label{
		{{Name: "__name__", Value: MetricName}, {Name: "canary", Value: p.name}, {Name: "instance", Value: p.name}, {Name: "job", Value: Job}},
		{
			{Name: "__name__", Value: SeriesMetricName},
			{Name: "canary", Value: p.name},
			{Name: "canary_ts", Value: strconv.FormatInt(t, 10)},
			{Name: "instance", Value: p.name},
			{Name: "job", Value: Job},
		},
	}
}

// Schedule is when the prober writes and asks.
func (p *Prober) Schedule() Schedule { return p.sched }

// Run writes and polls until ctx ends.
func (p *Prober) Run(ctx context.Context) error {
	p.mu.Lock()
	p.began = time.Now()
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, pr := range p.probes {
		wg.Go(func() { pr.run(ctx, p.cfg.Timeout) })
	}
	// The first sample goes one write interval after the start, not at it: the observer's
	// first look at a storage's ingestion counters, the baseline of resources.ingestedSamples,
	// is made at the start, and the canary's samples are to be all after it; and at most
	// elapsed/Write samples have been written at any time, so the load never exceeds the
	// schedule's, however short the run.
	t := time.NewTicker(p.sched.Write)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			p.mu.Lock()
			p.ended = time.Now()
			p.mu.Unlock()
			return nil
		case <-t.C:
		}
		if ctx.Err() == nil { // both ready: the end wins
			p.write(ctx)
		}
	}
}

// lastWriteTimeout bounds a canary write the end of the run would otherwise cut short.
const lastWriteTimeout = 10 * time.Second

// write sends one canary sample at now and hands its ack to every probe. The end of the run
// does not cancel a write under way: the storage may already have stored it, and a sample
// stored but counted neither acked nor failed would make the storage's ingestion counter hold
// one the account does not. A storage that hangs delays the end by lastWriteTimeout at most.
func (p *Prober) write(ctx context.Context) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lastWriteTimeout)
	defer cancel()
	ts := time.Now().UnixMilli()
	status, err := p.w.Write(wctx, p.labels(ts), ts, float64(ts))
	ack := time.Now()
	p.mu.Lock()
	p.written++
	if err != nil {
		kind := query.ErrNetwork
		if status != 0 {
			kind = "http_" + strconv.Itoa(status)
		}
		p.wErrors[kind]++
		if p.firstErr == "" {
			p.firstErr = err.Error()
			p.log.Warn("canary write failed; freshness counts only acked samples", "err", err)
		}
		p.mu.Unlock()
		return
	}
	p.acked++
	p.mu.Unlock()
	// A sample whose polls the end of the run will cut is asked for at the ladder on every
	// storage, not where each storage's latest samples showed: the end cuts the same polls
	// everywhere, and the queries each storage got stay equal.
	end, ok := ctx.Deadline()
	cut := ok && ack.Add(p.sched.Polls[len(p.sched.Polls)-1]).After(end)
	for _, pr := range p.probes {
		pr.acked(ts, ack, cut)
	}
}

// instant returns the timestamp of the newest canary sample an instant query at now sees.
func (p *Prober) instant(ctx context.Context, now time.Time, _ []int64) ([]int64, error) {
	res, err := p.api.Instant(ctx, p.probes[0].query, now)
	if err != nil {
		return nil, err
	}
	return values(res), nil
}

// rangeQuery returns the canary samples a range query over the last 5 minutes sees.
func (p *Prober) rangeQuery(ctx context.Context, now time.Time, _ []int64) ([]int64, error) {
	res, err := p.api.Range(ctx, p.probes[0].query, now.Add(-rangeWindow), now, rangeStep)
	if err != nil {
		return nil, err
	}
	return values(res), nil
}

// seriesLookup returns which of the pending samples' series /api/v1/series finds.
func (p *Prober) seriesLookup(ctx context.Context, now time.Time, pending []int64) ([]int64, error) {
	alts := make([]string, len(pending))
	for i, t := range pending {
		alts[i] = strconv.FormatInt(t, 10)
	}
	m := `{__name__="` + SeriesMetricName + `",canary=` + strconv.Quote(p.name) + `,canary_ts=~"` + strings.Join(alts, "|") + `"}`
	res, err := p.api.SeriesLookup(ctx, []string{m}, time.UnixMilli(slices.Min(pending)).Add(-time.Minute), now)
	if err != nil {
		return nil, err
	}
	var seen []int64
	for _, s := range res.Series {
		if t, err := strconv.ParseInt(s["canary_ts"], 10, 64); err == nil {
			seen = append(seen, t)
		}
	}
	return seen, nil
}

// values are the canary timestamps an answer holds: every point's value.
func values(res *query.Result) []int64 {
	var ts []int64
	for _, s := range res.Series {
		for _, pt := range s.Points {
			ts = append(ts, int64(pt.V))
		}
	}
	return ts
}

// Results is the storage's freshness section, at the end of Run.
func (p *Prober) Results() *results.Freshness {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := &results.Freshness{
		IntervalSeconds: p.cfg.Interval.Seconds(), WriteIntervalSeconds: p.sched.Write.Seconds(), ReadLoadQueriesPerSecond: p.load,
		Written: p.written, Acked: p.acked, FirstWriteError: p.firstErr, AckedSamples: p.acked * int64(len(p.labels(0))),
	}
	for _, d := range p.sched.Polls {
		f.PollSeconds = append(f.PollSeconds, d.Seconds())
	}
	if len(p.wErrors) > 0 {
		f.WriteErrors = p.wErrors
	}
	var queries int64
	probes := make([]*results.FreshnessProbe, len(p.probes))
	for i, pr := range p.probes {
		probes[i] = pr.results()
		queries += probes[i].Queries
	}
	f.Instant, f.Range, f.Series = probes[0], probes[1], probes[2]
	if d := (p.ended.Sub(p.began) + p.before).Seconds(); d > 0 {
		f.QueriesPerSecond = float64(queries) / d
	}
	return f
}

// histogram bounds, microseconds: 1µs to 1h at 3 significant digits.
func newHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(1, 3_600_000_000, 3) }
