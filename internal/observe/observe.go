// Package observe samples what each storage uses — CPU, RSS, disk, disk IO, samples ingested
// by its own count — and tsbench's own CPU and RSS, every interval of the run.
//
// Invariant: a figure no source gives whole is unknown (nil, with a reason), never zero or
// a part passed off as the whole (a disk size without the WAL, a cluster sum without a
// component); a source that fails is logged once and the run goes on.
package observe

import (
	"context"
	"log/slog"
	"net/http"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// Target is one storage to observe.
type Target struct {
	Name        string
	PID         int             // 0: no local process; else read /proc/PID
	DataDir     string          // "": none; else walk it for disk bytes (hard links once)
	MetricsURLs []string        // its own /metrics pages; several (a cluster's components) are added up
	Client      *storage.Client // for /metrics and snapshots (auth, TLS); nil: a plain client, 10 s timeout
	BaseURL     string          // HTTP root for the snapshot APIs (the readURL); "": no snapshot
	Kind        storage.Kind    // "": guessed from its metrics
}

// Options configure an Observer.
type Options struct {
	Interval   time.Duration // default 10s
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: no metrics
	ProcRoot   string                // default /proc
	// Writes gives tsbench's own count of what each storage acknowledged (a
	// *remotewrite.Writer): the divisor of every bytes-per-sample figure, read at each
	// observation. It is the only way the write account reaches observe. nil: nothing acked.
	Writes interface {
		Acked(storage string) int64
	}
	// SlopeAfter is how long after the first observation tsbench's heap and RSS slopes
	// start (Generator): the warm-up fills caches and pools. Default 10m.
	SlopeAfter time.Duration
}

// Observer samples every target, and tsbench itself, over the run.
type Observer struct {
	opts    Options
	targets []*observed
	self    *tracker
	selfTL  results.Timeline[results.ResourcePoint]
	// selfPrior is what the checkpoint resumed from said of tsbench (resume.go).
	selfPrior *prior
	m         *metrics

	mu      sync.Mutex // guards selfTL, loadEnd and every observed's hist, sums, caught, timeline and snapshot
	loadEnd time.Time  // zero while the load runs
}

// observed is one storage: a /proc source and one source per /metrics URL.
type observed struct {
	Target
	client doer
	log    *slog.Logger
	proc   *tracker
	comps  []*tracker // per metrics URL
	// hist is every observation of the storage, sources merged; sums the components'
	// observations added up, beside /proc's (the crosscheck). Guarded by Observer.mu.
	hist, sums history
	// caught is the summary at the first observation after the storage caught up with its
	// history (HistoryResources); nil before.
	caught   *summary
	prior    *prior // the checkpoint resumed from (resume.go); nil for a fresh run
	timeline results.Timeline[results.ResourcePoint]
	snapshot snapshotResult
}

// New builds an Observer of targets.
func New(opts Options, targets []Target) *Observer {
	if opts.Interval <= 0 {
		opts.Interval = 10 * time.Second
	}
	if opts.SlopeAfter <= 0 {
		opts.SlopeAfter = 10 * time.Minute
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	o := &Observer{opts: opts, m: newMetrics(opts.Registerer)}
	log := opts.Logger.With("component", "observe")
	o.self = newTracker("tsbench", opts.ProcRoot+"/self", procSource{root: opts.ProcRoot, self: true}, log.With("storage", "tsbench"))
	for _, t := range targets {
		if t.BaseURL != "" && !strings.HasSuffix(t.BaseURL, "/") {
			t.BaseURL += "/" // a readURL may be given without its slash, as query.NewAPI takes it
		}
		ob := &observed{Target: t, log: log.With("storage", t.Name)}
		ob.client = t.Client
		if t.Client == nil {
			ob.client = &http.Client{Timeout: 10 * time.Second}
		}
		if t.PID != 0 || t.DataDir != "" {
			where := opts.ProcRoot + "/" + strconv.Itoa(t.PID)
			if t.PID == 0 {
				where = t.DataDir
			}
			ob.proc = newTracker(t.Name, where, procSource{root: opts.ProcRoot, pid: t.PID, dataDir: t.DataDir}, ob.log)
		}
		for _, u := range t.MetricsURLs {
			ob.comps = append(ob.comps, newTracker(t.Name, config.RedactURL(u), metricsSource{url: u, client: ob.client}, ob.log))
		}
		o.targets = append(o.targets, ob)
	}
	return o
}

// Run collects at once, then every Interval until ctx ends, then once more, and returns nil.
func (o *Observer) Run(ctx context.Context) error {
	t := time.NewTicker(o.opts.Interval)
	defer t.Stop()
	for {
		o.collect(context.WithoutCancel(ctx), time.Now())
		select {
		case <-ctx.Done():
			o.collect(context.WithoutCancel(ctx), time.Now())
			return nil
		case <-t.C:
		}
	}
}

// LoadEnded marks the end of the load: the summary figures cover the observations up to it
// (the timeline goes on to the end of the run).
func (o *Observer) LoadEnded(at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.loadEnd = at
}

// collect takes one sample of every target and of tsbench.
func (o *Observer) collect(ctx context.Context, now time.Time) {
	o.mu.Lock()
	end := o.loadEnd
	o.mu.Unlock()
	var wg sync.WaitGroup
	for _, ob := range o.targets {
		wg.Go(func() {
			r, sum := ob.observe(ctx, now, end)
			r.acked = o.acked(ob.Name)
			caughtUp := o.caughtUpAt(ob.Name)
			o.mu.Lock()
			ob.hist.add(r, end)
			if sum != nil {
				ob.sums.add(*sum, end)
			}
			if ob.caught == nil && !caughtUp.IsZero() && !r.at.Before(caughtUp) {
				ob.caught = new(ob.hist.summary(caughtUp))
			}
			p := r.point()
			// The disk growth since the first observation, before the load, over what was
			// acked by now: nil while either is unknown (results.json has the reason).
			p.BytesPerSample, _ = perSample(diff(r.disk, ob.firstDisk()), r.acked, "")
			p.AckedSamples = r.acked
			ob.timeline.Add(p)
			o.mu.Unlock()
			o.m.set(ob.Name, p)
		})
	}
	self := o.self.observe(ctx, now, end).point()
	self.HeapLiveBytes = HeapLive()
	o.m.setSelf(self)
	wg.Wait()
	o.mu.Lock()
	o.selfTL.Add(self)
	o.mu.Unlock()
}

// caughtUpAt is when the storage caught up with its history, where Options.Writes tells.
func (o *Observer) caughtUpAt(name string) time.Time {
	if w, ok := o.opts.Writes.(interface{ CaughtUpAt(string) time.Time }); ok {
		return w.CaughtUpAt(name)
	}
	return time.Time{}
}

// HeapLive is this process's live heap after the last GC (runtime/metrics): unlike RSS or the
// heap in use, it does not saw-tooth with the collector, so its slope shows a leak.
func HeapLive() *float64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return nil
	}
	return new(float64(s[0].Value.Uint64()))
}

// acked is how many samples the storage has acked so far by tsbench's count.
func (o *Observer) acked(name string) int64 {
	if o.opts.Writes == nil {
		return 0
	}
	return o.opts.Writes.Acked(name)
}

// diff is a - b, or nil when either is unknown.
func diff(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	v := *a - *b
	return &v
}

// observe samples every source of the storage and merges them: /proc wins where it gives a
// figure, the /metrics pages (added up) give the rest. With both, sum is the pages' sum.
func (ob *observed) observe(ctx context.Context, now, loadEnd time.Time) (r rates, sum *rates) {
	if ob.proc == nil && len(ob.comps) == 0 {
		r := rates{at: now, missing: map[string]string{}}
		for _, f := range allFigures {
			r.missing[f] = "no pid or dataDir and no metricsURLs"
		}
		return r, nil
	}
	var proc rates
	if ob.proc != nil {
		proc = ob.proc.observe(ctx, now, loadEnd)
	}
	comps := make([]rates, len(ob.comps))
	var wg sync.WaitGroup
	for i, c := range ob.comps {
		wg.Go(func() { comps[i] = c.observe(ctx, now, loadEnd) })
	}
	wg.Wait()
	if ob.proc == nil {
		return addRates(comps), nil
	}
	if len(ob.comps) == 0 {
		return proc, nil
	}
	pages := addRates(comps)
	metrics := pages
	if ob.DataDir != "" {
		// The data dir is the disk figure: a failed walk stays unknown with its reason
		// rather than silently becoming the storage's own, differently defined, size.
		metrics.disk = nil
	}
	return proc.or(metrics), &pages
}

// kind is the target's kind, or the one its metric names reveal.
func (ob *observed) kind() storage.Kind {
	if ob.Kind != "" {
		return ob.Kind
	}
	for _, c := range ob.comps {
		if k := c.kind(); k != "" {
			return k
		}
	}
	return ""
}
