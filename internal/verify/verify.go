// Package verify reads back what each storage stored and compares it with what the workload
// wrote, bit for bit, and runs PromQL probes and the rules on every storage side by side. It
// reads through the query API (query.API), or through Prometheus remote read for a storage
// without one.
//
// Invariant: what is expected is recomputed by the generator itself (Scrape), never read from
// a storage; a comparison is never loosened to hide a storage's behaviour: known behaviours
// are configured on the storage (VictoriaMetrics -search.latencyOffset=0s) and reported
// as they are. Every sample checked lands in at most one count of results.Verify.
package verify

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// Target is one storage to verify.
type Target struct {
	Name string
	// ReadURL is the storage's Prometheus query API root; "" when it has none (no readURL, or
	// readURL failed the check at the start of the run). Then the samples are read back
	// through RemoteReadURL, and no probes or rules are run.
	ReadURL string
	// RemoteReadURL is the storage's Prometheus remote read endpoint, used when ReadURL is "".
	RemoteReadURL string
	Client        *storage.Client
	Kind          storage.Kind // "": unknown
	// Protocol is what the storage was written in: with otlp-http, the read-back expects
	// the names Prometheus' OTLP translation gives (see otlpNames).
	Protocol config.Protocol
	// OTLPLabels is how the storage stores OTLP resource attributes: with otlp-http, the
	// read-back looks for job and instance under its names (config.OTLPLabelNames).
	OTLPLabels config.OTLPLabels
	// NotAcked says a sample at t (ms) was in a write the storage did not ack in full
	// (remotewrite.Writer.NotAcked): not looked for, nor counted when found
	// (notAckedSamples). Nil: every sample written was acked.
	NotAcked func(t int64) bool
}

// Workload is what verify uses of *workload.Generator.
type Workload interface {
	Targets() int
	SeriesPerTarget() int
	ScrapeTime(target int, k int64) int64
	Scrape(app workload.Appender, target int, k int64) (values, staleMarkers int)
	Revision(target int, k int64) int64
}

// DefaultSettle is a Verifier's Settle: VictoriaMetrics makes ingested rows searchable about a
// second after it acknowledges them, and a busy machine needs the rest.
const DefaultSettle = 3 * time.Second

// Verifier checks every target over one window of the run.
type Verifier struct {
	wl      Workload
	targets []Target
	rules   []query.NamedExpr
	// rulesApart leaves the rule comparison out of Run: its caller compares the rules of
	// every storage by CompareRules (Only).
	rulesApart bool
	log        *slog.Logger
	seed       uint64
	budget     int                      // verifySamples
	interval   int64                    // scrape interval, ms
	copiesOf   func(storage string) int // writeURLReplicas of a storage
	otlp       map[string]string        // sample name → name stored after OTLP ingestion, where they differ

	// Settle is waited before the first read, so that what a storage acknowledged just before
	// Run is searchable: VictoriaMetrics makes ingested rows searchable about a second after
	// it acknowledges them (it flushes its in-memory buffers every second). Default 3s.
	Settle time.Duration
	// StaleDelay is how long after a staleness marker the instant query that must not find
	// the series runs. Default: a tenth of the scrape interval, at most 1s, at least 2ms
	// (so a marker shifted by 1ms is still before it).
	StaleDelay time.Duration
	// RuleWindow is how far back from the end of the checked window the rules are run as
	// range queries. Default 10m.
	RuleWindow time.Duration
	// IgnoreNames are metric names the workload did not write but that share its series'
	// labels: in scrape mode, the agent's own series per target (up, scrape_duration_seconds,
	// ...). Answers of these names are left out of the read-back.
	IgnoreNames []string
	// AgentMarkers says an agent wrote the staleness markers, at times of its own: a NaN a
	// storage returns after a series' last sample (beyond the shift allowed) is its marker,
	// not an unexpected sample. VictoriaMetrics returns markers in range reads as NaN.
	AgentMarkers bool
	// AgentChanges checks each storage against what the agent sent, not what was served: the
	// changes every storage shows alike are the agent's, in SenderChanges (agent.go).
	AgentChanges bool
	// SenderChanges is what the last Run found the agent changed, with AgentChanges.
	SenderChanges *results.SenderChanges
}

// New builds a verifier of targets for the workload gen (a whole workload or one shard's
// part); with no rules, the rule comparison is left out.
func New(cfg *config.Config, gen Workload, targets []Target, rules []query.NamedExpr, logger *slog.Logger) *Verifier {
	return newVerifier(cfg, gen, targets, rules, logger)
}

// NewFor builds a verifier of targets for any workload: scrape mode checks what the agent
// stored against the scrapes tsbench served (internal/targets).
func NewFor(cfg *config.Config, wl Workload, targets []Target, rules []query.NamedExpr, logger *slog.Logger) *Verifier {
	return newVerifier(cfg, wl, targets, rules, logger)
}

func newVerifier(cfg *config.Config, wl Workload, targets []Target, rules []query.NamedExpr, logger *slog.Logger) *Verifier {
	interval := cfg.ScrapeInterval
	var otlp map[string]string
	if p, ok := wl.(interface{ Series(s int) workload.Series }); ok {
		series := make([]workload.Series, wl.SeriesPerTarget())
		for i := range series {
			series[i] = p.Series(i)
		}
		otlp = otlpNames(series)
	}
	return &Verifier{
		otlp: otlp,
		wl:   wl, targets: targets, rules: rules, log: logger.With("component", "verify"),
		seed: cfg.Seed, budget: cfg.VerifySamples, interval: interval.Milliseconds(),
		copiesOf:   func(name string) int { return max(1, cfg.URLReplicas(name)) },
		Settle:     DefaultSettle,
		StaleDelay: min(time.Second, max(2*time.Millisecond, interval/10)),
		RuleWindow: 10 * time.Minute,
	}
}

// Run reads back and probes every target over [from, to] (data written by the run: at the
// end of a run, to is just before the writer's GeneratedBefore, so that every sample expected
// was generated; during the load, verifyDelay ago) and
// returns each storage's verify section, by name, after waiting Settle (not counted in
// DurationSeconds). A read that fails counts in the storage's ReadErrors, its samples in
// UncheckedSamples; Run itself does not fail.
func (v *Verifier) Run(ctx context.Context, from, to time.Time) map[string]*results.Verify {
	select {
	case <-ctx.Done():
	case <-time.After(v.Settle):
	}
	start := time.Now()
	w := window{from: from.UnixMilli(), to: to.UnixMilli()}
	out := make(map[string]*results.Verify, len(v.targets))
	if w.to < w.from || v.budget <= 0 {
		for _, t := range v.targets {
			out[t.Name] = &results.Verify{Errors: []string{fmt.Sprintf("nothing to check: the window [%s, %s] is empty",
				from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))}}
		}
		return out
	}
	units := plan(v.wl, v.seed, w, v.interval, v.budget)
	for i := range units {
		units[i].sentBy = w.to
		expect(v.wl, &units[i], v.interval)
	}
	if v.AgentChanges {
		units, v.SenderChanges = v.agentUnits(ctx, units)
	}
	v.log.Info("verify planned", "reads", len(units), "from", time.UnixMilli(w.from).UTC(), "to", time.UnixMilli(w.to).UTC())

	var mu sync.Mutex // guards out
	var wg sync.WaitGroup
	for _, t := range v.targets {
		wg.Go(func() {
			log := v.log.With("storage", t.Name)
			r := newReader(t)
			units := v.forProtocol(t, units, log)
			res, replica, _ := v.readBack(ctx, r, t, units)
			res.CheckedFrom, res.CheckedTo = time.UnixMilli(w.from).UTC(), time.UnixMilli(w.to).UTC()
			if r.api != nil {
				res.Probes = runProbes(ctx, r, probes(units, w, v.interval, replica))
			}
			res.DurationSeconds = time.Since(start).Seconds()
			log.Info("verified", "verdict", res.Verdict(), "via", res.ReadBackVia, "different_probes", res.DifferentProbes())
			mu.Lock()
			out[t.Name] = res
			mu.Unlock()
		})
	}
	wg.Wait()
	if !v.rulesApart {
		for name, c := range v.CompareRules(ctx, from, to) {
			c.Into(out[name])
		}
	}
	return out
}

// RuleComparison is one storage's part of the rule comparison.
type RuleComparison struct {
	Diffs       []results.RuleDiff // the rules whose answers differ from another storage's
	Compared    int                // the rules whose answers were compared with another storage's
	NotCompared []string           // the rules the window is too short for
}

// Into puts c in res, when there is one.
func (c RuleComparison) Into(res *results.Verify) {
	if res != nil {
		res.RuleDiffs, res.RulesCompared, res.RulesNotCompared = c.Diffs, c.Compared, c.NotCompared
	}
}

// CompareRules runs every rule as a range query over the end of [from, to] on each storage
// with a query API and compares the answers, rule by rule; by storage.
func (v *Verifier) CompareRules(ctx context.Context, from, to time.Time) map[string]RuleComparison {
	w := window{from: from.UnixMilli(), to: to.UnixMilli()}
	spans, notCompared := ruleSpans(v.rules, w, v.interval, v.RuleWindow)
	var mu sync.Mutex // guards answers
	answers := map[string][]ruleAnswer{}
	var wg sync.WaitGroup
	for _, t := range v.targets {
		r := newReader(t)
		if r.api == nil {
			continue
		}
		wg.Go(func() {
			a := runRulesAs(ctx, r, v.rules, spans, otlpRenames(t))
			mu.Lock()
			answers[t.Name] = a
			mu.Unlock()
		})
	}
	wg.Wait()
	diffs, compared := compareRules(v.rules, answers)
	out := make(map[string]RuleComparison, len(answers))
	for name := range answers {
		d := diffs[name]
		if d == nil {
			d = []results.RuleDiff{}
		}
		out[name] = RuleComparison{Diffs: d, Compared: compared[name], NotCompared: notCompared}
	}
	return out
}

// Only is v for the storages keep keeps alone, without the rules, nil when it keeps none: a
// read-back over a window of their own (bench: a storage that had not settled the run's last
// samples when the drain ended is read back up to the oldest of those), whose rules are
// compared with every other storage's by CompareRules over a window common to all.
func (v *Verifier) Only(keep func(name string) bool) *Verifier {
	o := *v
	o.targets, o.rulesApart = nil, true
	for _, t := range v.targets {
		if keep(t.Name) {
			o.targets = append(o.targets, t)
		}
	}
	if len(o.targets) == 0 {
		return nil
	}
	return &o
}

// newReader reads t through its query API, or through remote read where it has none.
func newReader(t Target) *reader {
	if t.ReadURL != "" {
		return &reader{api: query.NewAPI(t.Client, t.ReadURL)}
	}
	return &reader{remote: &remoteReader{client: t.Client, url: t.RemoteReadURL}}
}

// forProtocol returns the units as t stores them: for OTLP writes, renamed, with job and
// instance under the names otlpLabels gives.
func (v *Verifier) forProtocol(t Target, units []unit, log *slog.Logger) []unit {
	if t.Protocol != config.ProtocolOTLP {
		return units
	}
	job, instance := config.OTLPLabelNames(t.OTLPLabels)
	log.Info("read-back of OTLP writes expects Prometheus' default translation (UnderscoreEscapingWithSuffixes) of metric names: _total on counters, unit suffixes; job and instance as otlpLabels says",
		"renamed_metrics", len(v.otlp), "otlp_labels", t.OTLPLabels, "job_label", job, "instance_label", instance)
	return otlpLabelUnits(renameUnits(units, v.otlp), t.OTLPLabels)
}

// readBack reads every unit from one storage and compares. It returns the url_replica value
// the probes select when the storage keeps writeURLReplicas copies apart ("" when it does not),
// and each unit's missing samples (-1: not read), by which the checks during the run tell a
// complete scrape (continuous.go).
func (v *Verifier) readBack(ctx context.Context, r *reader, target Target, units []unit) (*results.Verify, string, []int64) {
	res := &results.Verify{ReadBackVia: "queryAPI"}
	if r.api == nil {
		res.ReadBackVia = "remoteRead"
	}
	t := &tally{notAcked: target.NotAcked}
	var exp *tally // the raw export cross-check, where the storage offers it
	if target.Kind.Family().Export && r.api != nil {
		exp = &tally{notAcked: target.NotAcked}
	}
	c := v.newCopies(target.Name, target.Kind)
	var notRead int64
	var missed []missedUnit // units whose read found none of their series: attribute searches them
	missing := make([]int64, len(units))
	for i := range units {
		u := &units[i]
		missing[i] = -1
		if len(u.series) == 0 {
			continue
		}
		if ctx.Err() != nil {
			notRead++
			res.UncheckedSamples += u.samples * int64(c.n)
			continue
		}
		res.Reads++
		if r.api == nil {
			// Raw samples, as the export: markers are stored or missing, not honoured.
			got, err := r.remote.read(ctx, u.selector, u.lo+1, u.hi)
			if err != nil {
				readFailed(res, fmt.Errorf("remote read %s [%d, %d]: %w", render(u.selector), u.lo+1, u.hi, err))
				res.UncheckedSamples += u.samples * int64(c.n)
				continue
			}
			v.ignore(got)
			v.dropAgentMarkers(u, got)
			c.learn(got)
			before := t.MissingSamples
			compareUnit(u, got, c.n, v.interval/2-1, true, t)
			missing[i] = t.MissingSamples - before
			continue
		}
		q := render(u.selector) + fmt.Sprintf("[%dms]", u.hi-u.lo)
		got, err := r.instant(ctx, q, u.hi)
		if err == nil && got.Type != "matrix" {
			err = fmt.Errorf("result type %s, want matrix", got.Type)
		}
		if err != nil {
			readFailed(res, fmt.Errorf("read %s at %d: %w", q, u.hi, err))
			res.UncheckedSamples += u.samples * int64(c.n)
			continue
		}
		v.ignore(got)
		v.dropAgentMarkers(u, got)
		c.learn(got)
		if m, ok := missedBy(i, u, got); ok {
			missed = append(missed, m)
		}
		before := t.MissingSamples
		compareUnit(u, got, c.n, v.interval/2-1, false, t)
		missing[i] = t.MissingSamples - before
		if exp != nil {
			res.Reads++
			if err := v.exportUnit(ctx, r, u, c, exp); err != nil {
				readFailed(res, err)
			}
		}
		if u.marker {
			res.Reads++
			if err := v.checkStaleness(ctx, r, u, c.n, t); err != nil {
				readFailed(res, err)
			}
		}
	}
	if notRead > 0 {
		res.Errors = append(res.Errors, fmt.Sprintf("%d reads not made: %v", notRead, context.Cause(ctx)))
	}
	t.fill(res)
	v.attribute(ctx, r, target, units, missed, c.n, res)
	if exp != nil {
		res.Export = &results.ExportCheck{SampleCounts: exp.SampleCounts}
		res.Examples = append(res.Examples, exp.examples[:min(len(exp.examples), maxExamples-min(maxExamples, len(res.Examples)))]...)
	}
	return res, c.replica, missing
}

// readFailed counts a failed read; the first maxExamples are listed.
func readFailed(res *results.Verify, err error) {
	res.ReadErrors++
	if len(res.Errors) < maxExamples {
		res.Errors = append(res.Errors, err.Error())
	}
}

// copies is how many url_replica copies of each series one storage holds. With
// writeURLReplicas > 1 each copy is written with extra_label=url_replica=N: a storage that
// takes the parameter (storage.Family's ExtraLabel: VictoriaMetrics) adds the label and keeps
// N series; one that ignores it (Prometheus) gets N identical copies of one series and keeps
// one. So the count follows the answers: N once an answer carries the label, 1 once one has
// series without it; before any answer, N only for a family that takes it.
type copies struct {
	n, written int
	replica    string // the smallest url_replica value seen
}

func (v *Verifier) newCopies(name string, kind storage.Kind) *copies {
	c := &copies{n: 1, written: v.copiesOf(name)}
	if kind.Family().ExtraLabel {
		c.n = c.written
	}
	return c
}

// learn sets the count from an answer that has series.
func (c *copies) learn(got *result) {
	if len(got.Series) == 0 {
		return
	}
	c.n = 1
	for _, s := range got.Series {
		if _, r := splitReplica(s.Labels); r != "" {
			c.n = c.written
			if c.replica == "" || r < c.replica {
				c.replica = r
			}
		}
	}
}

// exportUnit reads u's raw samples through /api/v1/export (VictoriaMetrics') and compares them
// with markers required: the export shows what is stored, staleness markers as null.
func (v *Verifier) exportUnit(ctx context.Context, r *reader, u *unit, c *copies, t *tally) error {
	sel := render(u.selector)
	got, err := r.export(ctx, sel, u.lo+1, u.hi)
	if err != nil {
		return fmt.Errorf("export %s [%d, %d]: %w", sel, u.lo+1, u.hi, err)
	}
	v.ignore(got)
	v.dropAgentMarkers(u, got)
	c.learn(got)
	compareUnit(u, got, c.n, v.interval/2-1, true, t)
	return nil
}

// checkStaleness asks for the unit's series just after their staleness markers: PromQL must
// not return a series whose last sample is a marker. Range selectors cannot show it
// (Prometheus drops markers from them), an instant query can, on every storage alike.
func (v *Verifier) checkStaleness(ctx context.Context, r *reader, u *unit, n int, t *tally) error {
	at := u.markerT + v.StaleDelay.Milliseconds()
	q := render(u.selector)
	got, err := r.instant(ctx, q, at)
	if err == nil && got.Type != "vector" {
		err = fmt.Errorf("result type %s, want vector", got.Type)
	}
	if err != nil {
		return fmt.Errorf("staleness read %s at %d: %w", q, at, err)
	}
	returned := map[string]bool{}
	for _, s := range got.Series {
		ls, replica := splitReplica(s.Labels)
		returned[keyOf(ls)+"\x00"+replica] = true
	}
	for key, es := range u.series {
		if len(es.samples) == 0 || es.held || !es.samples[len(es.samples)-1].stale {
			continue // no marker, or a held one, which the storage may refuse (series.go)
		}
		t.CheckedStaleMarkers += int64(n) // each copy of the series must honour the marker
		for r := range returned {
			if len(r) > len(key) && r[:len(key)] == key && r[len(key)] == 0 {
				t.staleIgnored++
				t.example("staleness ignored: %s returned %dms after its marker at %d", render(es.labels), at-u.markerT, u.markerT)
			}
		}
	}
	return nil
}

// ignore removes the series of IgnoreNames from an answer.
func (v *Verifier) ignore(got *result) {
	if len(v.IgnoreNames) == 0 {
		return
	}
	got.Series = slices.DeleteFunc(got.Series, func(s series) bool {
		for _, l := range s.Labels {
			if l.Name == "__name__" {
				return slices.Contains(v.IgnoreNames, l.Value)
			}
		}
		return false
	})
}

// dropAgentMarkers removes, with AgentMarkers, the agent's staleness markers from an answer:
// every marker a raw export shows as one, and the NaN points a query answer holds after the
// last sample expected of their series (the query API renders a marker as a plain NaN). An
// agent writes a marker when it drops a target, which may be any time after the last scrape,
// 72ms too (issue 29: the flaky TestScrapeVMAgent). The series' last sample came back at the
// agent's time of its scrape, as the unit's series with a number there show it (every series
// of a scrape gets one time): a NaN there is that sample (a NaN value's copy, or a number the
// storage changed), any other NaN from half an interval before it on is a marker. Where no
// series shows that time: after a number every later NaN is a marker (no NaN value was written
// after it); after a NaN value, "after" is beyond three times the largest shift the series'
// numbers show (the agent's own scrape times against the pages served), and at least 100ms.
func (v *Verifier) dropAgentMarkers(u *unit, got *result) {
	if !v.AgentMarkers {
		return
	}
	for i := range got.Series {
		s := &got.Series[i]
		ls, _ := splitReplica(s.Labels)
		es := u.series[keyOf(ls)]
		if es == nil || len(es.samples) == 0 {
			continue
		}
		last := es.samples[len(es.samples)-1]
		if at := v.scrapedAt(u, got, last.t); len(at) > 0 {
			// A NaN at the scrape's time is the copy of a NaN value, or a storage's change of
			// a number: the comparison judges it. Any other NaN near or after it is a marker.
			s.Points = slices.DeleteFunc(s.Points, func(p point) bool {
				return isStale(p.V) || math.IsNaN(p.V) && p.T > last.t-v.interval/2 && !at[p.T]
			})
			continue
		}
		if !math.IsNaN(last.v) {
			s.Points = slices.DeleteFunc(s.Points, func(p point) bool { return isStale(p.V) || p.T > last.t && math.IsNaN(p.V) })
			continue
		}
		var shift int64
		for _, e := range es.samples {
			if math.IsNaN(e.v) {
				continue
			}
			best := v.interval / 2
			for _, p := range s.Points {
				if !math.IsNaN(p.V) {
					best = min(best, abs(p.T-e.t))
				}
			}
			if best < v.interval/2 {
				shift = max(shift, best)
			}
		}
		after := last.t + min(v.interval/2-1, max(100, 3*shift))
		s.Points = slices.DeleteFunc(s.Points, func(p point) bool { return isStale(p.V) || p.T > after && math.IsNaN(p.V) })
	}
}

// scrapedAt is the times the unit's series whose sample served at t is a number came back at,
// near t: the agent's time of that scrape (every series of a scrape gets one).
func (v *Verifier) scrapedAt(u *unit, got *result, t int64) map[int64]bool {
	at := map[int64]bool{}
	for _, s := range got.Series {
		ls, _ := splitReplica(s.Labels)
		es := u.series[keyOf(ls)]
		if es == nil {
			continue
		}
		k, ok := slices.BinarySearchFunc(es.samples, t, func(e expSample, t int64) int { return cmp.Compare(e.t, t) })
		if !ok || math.IsNaN(es.samples[k].v) {
			continue
		}
		best, bestD := int64(0), v.interval/2
		for _, p := range s.Points {
			if d := abs(p.T - t); d < bestD && !math.IsNaN(p.V) {
				best, bestD = p.T, d
			}
		}
		if bestD < v.interval/2 {
			at[best] = true
		}
	}
	return at
}
