package conformance

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/almost"
	"github.com/prometheus/prometheus/util/convertnhcb"

	"github.com/tsbench/tsbench/internal/query"
)

// nhcbSeries are the native histograms with custom buckets load_with_nhcb adds for the
// classic histograms of a load, made as the runner's appendCustomHistogram makes them (the
// module's convertnhcb), one series per classic family, a sample wherever it has one.
func nhcbSeries(classic []LoadSeries) ([]LoadSeries, error) {
	type family struct {
		labels labels.Labels
		at     map[int64]*convertnhcb.TempHistogram
	}
	fams := map[uint64]*family{}
	var order []uint64
	for _, s := range classic {
		suffix, name := convertnhcb.GetHistogramMetricBaseName(s.Labels.Get(model.MetricNameLabel))
		var set func(h *convertnhcb.TempHistogram, v float64)
		switch suffix {
		case convertnhcb.SuffixBucket:
			le, err := strconv.ParseFloat(s.Labels.Get(labels.BucketLabel), 64)
			if err != nil || math.IsNaN(le) {
				continue
			}
			set = func(h *convertnhcb.TempHistogram, v float64) { _ = h.SetBucketCount(le, v) }
		case convertnhcb.SuffixCount:
			set = func(h *convertnhcb.TempHistogram, v float64) { _ = h.SetCount(v) }
		case convertnhcb.SuffixSum:
			set = func(h *convertnhcb.TempHistogram, v float64) { _ = h.SetSum(v) }
		default:
			continue
		}
		base := convertnhcb.GetHistogramMetricBase(s.Labels, name)
		f := fams[base.Hash()]
		if f == nil {
			f = &family{labels: base, at: map[int64]*convertnhcb.TempHistogram{}}
			fams[base.Hash()] = f
			order = append(order, base.Hash())
		}
		for _, smp := range s.Samples {
			if smp.H != nil {
				continue
			}
			h := f.at[smp.T]
			if h == nil {
				t := convertnhcb.NewTempHistogram()
				h = &t
				f.at[smp.T] = h
			}
			set(h, smp.V)
		}
	}
	var out []LoadSeries
	for _, k := range order {
		f := fams[k]
		s := LoadSeries{Labels: f.labels}
		for t, th := range f.at {
			h, fh, err := th.Convert()
			if err != nil {
				return nil, err
			}
			if fh == nil {
				if err := h.Validate(); err != nil {
					return nil, err
				}
				fh = h.ToFloat(nil)
			}
			if err := fh.Validate(); err != nil {
				return nil, err
			}
			s.Samples = append(s.Samples, Sample{T: t, H: fh})
		}
		slices.SortFunc(s.Samples, func(a, b Sample) int { return cmp.Compare(a.T, b.T) })
		out = append(out, s)
	}
	return out, nil
}

// splitKinds parts a block's series into those of floats only and those with a native
// histogram.
func splitKinds(ss []series) (floats, hists []series) {
	for _, s := range ss {
		if slices.ContainsFunc(s.samples, func(x Sample) bool { return x.H != nil }) {
			hists = append(hists, s)
		} else {
			floats = append(floats, s)
		}
	}
	return floats, hists
}

// runs splits a series' samples into runs of one kind (floats, or histograms), in time
// order: a receiver appends a time series' floats before its histograms, so a series that
// changes kind goes as one time series per run.
func runs(ss []Sample) [][]Sample {
	var out [][]Sample
	for i := 0; i < len(ss); {
		j := i + 1
		for j < len(ss) && (ss[j].H == nil) == (ss[i].H == nil) {
			j++
		}
		out = append(out, ss[i:j])
		i = j
	}
	return out
}

func timeSeriesV1(ls []prompb.Label, run []Sample) prompb.TimeSeries {
	ts := prompb.TimeSeries{Labels: ls}
	ts.Samples, ts.Histograms = points(run, func(s Sample) prompb.Sample { return prompb.Sample{Timestamp: s.T, Value: s.V} },
		prompb.FromIntHistogram, prompb.FromFloatHistogram)
	return ts
}

func timeSeriesV2(refs []uint32, run []Sample) writev2.TimeSeries {
	ts := writev2.TimeSeries{LabelsRefs: refs, Metadata: writev2.Metadata{Type: writev2.Metadata_METRIC_TYPE_UNSPECIFIED}}
	ts.Samples, ts.Histograms = points(run, func(s Sample) writev2.Sample { return writev2.Sample{Value: s.V, Timestamp: s.T} },
		writev2.FromIntHistogram, writev2.FromFloatHistogram)
	return ts
}

// points are run's samples and histograms in a wire format's types (S, H), each histogram
// sent as an integer one where it is one (intHistogram); nil where run has none.
func points[S, H any](run []Sample, sample func(Sample) S,
	fromInt func(int64, *histogram.Histogram) H, fromFloat func(int64, *histogram.FloatHistogram) H,
) ([]S, []H) {
	var samples []S
	var hs []H
	for _, s := range run {
		switch h := intHistogram(s.H); {
		case h != nil:
			hs = append(hs, fromInt(s.T, h))
		case s.H != nil:
			hs = append(hs, fromFloat(s.T, s.H))
		default:
			samples = append(samples, sample(s))
		}
	}
	return samples, hs
}

// intHistogram is fh as an integer histogram, as an instrumented program sends a counter or
// gauge histogram of whole observations, or nil: fh is nil, has a count that is not a whole
// number, or is not a valid integer histogram (its count is not its buckets' sum, which a
// float histogram may have): a float histogram, sent as one, as the runner appends them all.
func intHistogram(fh *histogram.FloatHistogram) *histogram.Histogram {
	if fh == nil || !whole(fh.Count) || !whole(fh.ZeroCount) {
		return nil
	}
	pos, ok := deltas(fh.PositiveBuckets)
	neg, ok2 := deltas(fh.NegativeBuckets)
	if !ok || !ok2 {
		return nil
	}
	h := &histogram.Histogram{
		CounterResetHint: fh.CounterResetHint,
		Schema:           fh.Schema,
		ZeroThreshold:    fh.ZeroThreshold,
		ZeroCount:        uint64(fh.ZeroCount),
		Count:            uint64(fh.Count),
		Sum:              fh.Sum,
		PositiveSpans:    fh.PositiveSpans,
		NegativeSpans:    fh.NegativeSpans,
		PositiveBuckets:  pos,
		NegativeBuckets:  neg,
		CustomValues:     fh.CustomValues,
	}
	if h.Validate() != nil {
		return nil
	}
	return h
}

// whole reports whether f is a count an integer histogram holds exactly.
func whole(f float64) bool { return f >= 0 && f < 1<<53 && f == math.Trunc(f) }

// deltas are absolute bucket counts as an integer histogram's deltas, or false.
func deltas(counts []float64) ([]int64, bool) {
	out := make([]int64, len(counts))
	var prev int64
	for i, c := range counts {
		if !whole(c) {
			return nil, false
		}
		out[i], prev = int64(c)-prev, int64(c)
	}
	return out, true
}

// samePoint compares an answer's point with an expected value as the runner does: a float
// within epsilon, or a native histogram as compareNativeHistogram compares it, in the form
// the query API gives it (sameHistogram).
func samePoint(want parser.SequenceValue, got point) bool {
	switch {
	case want.Histogram != nil:
		return got.H != nil && sameHistogram(want.Histogram, got.H)
	case got.H != nil:
		return false
	}
	return almost.Equal(want.Value, got.V, epsilon)
}

// sameHistogram compares as the runner's compareNativeHistogram, over what the query API
// answers: count and sum within epsilon, and every bucket that is not empty, the zero bucket
// included, with the same bounds (so the same schema, custom bounds and zero threshold
// where it holds a count) and its count within epsilon. The counter reset hint is not in the
// answer: an eval that expects one is not applicable (ReasonResetHint).
func sameHistogram(want *histogram.FloatHistogram, got *query.HistogramPoint) bool {
	if !almost.Equal(want.Count, got.Count, epsilon) || !almost.Equal(want.Sum, got.Sum, epsilon) {
		return false
	}
	wb := apiBuckets(want)
	if len(wb) != len(got.Buckets) {
		return false
	}
	for i, b := range wb {
		g := got.Buckets[i]
		if b.Boundaries != g.Boundaries || b.Lower != g.Lower || b.Upper != g.Upper || !almost.Equal(b.Count, g.Count, epsilon) {
			return false
		}
	}
	return true
}

// apiBuckets are h's buckets as Prometheus' API writes them (jsonutil.MarshalHistogram):
// in the iterator's order, empty ones left out, with their boundary kind.
func apiBuckets(h *histogram.FloatHistogram) []query.Bucket {
	var out []query.Bucket
	for it := h.AllBucketIterator(); it.Next(); {
		b := it.At()
		if b.Count == 0 {
			continue
		}
		kind := 2
		switch {
		case b.LowerInclusive && b.UpperInclusive:
			kind = 3
		case b.LowerInclusive:
			kind = 1
		case b.UpperInclusive:
			kind = 0
		}
		out = append(out, query.Bucket{Boundaries: kind, Lower: b.Lower, Upper: b.Upper, Count: b.Count})
	}
	return out
}

// formatHistogram writes an answer's histogram as the API gives it.
func formatHistogram(h *query.HistogramPoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{{count:%v sum:%v buckets:[", h.Count, h.Sum)
	for i, bk := range h.Buckets {
		if i > 0 {
			b.WriteByte(' ')
		}
		lo, hi := "(", "]"
		if bk.Boundaries == 1 || bk.Boundaries == 3 {
			lo = "["
		}
		if bk.Boundaries == 1 || bk.Boundaries == 2 {
			hi = ")"
		}
		fmt.Fprintf(&b, "%s%v,%v%s:%v", lo, bk.Lower, bk.Upper, hi, bk.Count)
	}
	b.WriteString("]}}")
	return b.String()
}

// histogramSeries are the label sets of a block's native histogram series, those
// load_with_nhcb makes included.
func histogramSeries(b *Block) []labels.Labels {
	var out []labels.Labels
	for _, l := range b.Loads {
		for _, s := range l.Series {
			if slices.ContainsFunc(s.Samples, func(x Sample) bool { return x.H != nil }) {
				out = append(out, s.Labels)
			}
		}
	}
	return out
}

// readsHistograms reports whether an eval expects a native histogram, or one of its
// selectors matches one of its block's native histogram series hist (the selectors as
// Prometheus' parser finds them, matched as its engine matches them): the evals a storage
// without its block's native histograms cannot be expected to answer.
func readsHistograms(e *Eval, hist []labels.Labels) bool {
	for _, s := range e.series {
		if slices.ContainsFunc(s.vals, func(v parser.SequenceValue) bool { return v.Histogram != nil }) {
			return true
		}
	}
	if len(hist) == 0 {
		return false
	}
	expr, err := parser.ParseExpr(e.Expr)
	if err != nil {
		return false // it does not parse: it reads nothing
	}
	for _, sel := range parser.ExtractSelectors(expr) {
		if slices.ContainsFunc(hist, func(ls labels.Labels) bool { return matchesAll(sel, ls) }) {
			return true
		}
	}
	return false
}

// matchesAll reports whether a label set has every matcher of a selector.
func matchesAll(sel []*labels.Matcher, ls labels.Labels) bool {
	for _, m := range sel {
		if !m.Matches(ls.Get(m.Name)) {
			return false
		}
	}
	return true
}

// lastHistogram is a probe of the last native histogram sample of ss, or nil.
func lastHistogram(ss []series) *probe {
	return lastOf(ss, func(x Sample) bool { return x.H != nil })
}

// lastFloat is a probe of the last float sample of ss, or nil.
func lastFloat(ss []series) *probe {
	return lastOf(ss, func(x Sample) bool { return x.H == nil })
}

// lastOf is a probe of the last sample of ss for which is holds, or nil.
func lastOf(ss []series, is func(Sample) bool) *probe {
	for _, s := range slices.Backward(ss) {
		for _, x := range slices.Backward(s.samples) {
			if is(x) {
				return &probe{selector: nameSelector(s.labels), labels: s.labels, t: x.T}
			}
		}
	}
	return nil
}

// nameSelector selects the series of ls's metric name, or ls itself when it has none: a
// storage that renames labels (job to service_name), or leaves some series out of its
// answers, still shows that the data written is visible, where a selector of every label
// would wait in vain.
func nameSelector(ls labels.Labels) string {
	if name := ls.Get(model.MetricNameLabel); name != "" {
		return labels.FromStrings(model.MetricNameLabel, name).String()
	}
	return ls.String()
}

// keepsHistograms tells whether the storage answers the native histogram it acknowledged at
// pr: one that predates native histograms takes the request and drops them (VictoriaMetrics
// 1.79 skips the unknown field). It asks until the histogram shows, for as long as the floats
// took to show after the writes, and at least histogramWait: a storage may make each kind
// visible at its own pace.
func (r *runner) keepsHistograms(parent context.Context, pr probe, floatsTook time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(parent, max(floatsTook, histogramWait))
	defer cancel()
	api := r.api.With(url.Values{"nocache": {"1"}}, nil)
	var lastErr error // the storage's last complete answer, when it was an error
	for {
		res, err := api.Instant(ctx, pr.selector, time.UnixMilli(pr.t))
		switch {
		case err == nil && slices.ContainsFunc(res.Series, func(s query.Series) bool { return len(s.Histograms) > 0 }):
			return true, nil
		case err == nil:
			lastErr = nil
		case ctx.Err() == nil: // not a request this wait's own deadline cut short
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return false, parent.Err()
			}
			if lastErr != nil {
				return false, fmt.Errorf("ask for the native histogram %s: %w", pr.selector, lastErr)
			}
			return false, nil
		case <-time.After(visiblePoll):
		}
	}
}

// ReadsNativeHistograms reports whether the eval at file:line expects a native histogram or
// reads one of its block's native histogram series (readsHistograms): what a storage without
// them cannot be expected to answer (the e2e tests class a storage's failures by it).
func (s *Suite) ReadsNativeHistograms(file string, line int) bool {
	for _, f := range s.Files {
		if f.Name != file {
			continue
		}
		for _, b := range f.Blocks {
			for _, e := range b.Evals {
				if e.Line == line {
					return e.native
				}
			}
		}
	}
	return false
}
