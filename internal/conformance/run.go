package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// SuiteName is where the embedded test files come from.
const SuiteName = "github.com/prometheus/prometheus v0.310.0 promql/promqltest/testdata"

// EnableParserFeatures turns on the parser features the test runner turns on: the module's
// parser keeps them as package variables, which a Prometheus server sets from
// --enable-feature at its start. Call it once, before any parsing (tsbench conformance does
// at its start): the layout reads the files' expressions with it.
func EnableParserFeatures() {
	parser.EnableExperimentalFunctions = true
	parser.ExperimentalDurationExpr = true
	parser.EnableExtendedRangeSelectors = true
	parser.EnableBinopFillModifiers = true
}

// Reasons an eval is not applicable: what no storage can answer over the query API, and an
// OTLP storage as a whole. Data a storage acknowledged and does not answer is no reason: the
// evals that read it fail (results.KindDataDropped).
const (
	ReasonResetHint    = "expects a counter reset hint, which the query API does not answer"
	ReasonAbsoluteTime = "depends on absolute time"
	ReasonOTLP         = "OTLP write: Prometheus' translation would rename the suite's series"
)

// requestTimeout bounds each write request and each eval's queries: a storage that hangs
// fails the eval ("rejected", timeout) instead of holding the suite.
const requestTimeout = 30 * time.Second

// visiblePoll is how often the written data is asked for until it shows.
const visiblePoll = 200 * time.Millisecond

// histogramWait is the least time a storage gets to show the native histogram it
// acknowledged, once the floats show (keepsHistograms).
const histogramWait = 10 * time.Second

// concurrency is how many evals are asked at once: enough to hide a round trip, few enough
// to leave the storage's cores to answering.
const concurrency = 4

// Run writes the suite's blocks to one storage, asks every eval and counts the outcome. now
// places the data: its newest block ends a few minutes before it. An error means the storage
// could not be tested at all (no readURL, data never became visible); a block the storage
// refuses or an eval it fails is counted, and the rest goes on.
func Run(ctx context.Context, s *Suite, name string, st config.Storage, now time.Time, logger *slog.Logger) (*results.Conformance, error) {
	log := logger.With("component", "conformance", "storage", name)
	if st.ReadURL == "" || len(st.WriteURLs()) == 0 || st.DisableWrite {
		return nil, fmt.Errorf("storage %s: conformance needs both a writeURL and a readURL", name)
	}
	started := time.Now()
	rc, err := storage.NewClient(name, st, storage.Read, concurrency)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	wc, err := storage.NewClient(name, st, storage.Write, 1)
	if err != nil {
		return nil, err
	}
	defer wc.Close()
	r := &runner{
		api:       query.NewAPI(rc, st.ReadURL),
		w:         &writer{client: wc, url: st.WriteURLs()[0], proto: st.WriteProtocol()},
		out:       &results.Conformance{Suite: SuiteName, Kinds: map[string]int{}, NotApplicableReasons: map[string]int{}},
		byFile:    map[string]*results.ConformanceFile{},
		byFunc:    map[string]*results.ConformanceCount{},
		byFeature: map[string]*results.ConformanceCount{},
		log:       log,
	}
	var blocks []*Block
	for _, f := range s.Files {
		blocks = append(blocks, f.Blocks...)
	}
	placed, span := Layout(blocks, now)
	r.out.SpanHours = span.Hours()
	log.Info("conformance started", "evals", s.Evals(), "blocks", len(placed), "span_hours", fmt.Sprintf("%.0f", span.Hours()))
	cases, err := r.writeBlocks(ctx, placed)
	if err != nil {
		return nil, err
	}
	written := time.Now()
	r.evalAll(ctx, cases)
	r.finish(s)
	r.out.Seconds = time.Since(started).Seconds()
	log.Info("conformance done", "passed", r.out.Passed, "failed", r.out.Failed, "not_applicable", r.out.NotApplicable,
		"seconds", fmt.Sprintf("%.1f", r.out.Seconds), "write_and_wait_seconds", fmt.Sprintf("%.1f", written.Sub(started).Seconds()))
	return r.out, nil
}

type runner struct {
	api   *query.API
	w     *writer
	log   *slog.Logger
	added map[string]string // labels the storage adds to every series, taken off its answers

	mu        sync.Mutex // guards out, byFile, byFunc and byFeature
	out       *results.Conformance
	byFile    map[string]*results.ConformanceFile  // per test file
	byFunc    map[string]*results.ConformanceCount // per function, aggregation or operator
	byFeature map[string]*results.ConformanceCount // per feature (Eval.feature)
}

// evalCase is one eval to ask at its block's base. lost, when set, is the data the eval
// reads that the storage refused or dropped: a failure to answer it is of that kind.
type evalCase struct {
	p    Placed
	e    *Eval
	lost *lostData
}

// lostData is data a storage did not keep: refused (results.KindDataRejected) or
// acknowledged and dropped (results.KindDataDropped), and what happened to it.
type lostData struct {
	kind, what string
}

// probe is a series and time that must be visible once the writes are.
type probe struct {
	selector string
	labels   labels.Labels
	t        int64
}

// writeBlocks writes every block (each refused one is counted, its evals failed as "data
// rejected"), waits until the data is visible, and returns the evals to ask. Evals that are
// not applicable are counted here. A block's native histogram series go in requests of their
// own: a storage that refuses them (Prometheus 2.42 refuses some the suite has), or
// acknowledges them and does not answer them (VictoriaMetrics 1.79), is asked every eval all
// the same, and an eval that reads them and is not answered right fails as "data rejected" or
// "data dropped after ack" (evalCase.lost); its float series serve the others. The answer to
// the written data tells the labels the storage adds to every series (addedLabels).
func (r *runner) writeBlocks(ctx context.Context, placed []Placed) ([]evalCase, error) {
	var (
		todo  []Placed
		data  [][]series // a block's float series at 2i, its histogram series at 2i+1
		evals [][]*Eval
	)
	for _, p := range placed {
		var es []*Eval
		for _, e := range p.Evals {
			reason := blockReason(r.w.proto)
			if reason == "" {
				reason = evalReason(e)
			}
			if reason != "" {
				r.notApplicable(p.File, e, reason)
				continue
			}
			es = append(es, e)
		}
		if len(es) > 0 {
			todo, evals = append(todo, p), append(evals, es)
			floats, hists := splitKinds(blockSeries(p, intervals(p.Block)))
			data = append(data, floats, hists)
		}
	}
	errs := r.w.writeAll(ctx, data)
	if len(r.w.retries) > 0 {
		r.out.WriteRetries = r.w.retries
		r.log.Warn("write requests retried", "by_status", fmt.Sprint(r.w.retries))
	}
	var (
		cases      []evalCase
		last, hist *probe
	)
	for i, p := range todo {
		es := evals[i]
		if err := errs[2*i]; err != nil {
			r.reject(p, es, err)
			continue
		}
		var lost *lostData
		if err := errs[2*i+1]; err != nil {
			err = fmt.Errorf("native histograms: %w", err)
			r.refused(p, err)
			lost = &lostData{kind: results.KindDataRejected, what: "the block's native histograms were refused: " + err.Error()}
		} else {
			hist = cmp.Or(lastHistogram(data[2*i+1]), hist)
		}
		for _, e := range es {
			c := evalCase{p: p, e: e}
			if e.native {
				c.lost = lost
			}
			cases = append(cases, c)
		}
		last = cmp.Or(lastFloat(data[2*i]), last)
	}
	last = cmp.Or(last, hist) // no floats at all: wait for the histograms
	if n := len(r.out.RejectedBlocks); n > 1 {
		r.log.Warn("blocks refused", "blocks", n, "of", len(todo))
	}
	var took time.Duration
	if last != nil {
		waited := time.Now()
		answered, err := r.waitVisible(ctx, *last)
		if err != nil {
			return nil, err
		}
		took = time.Since(waited)
		r.log.Debug("written data visible", "wait_seconds", fmt.Sprintf("%.1f", took.Seconds()))
		if added := addedLabels(last.labels, answered); len(added) > 0 {
			r.added, r.out.AddedLabels = added, added
			r.log.Info("the storage adds labels to every series: answers are compared without them", "labels", labels.FromMap(added).String())
		}
	}
	if hist != nil {
		keeps, err := r.keepsHistograms(ctx, *hist, took)
		if err != nil {
			return nil, err
		}
		if !keeps {
			r.log.Warn("the storage acknowledged native histograms and does not answer them: the evals that read them fail as data dropped after ack", "series", hist.selector)
			dropped := &lostData{kind: results.KindDataDropped, what: "the native histograms written were acknowledged and are not answered"}
			for i := range cases {
				if cases[i].e.native && cases[i].lost == nil {
					cases[i].lost = dropped
				}
			}
		}
	}
	if last != nil {
		r.lost(ctx, todo, data, errs, cases)
	}
	return cases, nil
}

// lost reads the data written back (readBack), counts what it found missing, and marks the
// evals that read it: a failure of theirs is "data dropped after ack". When a read failed,
// the count is unknown: DroppedSamples is left 0 and ReadBackError says why (droppedSamples
// is null in results.json); what the other reads found still marks its evals.
func (r *runner) lost(ctx context.Context, todo []Placed, data [][]series, errs []error, cases []evalCase) {
	losses, err := r.readBack(ctx, todo, data, errs)
	n := 0
	for _, l := range losses {
		n += l.floats
	}
	if err != nil {
		r.out.ReadBackError = err.Error()
		r.log.Warn("read back the data written: the samples acknowledged and not answered are unknown", "err", err)
	} else {
		r.out.DroppedSamples = n
	}
	if len(losses) > 0 {
		r.log.Warn("the storage acknowledged float samples and does not answer them: the evals that read them fail as data dropped after ack",
			"blocks", len(losses), "samples", n)
	}
	for i, c := range cases {
		if l := losses[c.p.Block]; c.lost == nil && l != nil && l.readsLost(c.e) {
			cases[i].lost = &lostData{kind: results.KindDataDropped, what: l.String()}
		}
	}
}

// blockReason is why no eval applies to a storage written with proto, or "".
func blockReason(proto config.Protocol) string {
	if proto == config.ProtocolOTLP {
		return ReasonOTLP
	}
	return ""
}

// reject counts a block the storage refused, and fails its evals es as "data rejected": it
// holds none of their data.
func (r *runner) reject(p Placed, es []*Eval, err error) {
	r.refused(p, err)
	for _, e := range es {
		r.fail(p.File, e, &failure{kind: results.KindDataRejected, expected: "the block's samples stored", got: err.Error()})
	}
}

// refused records a block whose samples, or some of them, the storage refused, with its answer.
func (r *runner) refused(p Placed, err error) {
	if len(r.out.RejectedBlocks) == 0 { // the first; the count follows
		r.log.Warn("block refused", "file", p.File, "line", p.Evals[0].Line, "err", err)
	}
	r.out.RejectedBlocks = append(r.out.RejectedBlocks, results.ConformanceBlock{File: p.File, Line: p.Evals[0].Line, Answer: err.Error()})
}

// evalReason is why an eval does not apply, or "": it expects a native histogram's counter
// reset hint, which the query API does not answer; or it depends on absolute time.
func evalReason(e *Eval) string {
	for _, s := range e.series {
		if slices.ContainsFunc(s.vals, func(v parser.SequenceValue) bool { return v.CounterResetHintSet }) {
			return ReasonResetHint
		}
	}
	if timeValued(e.Expr) == "absolute" {
		return ReasonAbsoluteTime
	}
	return ""
}

// waitVisible waits until the last sample written can be queried, and returns the series
// answered: a storage may take a moment (VictoriaMetrics flushes its buffers every second).
func (r *runner) waitVisible(ctx context.Context, pr probe) ([]query.Series, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// VictoriaMetrics would keep answering the first, empty answer from its cache for seconds:
	// nocache=1 asks it afresh (other storages ignore the parameter).
	api := r.api.With(url.Values{"nocache": {"1"}}, nil)
	var last error
	for {
		res, err := api.Instant(ctx, pr.selector, time.UnixMilli(pr.t))
		if err == nil && len(res.Series) > 0 {
			return res.Series, nil
		}
		last = cmp.Or(err, errors.New("no series yet"))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the samples written are not visible to %s after a minute: %w", pr.selector, last)
		case <-time.After(visiblePoll):
		}
	}
}

// addedLabels are the labels a storage answered, for a series written with the labels
// written, beside those: the read-back's "added" (internal/verify), told by the series of
// the answer with every label written and the fewest others (the selector of the written
// labels also matches a series of the block with more). Nil when none has every label written.
func addedLabels(written labels.Labels, got []query.Series) map[string]string {
	var best map[string]string
	for _, s := range got {
		all := true
		written.Range(func(l labels.Label) {
			if v, ok := s.Metric[l.Name]; !ok || v != l.Value {
				all = false
			}
		})
		if !all {
			continue
		}
		extra := map[string]string{}
		for k, v := range s.Metric {
			if !written.Has(k) {
				extra[k] = v
			}
		}
		if best == nil || len(extra) < len(best) {
			best = extra
		}
	}
	if len(best) == 0 {
		return nil
	}
	return best
}

func (r *runner) evalAll(ctx context.Context, cases []evalCase) {
	next := make(chan evalCase)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for c := range next {
				f, added := r.eval(ctx, c.p, c.e)
				switch {
				case f == nil:
					r.pass(c.p.File, c.e, added)
				case c.lost != nil && f.kind != results.KindRejected: // an error answered is the storage's own
					f.kind, f.got = c.lost.kind, f.got+"; "+c.lost.what
					r.fail(c.p.File, c.e, f)
				default:
					r.fail(c.p.File, c.e, f)
				}
			}
		})
	}
	for _, c := range cases {
		select {
		case next <- c:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
}

// eval asks one eval as the runner does: the query, then for an instant eval the same query
// as a range query around it (its middle step must agree). added tells an answer that held
// labels the storage adds to every series, compared without them.
func (r *runner) eval(ctx context.Context, p Placed, e *Eval) (f *failure, added bool) {
	if ctx.Err() != nil {
		return &failure{kind: results.KindRejected, expected: e.describe(), got: "not asked: canceled"}, false
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	expr := Shift(e.Expr, p.Base)
	shiftValues := timeValued(e.Expr) == "shift"
	var (
		res *query.Result
		err error
	)
	if e.Range {
		res, err = r.api.Range(ctx, expr, time.UnixMilli(p.Base+e.Start), time.UnixMilli(p.Base+e.End), e.Step)
	} else {
		res, err = r.api.Instant(ctx, expr, time.UnixMilli(p.Base+e.At))
	}
	switch {
	case err != nil && e.isFail() && query.IsPromQLError(err): // not a timeout, nor no answer
		return checkError(e, err), false
	case err != nil:
		want := e.describe()
		if len(e.features) > 0 { // a storage without the feature rejects it: say which
			want += " (needs --enable-feature=" + strings.Join(e.features, ",") + ")"
		}
		return &failure{kind: errorKind(err), expected: want, got: errorText(err)}, false
	case e.isFail():
		a := relative(res, p.Base, shiftValues, r.added)
		return wrong(e.describe(), "%s", formatAnswer(a)), a.added
	}
	a := relative(res, p.Base, shiftValues, r.added)
	if f := compare(e, a); f != nil {
		return f, a.added
	}
	if f := checkAnnotations(e, res.Warnings, res.Infos); f != nil {
		return f, a.added
	}
	if !e.rangeChecked() {
		return nil, a.added
	}
	at := p.Base + e.At
	res, err = r.api.Range(ctx, expr, time.UnixMilli(at-time.Minute.Milliseconds()), time.UnixMilli(at+time.Minute.Milliseconds()), time.Minute)
	if err != nil {
		return &failure{kind: errorKind(err), expected: "as a range query: " + e.describe(), got: errorText(err)}, a.added
	}
	ra := relative(res, p.Base, shiftValues, r.added)
	added = a.added || ra.added
	a = atStep(ra, e.At)
	if e.scalar != nil && len(a.series) > 0 {
		a = answer{typ: "scalar", series: a.series[:1]}
	}
	if f := compare(e, a); f != nil {
		f.expected = "as a range query: " + f.expected
		return f, added
	}
	return nil, added
}

// rangeChecked tells an instant eval the runner asks again as a range query (from At-1m to
// At+1m by 1m, its middle step compared): not an ordered one, nor one with range() or an
// expected range vector or string.
func (e *Eval) rangeChecked() bool {
	return !e.Range && !e.excludeRange && !e.isOrdered() && !strings.Contains(e.Expr, "range()")
}

func (r *runner) counts(file string, e *Eval, add func(passed, failed, na *int)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add(&r.out.Passed, &r.out.Failed, &r.out.NotApplicable)
	f := r.byFile[file]
	if f == nil {
		f = &results.ConformanceFile{File: file}
		r.byFile[file] = f
	}
	add(&f.Passed, &f.Failed, &f.NotApplicable)
	for _, name := range Categories(e.Expr) {
		c := r.byFunc[name]
		if c == nil {
			c = &results.ConformanceCount{Name: name}
			r.byFunc[name] = c
		}
		add(&c.Passed, &c.Failed, &c.NotApplicable)
	}
	c := r.byFeature[e.feature()]
	if c == nil {
		c = &results.ConformanceCount{Name: e.feature()}
		r.byFeature[e.feature()] = c
	}
	add(&c.Passed, &c.Failed, &c.NotApplicable)
}

// pass counts a passed eval; added tells one passed without the labels the storage adds.
func (r *runner) pass(file string, e *Eval, added bool) {
	r.counts(file, e, func(p, _, _ *int) { *p++ })
	if added {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.out.PassedWithAddedLabels++
	}
}

func (r *runner) fail(file string, e *Eval, f *failure) {
	r.counts(file, e, func(_, fl, _ *int) { *fl++ })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.Kinds[f.kind]++
	r.out.Failures = append(r.out.Failures, results.ConformanceFailure{
		File: file, Line: e.Line, Expr: e.Expr, Kind: f.kind, Expected: f.expected, Got: f.got,
	})
}

func (r *runner) notApplicable(file string, e *Eval, reason string) {
	r.counts(file, e, func(_, _, na *int) { *na++ })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.NotApplicableReasons[reason]++
}

// finish puts the per-file and per-function figures in order, with each file's features.
func (r *runner) finish(s *Suite) {
	for _, f := range s.Files {
		c := r.byFile[f.Name]
		if c == nil {
			c = &results.ConformanceFile{File: f.Name}
		}
		c.Features = f.Features
		r.out.Files = append(r.out.Files, *c)
	}
	for _, name := range slices.Sorted(maps.Keys(r.byFunc)) {
		r.out.Functions = append(r.out.Functions, *r.byFunc[name])
	}
	for _, name := range results.ConformanceFeatures() {
		c := r.byFeature[name]
		if c == nil {
			c = &results.ConformanceCount{Name: name}
		}
		r.out.Features = append(r.out.Features, *c)
	}
	slices.SortFunc(r.out.Failures, func(a, b results.ConformanceFailure) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
}
