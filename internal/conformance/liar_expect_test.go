package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/liar"
)

// What TestConformanceLies expects of conformance, from the liar's record and the reference.

// recorded indexes the liar's record: "labels@t" of each sample it told about, and "labels"
// of each series it told about.
type recorded map[string]bool

func record(l *liar.Liar) recorded {
	r := recorded{}
	for _, t := range l.Told() {
		if t.Series != "" {
			r[t.Series+"@"+strconv.FormatInt(t.T, 10)], r[t.Series] = true, true
		}
	}
	return r
}

func (r recorded) sample(ls labels.Labels, t int64) bool {
	return r[ls.String()+"@"+strconv.FormatInt(t, 10)]
}

func (r recorded) series(ls labels.Labels) bool { return r[ls.String()] }

// recordHolds returns what differs when the record is not of samples written for which is
// holds, each told once.
func recordHolds(v *lieVerdict, what string, is func(Sample) bool) string {
	wrote := map[string]Sample{}
	for _, s := range v.ref.data {
		for _, x := range s.samples {
			wrote[s.labels.String()+"@"+strconv.FormatInt(x.T, 10)] = x
		}
	}
	seen := map[string]bool{}
	for _, t := range v.liar.Told() {
		k := t.Series + "@" + strconv.FormatInt(t.T, 10)
		if x, ok := wrote[k]; !ok || !is(x) || seen[k] || t.N != 1 {
			return fmt.Sprintf("the liar's record holds %s %d times: want %s written, once; ", k, t.N, what)
		}
		seen[k] = true
	}
	return ""
}

// without is the data written less the samples the liar told about (dropped).
func (v *lieVerdict) without() held {
	return v.ref.data.alter(func(s series) series {
		s.samples = slices.DeleteFunc(s.samples, func(x Sample) bool { return v.told.sample(s.labels, x.T) })
		return s
	})
}

// bumped is the data written with each sample the liar told about one float64 up.
func (v *lieVerdict) bumped() held {
	return v.ref.data.alter(func(s series) series {
		for i, x := range s.samples {
			if v.told.sample(s.labels, x.T) {
				s.samples[i].V = math.Nextafter(x.V, math.Inf(1))
			}
		}
		return s
	})
}

// relabeled is the data written with each series the liar told about under the labels f
// gives it.
func (v *lieVerdict) relabeled(f func(labels.Labels) labels.Labels) held {
	return v.ref.data.alter(func(s series) series {
		if v.told.series(s.labels) {
			s.labels = f(s.labels)
		}
		return s
	})
}

// stripped takes l off an answer's series, as conformance takes the labels a storage adds
// off its answers, and tells whether one held it.
func stripped(l labels.Label) func(e *Eval, a refAnswer) bool {
	return func(e *Eval, a refAnswer) bool {
		had := false
		for _, r := range a.results() {
			for i, s := range r.series {
				if s.labels.Get(l.Name) == l.Value {
					had, r.series[i].labels = true, labels.NewBuilder(s.labels).Del(l.Name).Labels()
				}
			}
			if !e.isOrdered() {
				r.sort()
			}
		}
		return had
	}
}

// hidden leaves out of an answer's vectors and matrices the series the liar hides.
func (v *lieVerdict) hidden(_ *Eval, a refAnswer) bool {
	for _, r := range a.results() {
		if r.typ == parser.ValueTypeVector || r.typ == parser.ValueTypeMatrix {
			r.series = slices.DeleteFunc(r.series, func(s refSeries) bool { return v.hides(s.labels) })
		}
	}
	return false
}

// hides asks the liar whether it leaves a series with labels ls out of its answers: a
// vector of exactly those labels (label_replace over vector(1)) answered without it.
func (v *lieVerdict) hides(ls labels.Labels) bool {
	k := ls.String()
	if h, ok := v.hid[k]; ok {
		return h
	}
	expr := "vector(1)"
	ls.Range(func(l labels.Label) {
		expr = fmt.Sprintf("label_replace(%s, %s, %s, \"\", \"\")", expr, strconv.Quote(l.Name), strconv.Quote(l.Value))
	})
	v.hid[k] = answeredSeries(v.liar, expr) == 0
	return v.hid[k]
}

// answeredSeries is how many series the liar answers to expr, -1 on an error.
func answeredSeries(l *liar.Liar, expr string) int {
	u := l.URL + "/api/v1/query?" + url.Values{"query": {expr}, "time": {strconv.FormatInt(lieNow.Unix(), 10)}}.Encode()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		return -1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var a struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&a) != nil {
		return -1
	}
	return len(a.Data.Result)
}

// readsHidden tells an eval that reads, in its block, a float series of a metric name the
// liar hid samples of (one of its selectors matches one): the read-back finds those samples
// missing, and a failure of the eval is blamed on them (docs/conformance.md, Read back).
func (v *lieVerdict) readsHidden(p Placed, e *Eval) bool {
	names := map[string]bool{}
	for _, s := range v.ref.floats[p.Block] {
		for _, x := range s.samples {
			if v.told.sample(s.labels, x.T) {
				names[s.labels.Get(model.MetricNameLabel)] = true
			}
		}
	}
	expr, err := parser.ParseExpr(e.Expr)
	if err != nil {
		return false
	}
	for _, sel := range parser.ExtractSelectors(expr) {
		for _, s := range v.ref.floats[p.Block] {
			if names[s.labels.Get(model.MetricNameLabel)] && matchesAll(sel, s.labels) {
				return true
			}
		}
	}
	return false
}

// expected is what conformance must answer: the kind of each failed eval by line, and the
// evals passed with labels the storage adds.
type expected struct {
	failed      map[int]string
	addedPassed int
}

// expect asks the reference every eval over the data the lie left, shown as the lie shows
// it: an answer that differs from the honest one is a failure of the lie's kind, or rejected
// where it is an error.
func (v *lieVerdict) expect(ef effect) expected {
	want := expected{failed: map[int]string{}}
	data := ef.held
	if data == nil {
		data = v.ref.data
	}
	for _, p := range v.ref.placed {
		for _, e := range p.Evals {
			if ef.whole[p.Block] {
				want.failed[e.Line] = results.KindDataRejected
				continue
			}
			a, honest := v.ref.ask(data, p, e), v.ref.honest[e]
			added := ef.shown != nil && ef.shown(e, a)
			switch {
			case sameAnswer(honest, a):
				if added {
					want.addedPassed++
				}
			case a.errs(honest):
				want.failed[e.Line] = results.KindRejected
			default:
				want.failed[e.Line] = ef.kind(p, e)
			}
		}
	}
	return want
}

// verdictDiff returns what differs between conformance's outcome and the expected one: each
// eval's verdict, and the counts overall, by kind and by feature.
func verdictDiff(v *lieVerdict, want expected) string {
	out := v.out
	kinds := map[string]int{}
	byFeature := map[string]*results.ConformanceCount{}
	for _, name := range results.ConformanceFeatures() {
		byFeature[name] = &results.ConformanceCount{Name: name}
	}
	for _, p := range v.ref.placed {
		for _, e := range p.Evals {
			if k := want.failed[e.Line]; k != "" {
				kinds[k]++
				byFeature[e.feature()].Failed++
			} else {
				byFeature[e.feature()].Passed++
			}
		}
	}
	var msg string
	if passed := len(v.ref.honest) - len(want.failed); out.Passed != passed || out.Failed != len(want.failed) || out.NotApplicable != 0 || len(out.NotApplicableReasons) != 0 {
		msg += fmt.Sprintf("passed %d, failed %d, not applicable %d %v: want %d, %d, 0; ", out.Passed, out.Failed, out.NotApplicable, out.NotApplicableReasons, passed, len(want.failed))
	}
	got := map[int]string{}
	for _, f := range out.Failures {
		got[f.Line] = f.Kind
	}
	if diff := cmp.Diff(want.failed, got); diff != "" {
		msg += fmt.Sprintf("failed evals by line, the reference (-) and conformance (+):\n%s", diff)
	}
	if diff := cmp.Diff(kinds, out.Kinds); diff != "" {
		msg += fmt.Sprintf("failures by kind (-want +got):\n%s", diff)
	}
	var features []results.ConformanceCount
	for _, name := range results.ConformanceFeatures() {
		features = append(features, *byFeature[name])
	}
	if diff := cmp.Diff(features, out.Features); diff != "" {
		msg += fmt.Sprintf("per feature (-want +got):\n%s", diff)
	}
	return msg + wantCount("passedWithAddedLabels", int64(want.addedPassed), int64(out.PassedWithAddedLabels))
}
