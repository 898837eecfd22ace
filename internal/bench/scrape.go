package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/observe"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/local"
	"github.com/tsbench/tsbench/internal/targets"
	"github.com/tsbench/tsbench/internal/threshold"
	"github.com/tsbench/tsbench/internal/verify"
)

// scrape is scrape mode's parts: the targets' server, the agent and its account.
type scrape struct {
	srv        *targets.Server
	http       *http.Server
	sdURL      string
	remotes    []targets.Remote
	agent      *local.Process // nil when the user runs the agent (senderURL)
	metricsURL string
	obs        *observe.Observer // the agent's resources
	client     *http.Client
	changes    *results.SenderChanges // the agent's, found by the read-back

	mu       sync.Mutex // guards problems
	problems []string
}

func (sc *scrape) problem(msg string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.problems = append(sc.problems, msg)
}

// runScrape is the run of scrape mode: tsbench serves the targets, the agent scrapes them and
// writes to the storages; the load ends by emptying the target list, so the agent drops the
// targets and drains, and its own counters give each storage's account.
func (r *run) runScrape(ctx context.Context) (*results.Run, error) {
	sc, err := r.startScrape(ctx)
	if err != nil {
		return nil, err
	}
	defer sc.close(r)
	if r.live != nil { // its figures are the agent's counters, read at the end
		r.live.setNote("scrape mode: the report is assembled from the agent's counters when the run ends; until then /metrics has tsbench's figures")
	}

	loadCtx, stopLoad := context.WithCancel(ctx)
	if r.cfg.Duration > 0 {
		loadCtx, stopLoad = context.WithTimeout(ctx, r.cfg.Duration)
	}
	defer stopLoad()
	after := context.WithoutCancel(ctx)
	obsCtx, stopObs := context.WithCancel(after)
	defer stopObs()
	var obsGroup errgroup.Group
	obsGroup.Go(func() error { return r.obs.Run(obsCtx) })
	obsGroup.Go(func() error { return sc.obs.Run(obsCtx) })

	r.log.Info("load started", "sender", r.cfg.Sender, "storages", r.cfg.StorageNames(), "targets", r.gen.Targets(),
		"series_per_target", r.gen.SeriesPerTarget(), "duration", r.cfg.Duration, "sd_url", sc.sdURL)
	var g errgroup.Group
	for _, q := range r.runners {
		g.Go(func() error { return q.Run(loadCtx) })
	}
	g.Go(func() error { sc.progress(loadCtx, r); return nil })
	g.Go(func() error { r.runProbers(loadCtx); return nil })
	<-loadCtx.Done()
	loadEnd := time.Now()
	r.obs.LoadEnded(loadEnd)
	sc.obs.LoadEnded(loadEnd)
	sc.srv.Stop()
	r.log.Info("load stopped; the agent drops the targets and drains", "deadline", sc.drainDeadline(r))
	counters := sc.drain(after, r)
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var verified map[string]*results.Verify
	if r.cfg.ExporterURL == "" {
		verified = r.verifyScrape(after, sc)
	}
	snapCtx, cancel := context.WithTimeout(after, 2*time.Minute)
	r.obs.Snapshot(snapCtx)
	cancel()
	stopObs()
	_ = obsGroup.Wait()
	return r.scrapeResults(sc, counters, verified, loadEnd), nil
}

// startScrape serves the targets, writes the agent's config and starts the agent (or prints
// the config for the user's agent).
func (r *run) startScrape(ctx context.Context) (*scrape, error) {
	sc := &scrape{client: &http.Client{Timeout: 10 * time.Second}}
	sc.srv = targets.New(targets.Options{
		Gen: r.gen, ExposeTimestamps: r.cfg.ExposeTimestamps, ExporterURL: r.cfg.ExporterURL, Logger: r.log,
	})
	// On tsbench's own address (-httpListenAddr) when it serves one, so that a user's agent
	// (senderURL) can be given a list address that stays the same from run to run.
	if r.mux != nil {
		h := sc.srv.Handler()
		r.mux.Handle(targets.SDPath, h)
		r.mux.Handle("/targets/", h)
		sc.sdURL = "http://" + r.srvAddr + targets.SDPath
	} else {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("serve the targets: %w", err)
		}
		sc.http = &http.Server{Handler: sc.srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = sc.http.Serve(ln) }()
		sc.sdURL = "http://" + ln.Addr().String() + targets.SDPath
	}
	var err error
	if sc.remotes, err = targets.Remotes(r.cfg); err != nil {
		sc.close(r)
		return nil, &ConfigError{err}
	}
	if r.cfg.SenderURL != "" {
		sc.metricsURL = strings.TrimSuffix(r.cfg.SenderURL, "/") + "/metrics"
		if err := r.printScrapeConfig(sc); err != nil {
			sc.close(r)
			return nil, err
		}
	} else {
		sc.agent, err = local.StartAgent(ctx, r.cfg.Sender, r.cfg.Sender, r.agentSetup(sc), r.opts.Keep, r.log)
		if err != nil {
			sc.close(r)
			return nil, fmt.Errorf("start %s: %w", r.cfg.Sender, err)
		}
		sc.metricsURL = sc.agent.URL + "metrics"
		go func() {
			<-sc.agent.Exited()
			if !r.closed.Load() {
				r.log.Error("agent exited", "sender", r.cfg.Sender, "log", sc.agent.LogPath)
				sc.problem(fmt.Sprintf("the %s process exited during the run; see %s", r.cfg.Sender, sc.agent.LogPath))
			}
		}()
	}
	t := observe.Target{Name: r.cfg.Sender, MetricsURLs: []string{sc.metricsURL}}
	if sc.agent != nil {
		t.PID, t.DataDir = sc.agent.Storage.PID, sc.agent.DataDir
	}
	sc.obs = observe.New(observe.Options{Interval: r.cfg.ObserveInterval, Logger: r.log}, []observe.Target{t})
	return sc, nil
}

// agentSetup writes the agent's config files (secrets in files only it reads) and names them
// in its flags.
func (r *run) agentSetup(sc *scrape) local.AgentSetup {
	return func(workDir string) ([]string, error) {
		switch r.cfg.Sender {
		case config.SenderPrometheusAgent:
			b, err := targets.PrometheusConfig(r.cfg, sc.sdURL, sc.remotes, false)
			if err != nil {
				return nil, err
			}
			path := filepath.Join(workDir, "prometheus.yml")
			return []string{"--config.file=" + path}, os.WriteFile(path, b, 0o600)
		default:
			b, err := targets.VMAgentScrapeConfig(r.cfg, sc.sdURL)
			if err != nil {
				return nil, err
			}
			path := filepath.Join(workDir, "scrape.yml")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				return nil, err
			}
			flags, err := targets.VMAgentFlags(r.cfg, sc.remotes, false, func(name, secret string) (string, error) {
				p := filepath.Join(workDir, name)
				return p, os.WriteFile(p, []byte(secret), 0o600)
			})
			return append([]string{"-promscrape.config=" + path}, flags...), err
		}
	}
}

// printScrapeConfig tells the user what to give the agent they run: the config (secrets as
// <secret>) and, for vmagent, its flags.
func (r *run) printScrapeConfig(sc *scrape) error {
	w := r.opts.Progress
	if w == nil {
		return nil
	}
	switch r.cfg.Sender {
	case config.SenderPrometheusAgent:
		b, err := targets.PrometheusConfig(r.cfg, sc.sdURL, sc.remotes, true)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "scrape mode: tsbench serves the targets at %s; give Prometheus (--enable-feature=agent) this config (fill in each <secret>):\n%s\n", sc.sdURL, b)
	default:
		b, err := targets.VMAgentScrapeConfig(r.cfg, sc.sdURL)
		if err != nil {
			return err
		}
		flags, err := targets.VMAgentFlags(r.cfg, sc.remotes, true, nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "scrape mode: tsbench serves the targets at %s; give vmagent -promscrape.config with:\n%s\nand the flags (fill in each <secret>):\n  %s\n", sc.sdURL, b, strings.Join(flags, " \\\n  "))
	}
	return nil
}

func (sc *scrape) close(r *run) {
	if sc.http != nil {
		_ = sc.http.Close()
	}
	if sc.agent == nil {
		return
	}
	r.closed.Store(true) // the agent's exit from here on is expected
	if r.opts.Keep {
		r.log.Info("agent left running (-keep)", "sender", sc.agent.Name, "url", sc.agent.URL, "pid", sc.agent.Storage.PID)
		return
	}
	if err := sc.agent.Stop(); err != nil {
		r.log.Warn("stop agent", "sender", sc.agent.Name, "err", err)
	}
}

// progress prints what was served and what the agent says, every ProgressEvery.
func (sc *scrape) progress(ctx context.Context, r *run) {
	if r.opts.Progress == nil {
		return
	}
	every(ctx, r.opts.ProgressEvery, func(now time.Time) {
		s := sc.srv.Served()
		var b strings.Builder
		fmt.Fprintf(&b, "[%6s] served %d scrapes, %d samples", now.Sub(r.start).Round(time.Second), s.Scrapes, s.Samples)
		if c, err := targets.ReadCounters(ctx, sc.client, sc.metricsURL, r.cfg.Sender, sc.remotes); err == nil {
			r.agentAcked.update(c)
			for _, name := range r.cfg.StorageNames() {
				if a := c.Storages[name]; a != nil {
					fmt.Fprintf(&b, " %s: acked %d pending %d", name, a.Acked, a.Pending)
				}
			}
		}
		fmt.Fprintln(r.opts.Progress, b.String())
	})
}

// drainDeadline bounds the wait after the load: the agent's next read of the (now empty)
// target list, two scrape intervals for its staleness markers, and DrainTimeout to send.
func (sc *scrape) drainDeadline(r *run) time.Duration {
	return targets.SDRefresh(r.cfg) + 5*r.cfg.ScrapeInterval/2 + r.opts.DrainTimeout
}

// drain waits until the agent has dropped the targets and its counters say every sample is
// acked or dropped, and stay so for a second, or until the deadline; it returns the last
// counters read (nil when none could be read).
func (sc *scrape) drain(ctx context.Context, r *run) *targets.Counters {
	deadline := time.Now().Add(sc.drainDeadline(r))
	// Before this, the agent may not have read the empty list yet, or not written the
	// staleness markers of the targets it dropped.
	settled := time.Now().Add(targets.SDRefresh(r.cfg) + 5*r.cfg.ScrapeInterval/2)
	var last *targets.Counters
	var lastErr error
	stableSince := time.Time{}
	for {
		c, err := targets.ReadCounters(ctx, sc.client, sc.metricsURL, r.cfg.Sender, sc.remotes)
		now := time.Now()
		if err != nil {
			lastErr = err
		} else {
			r.agentAcked.update(c)
			if last != nil && c.Appended == last.Appended && drained(c) {
				if stableSince.IsZero() {
					stableSince = now
				}
			} else {
				stableSince = time.Time{}
			}
			last = c
			if now.After(settled) && !stableSince.IsZero() && now.Sub(stableSince) >= time.Second {
				return last
			}
		}
		if now.After(deadline) {
			if last == nil && lastErr != nil {
				sc.problem(lastErr.Error())
			} else {
				sc.problem(fmt.Sprintf("the agent did not drain within %s", sc.drainDeadline(r)))
			}
			return last
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// drained reports whether every storage's account is known, with nothing pending.
func drained(c *targets.Counters) bool {
	for _, a := range c.Storages {
		if !a.Known || a.Pending != 0 || a.Unexplained() != 0 {
			return false
		}
	}
	return true
}

// verifyScrape reads back what each storage holds against the pages tsbench served: each
// stored sample must be the value served for its scrape.
func (r *run) verifyScrape(ctx context.Context, sc *scrape) map[string]*results.Verify {
	if r.cfg.VerifySamples <= 0 {
		return nil
	}
	vt := r.verifyTargets()
	last := sc.srv.LastServed()
	if len(vt) == 0 || last == 0 {
		return nil
	}
	v := verify.NewFor(r.cfg, sc.srv.Workload(), vt, r.p.Plan.RuleExprs(), r.log)
	v.IgnoreNames, v.AgentMarkers, v.AgentChanges = targets.AgentSeries, true, true
	defer func() { sc.changes = v.SenderChanges }()
	ctx, cancel := context.WithTimeout(ctx, r.opts.VerifyTimeout)
	defer cancel()
	to := time.UnixMilli(last)
	r.log.Info("verifying what each storage returns", "samples", r.cfg.VerifySamples, "to", to)
	return v.Run(ctx, r.start, to)
}

// scrapeResults assembles results.json: the storages' figures as in a direct run, their write
// sections from the agent's account, and the sender section.
func (r *run) scrapeResults(sc *scrape, c *targets.Counters, verified map[string]*results.Verify, loadEnd time.Time) *results.Run {
	served := sc.srv.Served()
	res := r.newResults(r.gen.Targets(), r.gen.SeriesPerTarget())
	snd := &results.Sender{
		Kind: r.cfg.Sender, URL: config.RedactURL(r.cfg.SenderURL), ExporterURL: config.RedactURL(r.cfg.ExporterURL),
		ExposeTimestamps: r.cfg.ExposeTimestamps,
		ServedScrapes:    served.Scrapes, ServedSamples: served.Samples, ServedBytes: served.Bytes,
		FailedScrapes: served.Failed, ExporterFetches: served.ExporterFetches,
		ScrapeDurationSecondsMean: served.DurationSecondsMean, ScrapeDurationSecondsMax: served.DurationSecondsMax,
		Resources: sc.obs.Resources(r.cfg.Sender),
	}
	sc.mu.Lock()
	snd.Problems = append([]string(nil), sc.problems...)
	sc.mu.Unlock()
	// Churn as served: the agent's staleness markers are among its own samples (AgentAddedSamples).
	res.Workload.SeriesCreated = sc.srv.Workload().NewRevisions() * int64(res.Workload.SeriesPerTarget)
	if r.cfg.ExporterURL != "" {
		snd.ReadBack = "nothing to check against: the targets served a real exporter's page (exporterURL), not the workload's values"
		// The exporter's page, not the profile: its samples per scrape are what was served.
		res.Workload.SeriesPerTarget = 0
		if served.Scrapes > 0 {
			res.Workload.SeriesPerTarget = int(served.Samples / served.Scrapes)
		}
		res.Workload.ActiveSeries = int64(res.Workload.Targets * res.Workload.SeriesPerTarget)
	}
	accounting := r.senderCounters(snd, c, served, loadEnd.Sub(res.StartTime))
	elapsed := time.Since(r.start).Seconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range r.cfg.StorageNames() {
		s := results.Storage{Name: name, Verify: verified[name], QueryAPI: r.queryAPI[name], Problems: r.problems[name], Settings: r.settings[name], SettingsWarnings: r.settingsWarnings[name], Version: r.versions[name]}
		if st := r.cfg.RemoteStorages[name]; c != nil && !st.DisableWrite {
			ss, w, problems := r.agentAccount(name, c.Storages[name], served, res.Workload.ActiveSeries, elapsed)
			snd.Storages = append(snd.Storages, ss)
			s.Write = w
			accounting = append(accounting, problems...)
		}
		if q := r.runners[name]; q != nil {
			s.Query = q.Results()
		}
		ackedNothingStored(&s)
		if p := r.fresh[name]; p != nil {
			s.Freshness = p.Results()
		}
		s.Resources = r.obs.Resources(name)
		res.Storages = append(res.Storages, s)
	}
	snd.Changes = sc.changes
	res.Sender = snd
	res.AccountingErrors = append(r.accounting, accounting...)
	for _, msg := range accounting {
		r.log.Error("accounting does not balance", "detail", msg)
	}
	res.Thresholds = threshold.Evaluate(r.p.Thresholds, res)
	return res
}

// senderCounters fills the sender's figures from the agent's counters c (nil when they could
// not be read, every figure then unknown with its reason) and says what does not add up:
// the samples tsbench served against those the agent scraped and took in. load is how
// long the load ran, over which the agent's CPU is counted per sample.
func (r *run) senderCounters(snd *results.Sender, c *targets.Counters, served targets.Served, load time.Duration) []string {
	if c == nil {
		why := fmt.Sprintf("the %s's counters could not be read (see problems)", r.cfg.Sender)
		for _, figure := range []string{"scrapedSamples", "appendedSamples", "agentAddedSamples", "cpuSecondsPerMillionSamples"} {
			snd.Reasons = withReason(snd.Reasons, figure, why)
		}
		return []string{fmt.Sprintf("the %s's counters could not be read: no storage's account is known", r.cfg.Sender)}
	}
	var accounting []string
	added := c.Appended - served.Samples
	snd.ScrapedSamples, snd.AppendedSamples, snd.AgentAddedSamples = c.Scraped, &c.Appended, &added
	if c.Scraped == nil {
		snd.Reasons = withReason(snd.Reasons, "scrapedSamples", fmt.Sprintf("%s does not count the samples it scraped", r.cfg.Sender))
	}
	if c.Scraped != nil && *c.Scraped != served.Samples {
		msg := fmt.Sprintf("tsbench served %d samples, %s says it scraped %d (off by %d)",
			served.Samples, r.cfg.Sender, *c.Scraped, served.Samples-*c.Scraped)
		if c.ScrapesTimedOut != nil && *c.ScrapesTimedOut > 0 {
			msg += fmt.Sprintf("; it timed out %d scrapes, whose pages tsbench may have written", *c.ScrapesTimedOut)
		}
		accounting = append(accounting, msg)
	}
	if added < 0 {
		accounting = append(accounting, fmt.Sprintf("tsbench served %d samples, %s took in only %d", served.Samples, r.cfg.Sender, c.Appended))
	}
	switch ar := snd.Resources; {
	case ar == nil || ar.CPUCoresMean == nil:
		snd.Reasons = withReason(snd.Reasons, "cpuSecondsPerMillionSamples", fmt.Sprintf("the %s's CPU is unknown (resources.reasons)", r.cfg.Sender))
	case c.Appended == 0:
		snd.Reasons = withReason(snd.Reasons, "cpuSecondsPerMillionSamples", fmt.Sprintf("the %s took in no sample", r.cfg.Sender))
	default:
		v := *ar.CPUCoresMean * load.Seconds() / float64(c.Appended) * 1e6
		snd.CPUSecondsPerMillionSamples = &v
	}
	return accounting
}

// agentAccount is one storage's account from the agent's counters a (nil when the agent has
// none for it): its line of the sender section, its write section when the account is
// known (else nil), and what of it does not add up.
func (r *run) agentAccount(name string, a *targets.Account, served targets.Served, activeSeries int64, elapsed float64) (results.SenderStorage, *results.Write, []string) {
	if a == nil {
		a = &targets.Account{Dropped: map[string]int64{}}
		a.Why = "the agent has no counters for it"
	}
	ss := results.SenderStorage{
		Name: name, ServedSamples: served.Samples, InSamples: a.In, AckedSamples: a.Acked,
		DroppedSamples: a.Dropped, PendingSamples: a.Pending, Retries: a.Retried,
		UnexplainedSamples: a.Unexplained(), Known: a.Known, Why: a.Why, PendingBytes: a.PendingBytes,
	}
	var accounting []string
	switch {
	case !a.Known:
		accounting = append(accounting, fmt.Sprintf("%s: the account is not known from %s's counters: %s", name, r.cfg.Sender, a.Why))
	case ss.UnexplainedSamples != 0:
		accounting = append(accounting, fmt.Sprintf("%s: %s queued %d samples = acked %d + dropped %d + pending %d, off by %d its counters do not explain",
			name, r.cfg.Sender, a.In, a.Acked, a.In-a.Acked-a.Pending-ss.UnexplainedSamples, a.Pending, ss.UnexplainedSamples))
	}
	if !a.Known {
		return ss, nil, accounting
	}
	w := &results.Write{
		GeneratedSamples: a.In, AckedSamples: a.Acked, DroppedSamples: a.Dropped, PendingSamples: a.Pending,
		Retries: a.Retried, RequestsByStatus: map[string]int64{}, Copies: max(1, r.cfg.URLReplicas(name)),
		TargetSamplesPerSecond: float64(activeSeries) / r.cfg.ScrapeInterval.Seconds() * float64(max(1, r.cfg.URLReplicas(name))),
	}
	if elapsed > 0 {
		w.AchievedSamplesPerSecond = float64(a.Acked) / elapsed
	}
	return ss, w, accounting
}

// withReason is reasons with figure's reason added, made when nil.
func withReason(reasons map[string]string, figure, why string) map[string]string {
	if reasons == nil {
		reasons = map[string]string{}
	}
	reasons[figure] = why
	return reasons
}

// agentAcked is the observer's count of what each storage acknowledged in scrape mode (the
// divisor of bytes per sample): the agent's acked samples at its newest counters read.
type agentAcked struct {
	mu    sync.Mutex // guards acked
	acked map[string]int64
}

func (a *agentAcked) Acked(name string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acked[name]
}

// update takes the acked counts of the agent's counters c.
func (a *agentAcked) update(c *targets.Counters) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acked = map[string]int64{}
	for name, acc := range c.Storages {
		a.acked[name] = acc.Acked
	}
}
