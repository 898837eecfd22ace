package conformance

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/almost"
	"github.com/prometheus/prometheus/util/annotations"
)

// The reference TestConformanceLies reads its expectations from: Prometheus' engine in
// process, set as storagetest's receiver sets it, over the data the subset writes held in
// memory. Each eval is asked of it as conformance asks it (the query at the block's base,
// and the range check of an instant eval), over the data as written and over the data as
// the liar's record says the storage holds it; an eval reads what the liar touched when the
// two answers differ as the runner compares answers (labels, times, values within epsilon,
// annotations, an error or none).

// reference is the engine, the data written and the engine's answer to every eval over it
// (what an honest storage answers: cell none passes whole).
type reference struct {
	engine *promql.Engine
	placed []Placed
	data   held
	floats map[*Block][]series // each block's float series, as the read-back reads them
	honest map[*Eval]refAnswer
}

func newReference(w written) *reference {
	r := &reference{
		engine: promql.NewEngine(promql.EngineOpts{
			MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: lookback,
			EnableAtModifier: true, EnableNegativeOffset: true, EnableDelayedNameRemoval: true,
			NoStepSubqueryIntervalFn: func(int64) int64 { return time.Minute.Milliseconds() },
		}),
		placed: w.placed,
		data:   hold(w.data),
		floats: map[*Block][]series{},
		honest: map[*Eval]refAnswer{},
	}
	for i, p := range w.placed {
		r.floats[p.Block] = w.data[2*i]
		for _, e := range p.Evals {
			r.honest[e] = r.ask(r.data, p, e)
		}
	}
	return r
}

// held is data a storage holds: one series per label set, its samples in time order.
type held []series

// hold merges the blocks' series of the same labels (blocks are apart in time).
func hold(blocks [][]series) held {
	byLabels := map[string]*series{}
	for _, ss := range blocks {
		for _, s := range ss {
			k := s.labels.String()
			if byLabels[k] == nil {
				byLabels[k] = &series{labels: s.labels}
			}
			byLabels[k].samples = append(byLabels[k].samples, s.samples...)
		}
	}
	out := make(held, 0, len(byLabels))
	for _, s := range byLabels {
		slices.SortFunc(s.samples, func(a, b Sample) int { return cmp.Compare(a.T, b.T) })
		out = append(out, *s)
	}
	return out
}

// alter is h with each series passed through f, on a copy: h is the cells' common data.
func (h held) alter(f func(s series) series) held {
	out := make([]series, 0, len(h))
	for _, s := range h {
		s.samples = slices.Clone(s.samples)
		out = append(out, f(s))
	}
	return hold([][]series{out})
}

func (h held) Querier(int64, int64) (storage.Querier, error) {
	return heldQuerier{Querier: storage.NoopQuerier(), h: h}, nil
}

type heldQuerier struct {
	storage.Querier
	h held
}

func (q heldQuerier) Select(_ context.Context, _ bool, _ *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	set := &seriesSet{i: -1}
	for _, s := range q.h {
		if !matchesAll(ms, s.labels) || len(s.samples) == 0 {
			continue
		}
		smps := make([]chunks.Sample, len(s.samples))
		for i, x := range s.samples {
			smps[i] = heldSample{x}
		}
		set.ss = append(set.ss, storage.NewListSeries(s.labels, smps))
	}
	return set
}

type seriesSet struct {
	ss []storage.Series
	i  int
}

func (s *seriesSet) Next() bool                        { s.i++; return s.i < len(s.ss) }
func (s *seriesSet) At() storage.Series                { return s.ss[s.i] }
func (s *seriesSet) Err() error                        { return nil }
func (s *seriesSet) Warnings() annotations.Annotations { return nil }

// heldSample is a Sample as the engine reads it.
type heldSample struct{ s Sample }

func (x heldSample) T() int64                      { return x.s.T }
func (x heldSample) ST() int64                     { return 0 }
func (x heldSample) F() float64                    { return x.s.V }
func (x heldSample) H() *histogram.Histogram       { return nil }
func (x heldSample) FH() *histogram.FloatHistogram { return x.s.H }
func (x heldSample) Copy() chunks.Sample           { return x }
func (x heldSample) Type() chunkenc.ValueType {
	if x.s.H != nil {
		return chunkenc.ValFloatHistogram
	}
	return chunkenc.ValFloat
}

// refAnswer is the reference's answer to an eval: the query, and for an instant eval the
// runner asks again as a range query, that query's middle step.
type refAnswer struct {
	res, rng *refResult
}

// refResult is one query's answer, copied out of the engine's pools; its series in label
// order unless the eval is ordered.
type refResult struct {
	typ          parser.ValueType
	err          error
	warns, infos []string
	series       []refSeries
}

// refSeries is a series of an answer, a scalar's or a string's too.
type refSeries struct {
	labels labels.Labels
	points []refPoint
}

type refPoint struct {
	t int64
	f float64
	h *histogram.FloatHistogram
}

// ask asks the engine e of block p over h, as conformance asks a storage.
func (r *reference) ask(h held, p Placed, e *Eval) refAnswer {
	ctx := context.Background()
	expr := Shift(e.Expr, p.Base)
	run := func(q promql.Query, err error, at int64) *refResult {
		if err != nil {
			return &refResult{err: err}
		}
		defer q.Close()
		res := q.Exec(ctx)
		if res.Err != nil {
			return &refResult{err: res.Err}
		}
		out := &refResult{typ: res.Value.Type(), series: flat(res.Value, at)}
		out.warns, out.infos = res.Warnings.AsStrings("", 0, 0)
		slices.Sort(out.warns)
		slices.Sort(out.infos)
		if !e.isOrdered() {
			out.sort()
		}
		return out
	}
	if e.Range {
		q, err := r.engine.NewRangeQuery(ctx, h, nil, expr, time.UnixMilli(p.Base+e.Start), time.UnixMilli(p.Base+e.End), e.Step)
		return refAnswer{res: run(q, err, -1)}
	}
	at := p.Base + e.At
	q, err := r.engine.NewInstantQuery(ctx, h, nil, expr, time.UnixMilli(at))
	a := refAnswer{res: run(q, err, -1)}
	if e.rangeChecked() {
		m := time.Minute.Milliseconds()
		q, err := r.engine.NewRangeQuery(ctx, h, nil, expr, time.UnixMilli(at-m), time.UnixMilli(at+m), time.Minute)
		a.rng = run(q, err, at)
	}
	return a
}

// results are the answer's query results.
func (a refAnswer) results() []*refResult {
	if a.rng == nil {
		return []*refResult{a.res}
	}
	return []*refResult{a.res, a.rng}
}

func (r *refResult) sort() {
	slices.SortFunc(r.series, func(a, b refSeries) int { return labels.Compare(a.labels, b.labels) })
}

// flat is an answer's series, copied; at >= 0 keeps only a matrix's points at that time.
func flat(v parser.Value, at int64) []refSeries {
	var out []refSeries
	switch v := v.(type) {
	case promql.Scalar:
		out = append(out, refSeries{points: []refPoint{{t: v.T, f: v.V}}})
	case promql.String:
		out = append(out, refSeries{labels: labels.FromStrings("string", v.V)})
	case promql.Vector:
		for _, s := range v {
			out = append(out, refSeries{labels: s.Metric, points: []refPoint{{t: s.T, f: s.F, h: copyHistogram(s.H)}}})
		}
	case promql.Matrix:
		for _, s := range v {
			r := refSeries{labels: s.Metric}
			for _, p := range s.Floats {
				if at < 0 || p.T == at {
					r.points = append(r.points, refPoint{t: p.T, f: p.F})
				}
			}
			for _, p := range s.Histograms {
				if at < 0 || p.T == at {
					r.points = append(r.points, refPoint{t: p.T, h: copyHistogram(p.H)})
				}
			}
			if len(r.points) > 0 {
				out = append(out, r)
			}
		}
	}
	return out
}

func copyHistogram(h *histogram.FloatHistogram) *histogram.FloatHistogram {
	if h == nil {
		return nil
	}
	return h.Copy()
}

// sameAnswer tells whether two answers to an eval are the same as the runner compares them.
func sameAnswer(a, b refAnswer) bool {
	return sameResult(a.res, b.res) && (a.rng == nil || sameResult(a.rng, b.rng))
}

func sameResult(a, b *refResult) bool {
	if (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err != nil {
		return true
	}
	if !slices.Equal(a.warns, b.warns) || !slices.Equal(a.infos, b.infos) {
		return false
	}
	return slices.EqualFunc(a.series, b.series, func(s, t refSeries) bool {
		return labels.Equal(s.labels, t.labels) && slices.EqualFunc(s.points, t.points, func(p, q refPoint) bool {
			if p.t != q.t || (p.h == nil) != (q.h == nil) {
				return false
			}
			if p.h != nil {
				return p.h.Equals(q.h)
			}
			return almost.Equal(p.f, q.f, epsilon)
		})
	})
}

// errs tells an answer that is an error where the other is not.
func (a refAnswer) errs(than refAnswer) bool {
	return a.res.err != nil && than.res.err == nil || a.rng != nil && a.rng.err != nil && than.rng.err == nil
}
