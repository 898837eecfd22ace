package bench

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
	"github.com/tsbench/tsbench/internal/verify"
)

// runScrape is the run of scrape mode: the scrape stage serves the targets and an agent
// scrapes them and writes to the storages; the load ends by emptying the target list, so
// the agent drops the targets and drains, and its own counters give each storage's account.
func (r *run) runScrape(ctx context.Context) (*results.Run, error) {
	sc := r.scrape
	if err := sc.Start(ctx); err != nil {
		sc.Close()
		return nil, err
	}
	defer func() {
		r.closed.Store(true) // a storage's exit from here on is expected
		sc.Close()
	}()
	if r.http.live != nil { // its figures are the agent's counters, read at the end
		r.http.live.setNote("scrape mode: the report is assembled from the agent's counters when the run ends; until then /metrics has tsbench's figures")
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
	obsGroup.Go(func() error { return sc.Observer().Run(obsCtx) })

	r.log.Info("load started", "sender", r.cfg.Sender, "storages", r.cfg.StorageNames(), "targets", r.gen.Targets(),
		"series_per_target", r.gen.SeriesPerTarget(), "duration", r.cfg.Duration, "sd_url", sc.SDURL())
	var g errgroup.Group
	for _, q := range r.runners {
		g.Go(func() error { return q.Run(loadCtx) })
	}
	g.Go(func() error { return sc.Run(loadCtx) })
	g.Go(func() error { r.runProbers(loadCtx); return nil })
	<-loadCtx.Done()
	loadEnd := time.Now()
	r.obs.LoadEnded(loadEnd)
	sc.Observer().LoadEnded(loadEnd)
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var verified map[string]*results.Verify
	var changes *results.SenderChanges
	if r.cfg.ExporterURL == "" {
		verified, changes = r.verifyScrape(after)
	}
	snapCtx, cancel := context.WithTimeout(after, 2*time.Minute)
	r.obs.Snapshot(snapCtx)
	cancel()
	stopObs()
	_ = obsGroup.Wait()
	return r.scrapeResults(verified, changes, loadEnd), nil
}

// verifyScrape reads back what each storage holds against the pages tsbench served: each
// stored sample must be the value served for its scrape. It returns too what the agent
// changed of them.
func (r *run) verifyScrape(ctx context.Context) (map[string]*results.Verify, *results.SenderChanges) {
	if r.cfg.VerifySamples <= 0 {
		return nil, nil
	}
	vt := r.verifyTargets()
	rb := r.scrape.ReadBack()
	if len(vt) == 0 || rb.Last.IsZero() {
		return nil, nil
	}
	v := verify.NewFor(r.cfg, rb.Workload, vt, r.p.Plan.RuleExprs(), r.log)
	v.IgnoreNames, v.AgentMarkers, v.AgentChanges = rb.IgnoreNames, true, true
	ctx, cancel := context.WithTimeout(ctx, r.opts.VerifyTimeout)
	defer cancel()
	to := rb.Last
	r.log.Info("verifying what each storage returns", "samples", r.cfg.VerifySamples, "to", to)
	res := v.Run(ctx, r.start, to)
	return res, v.SenderChanges
}

// scrapeResults assembles results.json: the storages' figures as in a direct run, their write
// sections from the agent's account, and the sender section.
func (r *run) scrapeResults(verified map[string]*results.Verify, changes *results.SenderChanges, loadEnd time.Time) *results.Run {
	res := r.newResults(r.gen.Targets(), r.gen.SeriesPerTarget())
	snd, writes, accounting := r.scrape.Results(&res.Workload, res.StartTime, loadEnd)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range r.cfg.StorageNames() {
		s := r.storageResults(name, verified[name])
		s.Write = writes[name]
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
	snd.Changes = changes
	res.Sender = snd
	res.AccountingErrors = append(r.accounting.list(), accounting...)
	for _, msg := range accounting {
		r.log.Error("accounting does not balance", "detail", msg)
	}
	res.Thresholds = threshold.Evaluate(r.p.Thresholds, res)
	return res
}
