// Package observe samples what each storage uses — CPU, RSS, disk, disk IO, samples ingested
// by its own count — and tsbench's own CPU and RSS, every interval of the run.
//
// Invariant: a figure no source gives is unknown (nil, with a reason), never zero; a source
// that fails is logged once and the run goes on.
package observe

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/report"
)

// Target is one storage to observe.
type Target struct {
	Name        string
	PID         int      // a local process: read /proc/PID
	DataDir     string   // its data dir: walk it for disk bytes
	MetricsURLs []string // its /metrics pages; several (a cluster's components) are added up
	Client      Doer     // for /metrics and snapshots (auth, TLS); nil: a plain client
	BaseURL     string   // HTTP root for the snapshot APIs, with a trailing slash
	Kind        string   // storage.KindVictoriaMetrics, storage.KindPrometheus or ""
}

// Options configure an Observer.
type Options struct {
	Interval   time.Duration // default 10s
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: no metrics
	ProcRoot   string                // default /proc
}

// Observer samples every target, and tsbench itself, over the run.
type Observer struct {
	opts    Options
	targets []*observed
	self    *tracker
	selfTL  []report.ResourcePoint
	m       *metrics

	mu sync.Mutex // guards every observed's figures
}

// observed is one storage: a /proc source and one source per /metrics URL.
type observed struct {
	Target
	log      *slog.Logger
	proc     *tracker
	comps    []*tracker // per metrics URL
	timeline []report.ResourcePoint
	snapshot snapshotResult
}

// New builds an Observer of targets.
func New(opts Options, targets []Target) *Observer {
	if opts.Interval <= 0 {
		opts.Interval = 10 * time.Second
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	o := &Observer{opts: opts, m: newMetrics(opts.Registerer)}
	o.self = newTracker("tsbench", "/proc", procSource{root: opts.ProcRoot, pid: os.Getpid()}, opts.Logger)
	for _, t := range targets {
		if t.Client == nil {
			t.Client = &http.Client{Timeout: 10 * time.Second}
		}
		log := opts.Logger.With("component", "observe", "storage", t.Name)
		ob := &observed{Target: t, log: log}
		if t.PID != 0 || t.DataDir != "" {
			ob.proc = newTracker(t.Name, "/proc", procSource{root: opts.ProcRoot, pid: t.PID, dataDir: t.DataDir}, log)
		}
		for _, u := range t.MetricsURLs {
			ob.comps = append(ob.comps, newTracker(t.Name, redact(u), metricsSource{url: u, client: t.Client}, log))
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

// collect takes one sample of every target and of tsbench.
func (o *Observer) collect(ctx context.Context, now time.Time) {
	var wg sync.WaitGroup
	for _, ob := range o.targets {
		wg.Go(func() {
			p := ob.observe(ctx, now)
			o.m.set(ob.Name, p)
			o.mu.Lock()
			ob.timeline = append(ob.timeline, p)
			o.mu.Unlock()
		})
	}
	self := o.self.observe(ctx, now).point(now)
	o.m.setSelf(self)
	wg.Wait()
	o.mu.Lock()
	o.selfTL = append(o.selfTL, self)
	o.mu.Unlock()
}

// observe samples every source of the storage and merges them into one point: /proc wins
// where it gives a figure, the /metrics pages (added up) give the rest.
func (ob *observed) observe(ctx context.Context, now time.Time) report.ResourcePoint {
	var proc rates
	if ob.proc != nil {
		proc = ob.proc.observe(ctx, now)
	}
	comps := make([]rates, len(ob.comps))
	var wg sync.WaitGroup
	for i, c := range ob.comps {
		wg.Go(func() { comps[i] = c.observe(ctx, now) })
	}
	wg.Wait()
	metrics := addRates(comps)
	return proc.or(metrics).point(now)
}
