package bench

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/freshness"
	"github.com/tsbench/tsbench/internal/observe"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/remotewrite"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/scrape"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
	"github.com/tsbench/tsbench/internal/threshold"
	"github.com/tsbench/tsbench/internal/verify"
	"github.com/tsbench/tsbench/internal/workload"
)

// maxAccountingErrors is how many moments the accounting did not balance results.json lists.
const maxAccountingErrors = 20

// run is one benchmark's conductor: the stages it started, wired to the storages of cfg,
// and what it records of them over the run (the write timeline, the accounting, problems,
// checks, checkpoints).
type run struct {
	cfg   *config.Config
	p     *Prepared
	opts  Options
	log   *slog.Logger
	kinds map[string]string // storage name → kind, where known
	set   settings          // per storage, the flags it was started with and the settings read from it (readSettings)
	start time.Time         // of the load: startTime, or when the run was set up
	// clock is where the workload's clock starts: start − history (issue 12).
	clock time.Time

	// The stages.
	gen     *workload.Generator
	part    *workload.Part // the targets this shard generates: all of them without shards
	writer  *remotewrite.Writer
	scrape  *scrape.Stage // scrape mode's, in place of the writer's load; nil in a direct run
	runners map[string]*query.Runner
	fresh   map[string]*freshness.Prober // the freshness canary per storage (freshness.go)
	readers map[string]*storage.Client
	// queryAPI is each readURL's answer to the check before the start (checkQueryAPIs): a
	// storage gets a query runner and the query read-back only when it answered.
	queryAPI map[string]*results.QueryAPI
	obs      *observe.Observer
	http     server // tsbench's own address (server.go)
	m        *longRunMetrics
	closed   atomic.Bool

	mu         sync.Mutex                                       // guards below
	timeline   map[string]*results.Timeline[results.WritePoint] // bounded: a long run's points are merged
	accounting accounting                                       // the moments the accounting did not balance
	problems   map[string][]string                              // per storage, what went wrong during the run
	exited     map[string]time.Time                             // per storage tsbench started, when its process exited during the run
	continuous *verify.Continuous                               // the checks while the load runs (continuous.go); nil without
	// verifyMetrics count the checks on tsbench's /metrics.
	verifyMetrics *verify.Metrics
	last          time.Time // of the newest timeline point
	// checkpointAt is when results.json was last written as a checkpoint (checkpoint.go).
	checkpointAt time.Time
	gaps         []results.Gap // of a run resumed from a checkpoint (resume.go)
	// resumedChecks are the checkpoint's checks during the run, by storage: the continuous
	// read-back continues from them (continuous.go).
	resumedChecks map[string]*results.Verify
	// The workload's expected series over time (series.go), guarded by mu.
	seriesTimeline results.Timeline[results.SeriesPoint]
}

func newRun(cfg *config.Config, p *Prepared, opts Options, locals []*local.Process, apis map[string]*results.QueryAPI, set settings) (*run, error) {
	r := &run{
		cfg: cfg, p: p, opts: opts, log: opts.Logger, kinds: map[string]string{}, set: set, start: cfg.StartTime.Time,
		runners: map[string]*query.Runner{}, readers: map[string]*storage.Client{}, queryAPI: apis,
		timeline: map[string]*results.Timeline[results.WritePoint]{}, problems: map[string][]string{}, exited: map[string]time.Time{},
	}
	for _, l := range locals {
		r.kinds[l.Name] = l.Kind
	}
	if r.start.IsZero() {
		r.start = time.Now()
	}
	if sh := cfg.Shard; sh.Of() > 1 {
		r.log = r.log.With("shard", sh.String())
	}
	r.last = r.start
	r.clock = r.start.Add(-cfg.History)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
		// go_gc_heap_live_bytes: the heap after the last GC, the figure a leak moves (issue 19).
		collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)},
	)), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.m = newLongRunMetrics(reg)
	if err := r.newLoad(reg); err != nil {
		return nil, err
	}
	if err := r.serve(reg); err != nil { // before the stages that serve on it (scrape mode's targets)
		return nil, err
	}
	if err := r.newStages(reg); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// newLoad makes the workload and the writer: the stages every mode of the run has.
func (r *run) newLoad(reg prometheus.Registerer) error {
	var err error
	if r.gen, err = workload.New(r.p.Profile, workload.OptionsFrom(r.cfg, r.clock)); err != nil {
		return &ConfigError{fmt.Errorf("workload: %w", err)}
	}
	r.part = r.gen.Part(r.cfg.Shard.Index, r.cfg.Shard.Of())
	if r.writer, err = remotewrite.New(remotewrite.OptionsFrom(r.cfg), r.part, r.log, remotewrite.NewMetrics(reg)); err != nil {
		return &ConfigError{err}
	}
	r.writer.DrainTimeout = r.cfg.DrainTimeout
	if r.cfg.Duration > 0 && r.cfg.History == 0 { // with history, each storage's end comes after it caught up
		r.writer.End = r.start.Add(r.cfg.Duration)
	}
	return nil
}

// newStages makes the read side's stages of every storage (the query runners, the observer,
// the freshness canary) and scrape mode's stage.
func (r *run) newStages(reg prometheus.Registerer) error {
	qm := query.NewMetrics(reg)
	r.verifyMetrics = verify.NewMetrics(reg)
	var targets []observe.Target
	for _, name := range r.cfg.StorageNames() {
		st := r.cfg.RemoteStorages[name]
		// The observer and the verifier share this client; the query runner has its own (one
		// connection per query slot), so a query never waits for a connection they hold.
		client, err := storage.NewClient(name, st, storage.Read, 4)
		if err != nil {
			return &ConfigError{fmt.Errorf("remoteStorages.%s: %w", name, err)}
		}
		r.readers[name] = client
		if !r.cfg.Lead() {
			continue // the lead shard queries and observes the storages, once for all shards
		}
		if qa := r.queryAPI[name]; qa != nil && qa.Available {
			qc, err := storage.NewClient(name, st, storage.Read, r.cfg.QueryConcurrency)
			if err != nil { // the same settings as the client above: never in practice
				return &ConfigError{fmt.Errorf("remoteStorages.%s: %w", name, err)}
			}
			r.runners[name] = query.New(r.cfg, r.p.Plan.Renamed(st.OTLPRenames()), name, qc, st.ReadURL, r.log, qm)
		}
		targets = append(targets, observe.Target{
			Name: name, PID: st.PID, DataDir: st.DataDir, MetricsURLs: st.MetricsURLs,
			Client: client, BaseURL: st.ReadURL, Kind: storage.Kind(r.kinds[name]),
		})
	}
	obsOpts := observe.Options{Interval: r.cfg.ObserveInterval, Logger: r.log, Registerer: reg, Writes: r.writer}
	if r.cfg.ScrapeModeOn() { // the agent acks, not tsbench's writer (scrape.go)
		var err error
		r.scrape, err = scrape.New(r.cfg, r.gen, scrape.Options{
			Mux: r.http.mux, Addr: r.http.addr, Keep: r.opts.Keep, Progress: r.opts.Progress, ProgressEvery: r.opts.ProgressEvery,
			DrainTimeout: r.cfg.DrainTimeout, Start: r.start, Logger: r.log,
		})
		if err != nil {
			return &ConfigError{err}
		}
		obsOpts.Writes = r.scrape
	}
	r.obs = observe.New(obsOpts, targets)
	if err := r.newProbers(); err != nil { // the same settings as the clients above: never in practice
		return &ConfigError{err}
	}
	return nil
}

func (r *run) close() {
	r.closed.Store(true)
	r.http.close()
	for _, c := range r.readers {
		c.Close()
	}
}

// watchExit reports a local storage that exits while the run still needs it.
func (r *run) watchExit(l *local.Process) {
	<-l.Exited()
	if r.closed.Load() {
		return
	}
	msg := fmt.Sprintf("the %s process exited during the run; writes to it retry, then drop (retry_timeout); see %s", l.Kind, l.LogPath)
	r.log.Error("storage exited", "storage", l.Name, "log", l.LogPath)
	r.problem(l.Name, msg)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exited[l.Name] = time.Now().UTC()
}

func (r *run) problem(name, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems[name] = append(r.problems[name], msg)
}

// run drives the load until ctx ends or the duration passes, then shuts down in order.
func (r *run) run(ctx context.Context) (*results.Run, error) {
	resumed, err := r.resumeCheckpoint(time.Now())
	if err != nil {
		return nil, err
	}
	if !resumed && !r.waitForStart(ctx) {
		return nil, fmt.Errorf("interrupted while waiting for startTime %s", r.start.UTC().Format(time.RFC3339))
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	history := r.cfg.History > 0 && r.writes()
	switch {
	case history:
		// Each storage's load lasts duration from the moment it caught up: the writer ends
		// it, and the run's load ends when every storage's has.
		go func() {
			select {
			case <-r.writer.GenerationDone():
				stopLoad()
			case <-loadCtx.Done():
			}
		}()
	case r.cfg.Duration > 0:
		// The load ends at startTime + duration, not duration after this process started, so
		// that shards started apart end together.
		loadCtx, stopLoad = context.WithDeadline(ctx, r.start.Add(r.cfg.Duration))
	}
	defer stopLoad()
	// The observer and the end of the run outlive the load: a first interrupt stops the load
	// only; the second one exits the process.
	after := context.WithoutCancel(ctx)
	obsCtx, stopObs := context.WithCancel(after)
	defer stopObs()
	obsDone := make(chan struct{})
	go func() { _ = r.obs.Run(obsCtx); close(obsDone) }()

	r.log.Info("load started", "storages", r.cfg.StorageNames(), "targets", r.part.Targets(),
		"series_per_target", r.gen.SeriesPerTarget(), "duration", r.cfg.Duration, "history", r.cfg.History,
		"history_skew", remotewrite.HistorySkew(r.cfg.ScrapeInterval))
	var g errgroup.Group
	if r.writes() {
		g.Go(func() error { return r.writer.Run(loadCtx) })
	} else {
		r.log.Info("no storage gets writes (every writeURL empty, or disableWrite): the run is a query load only, with no read-back")
	}
	for name, q := range r.runners {
		if !history {
			g.Go(func() error { return q.Run(loadCtx) })
			continue
		}
		g.Go(func() error { return r.queryWhenCaughtUp(loadCtx, name, q) })
	}
	g.Go(func() error { r.progress(loadCtx); return nil })
	g.Go(func() error { r.runProbers(loadCtx); return nil })
	g.Go(func() error { r.watchSeries(loadCtx); return nil })
	if r.cfg.VerifyInterval > 0 {
		g.Go(func() error { r.verifyContinuously(loadCtx); return nil })
	}
	if r.checkpointing() {
		g.Go(func() error { r.checkpoints(loadCtx); return nil })
	}
	r.liveNow(time.Now(), nil) // the live page at once; then with each progress line or checkpoint
	<-loadCtx.Done()
	loadEnd := time.Now()
	r.liveLoadStopped(loadEnd, ctx.Err() != nil)
	r.obs.LoadEnded(loadEnd)
	r.log.Info("load stopped; draining pending samples and queries in flight", "deadline", r.cfg.DrainTimeout)
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r.record(time.Now()) // after the drain: what the storages finally acked
	r.checkAccounting(time.Now())
	verified := r.verify(after)

	snapCtx, cancel := context.WithTimeout(after, 2*time.Minute)
	r.obs.Snapshot(snapCtx)
	cancel()
	stopObs()
	<-obsDone
	return r.results(verified), nil
}

// queryWhenCaughtUp runs the query load against the storage name from the moment it has
// caught up with the wall clock, for duration: what it answers while it ingests history is
// not the storage under the load the run describes.
func (r *run) queryWhenCaughtUp(ctx context.Context, name string, q *query.Runner) error {
	select {
	case <-ctx.Done():
		return nil
	case <-r.writer.CaughtUp(name):
	}
	if r.cfg.Duration > 0 {
		from := r.writer.CaughtUpAt(name)
		if from.IsZero() { // a storage only queried: from when every storage written caught up
			from = time.Now()
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, from.Add(r.cfg.Duration))
		defer cancel()
	}
	r.log.Info("storage caught up; query load started", "storage", name)
	return q.Run(ctx)
}

// writes reports whether any storage gets writes. With none, nothing is generated and there
// is no read-back: what the storages hold was not written by this run.
func (r *run) writes() bool {
	for _, st := range r.cfg.RemoteStorages {
		if !st.DisableWrite {
			return true
		}
	}
	return false
}

// verifier checks every storage with a query API at its readURL, a storage only queried too
// (a replica or a read frontend of a storage written here), and through remote read every one
// with a remoteReadURL but no query API; nil when there is nothing to check.
func (r *run) verifier() *verify.Verifier {
	if r.cfg.VerifySamples <= 0 || !r.writes() {
		return nil
	}
	targets := r.verifyTargets()
	if len(targets) == 0 {
		return nil
	}
	var rules []query.NamedExpr
	if r.cfg.Lead() { // the rules compare whole storages: once, not once per shard
		rules = r.p.Plan.RuleExprs()
	}
	return verify.New(r.cfg, r.part, targets, rules, r.log)
}

// verifyTargets are the storages the read-back reads: see verifier.
func (r *run) verifyTargets() []verify.Target {
	var targets []verify.Target
	for _, name := range r.cfg.StorageNames() {
		st := r.cfg.RemoteStorages[name]
		t := verify.Target{
			Name: name, RemoteReadURL: st.RemoteReadURL, Client: r.readers[name], Kind: storage.Kind(r.kinds[name]),
			Protocol: st.WriteProtocol(), OTLPLabels: st.OTLPLabelMapping(),
			NotAcked: func(t int64) bool { return r.writer.NotAcked(name, time.UnixMilli(t)) },
		}
		if t.Kind == "" { // a storage tsbench did not start: as its metrics tell
			t.Kind = r.obs.Kind(name)
		}
		if qa := r.queryAPI[name]; qa != nil && qa.Available {
			t.ReadURL = st.ReadURL
		}
		if t.ReadURL != "" || t.RemoteReadURL != "" {
			targets = append(targets, t)
		}
	}
	return targets
}

// verify reads back what each storage stored over the run, after the load: up to the last
// scrape generated, or, for a storage that had not acked (or dropped) every sample when the
// drain ended, up to the oldest it had not: those are pending in its account, not missing
// (a starved storage's last seconds once read as missing, issue 37).
func (r *run) verify(ctx context.Context) map[string]*results.Verify {
	v := r.verifier()
	if v == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.VerifyTimeout)
	defer cancel()
	// The writer stops generating up to a tick before the load's end: check up to the last
	// scrape time it did generate everything before.
	to := r.writer.GeneratedBefore().Add(-time.Millisecond)
	pending := r.pendingFrom(to)
	r.log.Info("verifying what each storage returns", "samples", r.cfg.VerifySamples, "from", r.clock, "to", to)
	if len(pending) == 0 {
		return r.verifyUpTo(ctx, v, to)
	}
	res := r.verifyUpTo(ctx, v.Only(func(name string) bool { _, p := pending[name]; return !p }), to)
	end := to
	for name, at := range pending {
		end = results.Earlier(end, at.Add(-time.Millisecond))
		r.log.Warn("read back only up to the oldest sample the storage had not acked when the drain ended: the rest is pending, not missing",
			"storage", name, "to", at.Add(-time.Millisecond), "pending", r.writer.Results(name).PendingSamples)
		part := r.verifyUpTo(ctx, v.Only(func(n string) bool { return n == name }), at.Add(-time.Millisecond))
		if st := part[name]; st != nil {
			st.PendingFrom = &at
			res[name] = st
		}
	}
	r.compareRules(ctx, v, res, end)
	return res
}

// compareRules puts in res the rules of every storage compared over a window that all of
// them had settled, up to end: the read-backs of storages with samples pending were each
// made alone, over a window of their own.
func (r *run) compareRules(ctx context.Context, v *verify.Verifier, res map[string]*results.Verify, end time.Time) {
	spans := spansAround(r.gaps, r.clock, end)
	if len(spans) == 0 {
		return
	}
	last := spans[len(spans)-1]
	for name, c := range v.CompareRules(ctx, last[0], last[1]) {
		c.Into(res[name])
	}
}

// pendingFrom is, by storage written, the oldest sample it had not acked or dropped when the
// drain ended, where that is at or before to.
func (r *run) pendingFrom(to time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	now := time.Now()
	for _, name := range r.cfg.StorageNames() {
		if r.cfg.RemoteStorages[name].DisableWrite {
			continue
		}
		if s := r.writer.Settled(name, now).UTC(); !s.After(to) {
			out[name] = s
		}
	}
	return out
}

// verifyUpTo is the read-back of v's storages from the run's start to to, the reads of the
// run's end (sample types, HA pairs) included; empty for a nil v.
func (r *run) verifyUpTo(ctx context.Context, v *verify.Verifier, to time.Time) map[string]*results.Verify {
	if v == nil {
		return map[string]*results.Verify{}
	}
	res := r.readBack(ctx, v, r.clock, to) // the history too: rules compare from where their windows fill
	// The reads of the run's end expect nothing of a resumed run's last gap (issue 29).
	from := sinceLastGap(r.gaps, r.clock)
	r.verifySampleTypes(ctx, v, res, from, to)
	verifyHA(ctx, v, res, from, to)
	return res
}

// checkAccounting records every storage whose account does not balance at now.
func (r *run) checkAccounting(now time.Time) {
	for _, name := range r.cfg.StorageNames() {
		w := r.writer.Results(name)
		if w == nil {
			continue
		}
		if ok, diff := w.Balanced(); !ok {
			msg := fmt.Sprintf("%s at %s: generated %d != acked %d + dropped %d + pending %d (off by %d)",
				name, now.UTC().Format(time.RFC3339), w.GeneratedSamples, w.AckedSamples, w.Dropped(), w.PendingSamples, diff)
			r.log.Error("accounting does not balance", "storage", name, "detail", msg)
			r.mu.Lock()
			r.accounting.add(msg)
			r.mu.Unlock()
		}
	}
}

// newResults is the part of results.json every mode fills the same way: the run's times, its
// redacted config, the workload's shape and tsbench's own resources.
func (r *run) newResults(targets, seriesPerTarget int) *results.Run {
	return &results.Run{
		SchemaVersion: results.SchemaVersion,
		StartTime:     r.start.UTC(),
		EndTime:       time.Now().UTC(),
		Config:        r.cfg.Redacted(),
		Workload: results.Workload{
			Targets: targets, SeriesPerTarget: seriesPerTarget,
			ActiveSeries:          int64(targets * seriesPerTarget),
			ScrapeIntervalSeconds: r.cfg.ScrapeInterval.Seconds(), Seed: r.cfg.Seed,
		},
		Generator: r.obs.Generator(),
	}
}

// storageResults is the part of storage name's results every mode fills the same way; the
// caller holds mu.
func (r *run) storageResults(name string, verified *results.Verify) results.Storage {
	var exitedAt *time.Time
	if t, ok := r.exited[name]; ok {
		exitedAt = &t
	}
	return results.Storage{
		ExitedAt: exitedAt,
		Name:     name, Verify: verified, QueryAPI: r.queryAPI[name], Problems: r.problems[name],
		Settings: r.set.flags[name], SettingsWarnings: r.set.warnings[name], Version: r.set.versions[name],
	}
}

// accounting is the first maxAccountingErrors moments the accounting did not balance, and
// how many more: a run of days keeps its memory bounded.
type accounting struct {
	first []string
	more  int
}

func (a *accounting) add(msg string) {
	if len(a.first) < maxAccountingErrors {
		a.first = append(a.first, msg)
	} else {
		a.more++
	}
}

// list is results.json's accountingErrors: nil when the accounting always balanced.
func (a *accounting) list() []string {
	l := slices.Clone(a.first)
	if a.more > 0 {
		l = append(l, fmt.Sprintf("and %d more moments (only the first %d are listed)", a.more, maxAccountingErrors))
	}
	return l
}

// results assembles results.json from every part.
func (r *run) results(verified map[string]*results.Verify) *results.Run {
	res := r.newResults(r.part.Targets(), r.part.SamplesPerScrape()) // natives included
	res.Workload.SeriesCreated, res.Workload.StaleMarkers = r.writer.WorkloadStats()
	res.Workload.HistorySeconds = r.cfg.History.Seconds()
	if r.cfg.History > 0 {
		res.Workload.HistorySkewSeconds = remotewrite.HistorySkew(r.cfg.ScrapeInterval).Seconds()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range r.cfg.StorageNames() {
		s := r.storageResults(name, verified[name])
		s.Verify = r.addChecks(name, s.Verify)
		if w := r.writer.Results(name); w != nil {
			if tl := r.timeline[name]; tl != nil {
				w.Timeline = tl.Points()
			}
			s.Write = w
		}
		if q := r.runners[name]; q != nil {
			s.Query = q.Results()
		}
		ackedNothingStored(&s)
		if p := r.fresh[name]; p != nil {
			s.Freshness = p.Results()
		}
		if r.cfg.Lead() { // the other shards did not observe the storages
			s.Resources = r.obs.Resources(name)
			if s.Write != nil && s.Write.History != nil && s.Resources != nil {
				s.Resources.History = r.obs.HistoryResources(name, s.Write.History.CaughtUpTime)
			}
		}
		res.Storages = append(res.Storages, s)
	}
	if sh := r.cfg.Shard; sh.Of() > 1 {
		res.Shard = &results.Shard{Index: sh.Index, Count: sh.Count, Lead: r.cfg.Lead()}
	}
	res.Gaps = r.gaps
	res.AccountingErrors = r.accounting.list()
	r.addSeries(res)
	if res.Shard == nil { // a shard's figures are a part: `report merge` evaluates the sum
		res.Thresholds = threshold.Evaluate(r.p.Thresholds, res)
	}
	return res
}

// waitForStart waits until startTime, so that every shard starts on one clock; false when ctx
// ended first. A shard that starts after it catches up on the scrapes it missed at once: the
// workload stays the same, the lag shows it.
func (r *run) waitForStart(ctx context.Context) bool {
	d := time.Until(r.start)
	switch {
	case d > 0:
		r.log.Info("waiting for startTime", "start_time", r.start.UTC().Format(time.RFC3339), "in", d.Round(time.Millisecond))
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	case d < -time.Second:
		r.log.Warn("started after startTime: generating the scrapes due since then at once", "start_time", r.start.UTC().Format(time.RFC3339), "late", (-d).Round(time.Millisecond))
	}
	return true
}
