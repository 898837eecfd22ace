package scrape

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/targets"
)

// drainDeadline bounds the wait after the load: the agent's next read of the (now empty)
// target list, two scrape intervals for its staleness markers, and DrainTimeout to send.
func (s *Stage) drainDeadline() time.Duration {
	return targets.SDRefresh(s.cfg) + 5*s.cfg.ScrapeInterval/2 + s.opts.DrainTimeout
}

// drain waits until the agent has dropped the targets and its counters say every sample is
// acked or dropped, and stay so for a second, or until the deadline; it returns the last
// counters read (nil when none could be read).
func (s *Stage) drain(ctx context.Context) *targets.Counters {
	deadline := time.Now().Add(s.drainDeadline())
	// Before this, the agent may not have read the empty list yet, or not written the
	// staleness markers of the targets it dropped.
	settled := time.Now().Add(targets.SDRefresh(s.cfg) + 5*s.cfg.ScrapeInterval/2)
	var last *targets.Counters
	var lastErr error
	stableSince := time.Time{}
	for {
		c, err := targets.ReadCounters(ctx, s.client, s.metricsURL, s.cfg.Sender, s.remotes)
		now := time.Now()
		if err != nil {
			lastErr = err
		} else {
			s.acked.update(c)
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
				s.problem(lastErr.Error())
			} else {
				s.problem(fmt.Sprintf("the agent did not drain within %s", s.drainDeadline()))
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

// Results are, once Run returned, the sender section of results.json and each storage's
// write section from the agent's account (of the storages that get writes; none where the
// account is not known), with what does not add up. It fills wl's figures as served: the
// churn, and with exporterURL the exporter's samples per scrape. start and loadEnd are the
// load's, over which the agent's CPU is counted per sample.
func (s *Stage) Results(wl *results.Workload, start, loadEnd time.Time) (*results.Sender, map[string]*results.Write, []string) {
	served := s.srv.Served()
	snd := &results.Sender{
		Kind: s.cfg.Sender, URL: config.RedactURL(s.cfg.SenderURL), ExporterURL: config.RedactURL(s.cfg.ExporterURL),
		ExposeTimestamps: s.cfg.ExposeTimestamps,
		ServedScrapes:    served.Scrapes, ServedSamples: served.Samples, ServedBytes: served.Bytes,
		FailedScrapes: served.Failed, ExporterFetches: served.ExporterFetches,
		ScrapeDurationSecondsMean: served.DurationSecondsMean, ScrapeDurationSecondsMax: served.DurationSecondsMax,
		Resources: s.obs.Resources(s.cfg.Sender),
	}
	s.mu.Lock()
	snd.Problems = slices.Clone(s.problems)
	c := s.counters
	s.mu.Unlock()
	// Churn as served: the agent's staleness markers are among its own samples (AgentAddedSamples).
	wl.SeriesCreated = s.srv.Workload().NewRevisions() * int64(wl.SeriesPerTarget)
	if s.cfg.ExporterURL != "" {
		snd.ReadBack = "nothing to check against: the targets served a real exporter's page (exporterURL), not the workload's values"
		// The exporter's page, not the profile: its samples per scrape are what was served.
		wl.SeriesPerTarget = 0
		if served.Scrapes > 0 {
			wl.SeriesPerTarget = int(served.Samples / served.Scrapes)
		}
		wl.ActiveSeries = int64(wl.Targets * wl.SeriesPerTarget)
	}
	accounting := s.senderCounters(snd, c, served, loadEnd.Sub(start))
	if c == nil {
		return snd, nil, accounting
	}
	writes := map[string]*results.Write{}
	elapsed := time.Since(start).Seconds()
	for _, name := range s.cfg.StorageNames() {
		if s.cfg.RemoteStorages[name].DisableWrite {
			continue
		}
		ss, w, problems := s.account(name, c.Storages[name], served, wl.ActiveSeries, elapsed)
		snd.Storages = append(snd.Storages, ss)
		if w != nil {
			writes[name] = w
		}
		accounting = append(accounting, problems...)
	}
	return snd, writes, accounting
}

// senderCounters fills the sender's figures from the agent's counters c (nil when they could
// not be read, every figure then unknown with its reason) and says what does not add up:
// the samples tsbench served against those the agent scraped and took in. load is how
// long the load ran, over which the agent's CPU is counted per sample.
func (s *Stage) senderCounters(snd *results.Sender, c *targets.Counters, served targets.Served, load time.Duration) []string {
	sender := s.cfg.Sender
	if c == nil {
		why := fmt.Sprintf("the %s's counters could not be read (see problems)", sender)
		for _, figure := range []string{"scrapedSamples", "appendedSamples", "agentAddedSamples", "cpuSecondsPerMillionSamples"} {
			snd.Reasons = withReason(snd.Reasons, figure, why)
		}
		return []string{fmt.Sprintf("the %s's counters could not be read: no storage's account is known", sender)}
	}
	var accounting []string
	added := c.Appended - served.Samples
	snd.ScrapedSamples, snd.AppendedSamples, snd.AgentAddedSamples = c.Scraped, &c.Appended, &added
	if c.Scraped == nil {
		snd.Reasons = withReason(snd.Reasons, "scrapedSamples", fmt.Sprintf("%s does not count the samples it scraped", sender))
	}
	if c.Scraped != nil && *c.Scraped != served.Samples {
		msg := fmt.Sprintf("tsbench served %d samples, %s says it scraped %d (off by %d)",
			served.Samples, sender, *c.Scraped, served.Samples-*c.Scraped)
		if c.ScrapesTimedOut != nil && *c.ScrapesTimedOut > 0 {
			msg += fmt.Sprintf("; it timed out %d scrapes, whose pages tsbench may have written", *c.ScrapesTimedOut)
		}
		accounting = append(accounting, msg)
	}
	if added < 0 {
		accounting = append(accounting, fmt.Sprintf("tsbench served %d samples, %s took in only %d", served.Samples, sender, c.Appended))
	}
	switch ar := snd.Resources; {
	case ar == nil || ar.CPUCoresMean == nil:
		snd.Reasons = withReason(snd.Reasons, "cpuSecondsPerMillionSamples", fmt.Sprintf("the %s's CPU is unknown (resources.reasons)", sender))
	case c.Appended == 0:
		snd.Reasons = withReason(snd.Reasons, "cpuSecondsPerMillionSamples", fmt.Sprintf("the %s took in no sample", sender))
	default:
		v := *ar.CPUCoresMean * load.Seconds() / float64(c.Appended) * 1e6
		snd.CPUSecondsPerMillionSamples = &v
	}
	return accounting
}

// account is one storage's account from the agent's counters a (nil when the agent has
// none for it): its line of the sender section, its write section when the account is
// known (else nil), and what of it does not add up.
func (s *Stage) account(name string, a *targets.Account, served targets.Served, activeSeries int64, elapsed float64) (results.SenderStorage, *results.Write, []string) {
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
		accounting = append(accounting, fmt.Sprintf("%s: the account is not known from %s's counters: %s", name, s.cfg.Sender, a.Why))
	case ss.UnexplainedSamples != 0:
		accounting = append(accounting, fmt.Sprintf("%s: %s queued %d samples = acked %d + dropped %d + pending %d, off by %d its counters do not explain",
			name, s.cfg.Sender, a.In, a.Acked, a.In-a.Acked-a.Pending-ss.UnexplainedSamples, a.Pending, ss.UnexplainedSamples))
	}
	if !a.Known {
		return ss, nil, accounting
	}
	copies := max(1, s.cfg.URLReplicas(name))
	w := &results.Write{
		GeneratedSamples: a.In, AckedSamples: a.Acked, DroppedSamples: a.Dropped, PendingSamples: a.Pending,
		Retries: a.Retried, RequestsByStatus: map[string]int64{}, Copies: copies,
		TargetSamplesPerSecond: float64(activeSeries) / s.cfg.ScrapeInterval.Seconds() * float64(copies),
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

// acked is the agent's acked samples per storage at its newest counters read.
type acked struct {
	mu sync.Mutex // guards by
	by map[string]int64
}

func (a *acked) get(name string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.by[name]
}

// update takes the acked counts of the agent's counters c.
func (a *acked) update(c *targets.Counters) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.by = map[string]int64{}
	for name, acc := range c.Storages {
		a.by[name] = acc.Acked
	}
}
