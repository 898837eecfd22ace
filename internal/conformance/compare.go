package conformance

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/almost"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
)

// epsilon is the test runner's relative tolerance on values (promqltest defaultEpsilon).
const epsilon = 0.000001

// failure is a failed check: its kind, what was expected and what came.
type failure struct {
	kind, expected, got string
}

func wrong(expected, got string, args ...any) *failure {
	return &failure{kind: results.KindWrongAnswer, expected: expected, got: fmt.Sprintf(got, args...)}
}

// checkError compares the error a storage answered with an eval that expects one.
func checkError(e *Eval, err error) *failure {
	msg := errorText(err)
	var want string
	switch {
	case e.failMsg != "" && e.failMsg != msg:
		want = "error " + strconv.Quote(e.failMsg)
	case e.failRe != nil && !e.failRe.MatchString(msg):
		want = "error matching " + e.failRe.String()
	case len(e.expects["fail"]) > 0 && !e.expects["fail"][0].match(msg):
		want = "error matching " + e.expects["fail"][0].String()
	default:
		return nil
	}
	return &failure{kind: results.KindWrongAnswer, expected: want, got: "error " + strconv.Quote(msg)}
}

// errorText is the query error's message as the engine writes it: Prometheus' API puts
// `invalid parameter "query": ` before a parse error.
func errorText(err error) string {
	if qe, ok := errors.AsType[*query.Error](err); ok {
		return strings.TrimPrefix(qe.Msg, `invalid parameter "query": `)
	}
	return err.Error()
}

// errorKind is the kind of an error answered where a result was expected: an engine that
// panicked (results.KindPanic: a runtime error recovered, in the message Prometheus' engine
// gives it) or one that rejected the query.
func errorKind(err error) string {
	if qe, ok := errors.AsType[*query.Error](err); ok && strings.Contains(qe.Msg, "unexpected error: runtime error: ") {
		return results.KindPanic
	}
	return results.KindRejected
}

// checkAnnotations compares warnings and infos with the eval's expectations, as the runner's
// checkAnnotations does.
func checkAnnotations(e *Eval, warnings, infos []string) *failure {
	if f := checkAnnoKind(e, "warn", e.warn, warnings); f != nil {
		return f
	}
	return checkAnnoKind(e, "info", e.info, infos)
}

func checkAnnoKind(e *Eval, kind string, required bool, got []string) *failure {
	exp := e.expects[kind]
	got = slices.Clone(got)
	for i, g := range got {
		got[i] = patPosition.ReplaceAllString(g, "")
	}
	if (required || len(exp) > 0) && len(got) == 0 {
		want := kind + " annotation"
		if len(exp) > 0 {
			want = kind + " matching " + exp[0].String()
		}
		return &failure{kind: results.KindMissingAnnotation, expected: want, got: "none"}
	}
	for _, x := range exp {
		if !slices.ContainsFunc(got, x.match) {
			return &failure{kind: results.KindMissingAnnotation, expected: kind + " matching " + x.String(), got: strings.Join(got, "; ")}
		}
	}
	if len(exp) > 0 {
		for _, g := range got {
			if !slices.ContainsFunc(exp, func(x expectation) bool { return x.match(g) }) {
				return &failure{kind: results.KindExtraAnnotation, expected: "only the expected " + kind + " annotations", got: g}
			}
		}
	}
	if len(e.expects["no_"+kind]) > 0 && len(got) > 0 {
		return &failure{kind: results.KindExtraAnnotation, expected: "no " + kind + " annotation", got: strings.Join(got, "; ")}
	}
	return nil
}

// patPosition is the position a server adds to an annotation for its query (" (1:6)"), which
// the runner's messages, taken from the engine, do not have.
var patPosition = regexp.MustCompile(` \(\d+:\d+\)$`)

// answer is a query result relative to the block: times in ms from the test start, and
// time-valued answers with the base taken off.
type answer struct {
	typ    string // vector, matrix, scalar, string
	series []answerSeries
	str    string
	added  bool // labels the storage adds to every series were taken off a series
}

type answerSeries struct {
	labels labels.Labels
	points []point // in time order, floats and histograms
}

// point is one point of an answer: a float, or a native histogram (H).
type point struct {
	T int64
	V float64
	H *query.HistogramPoint
}

// relative turns an API result into an answer at the block's time: base off every
// timestamp, and off every value when the answer is a time (shiftValues), and the labels the
// storage adds to every series (added, name to value) off every series. A matrix the storage
// sorted by its labels is sorted again without them.
func relative(r *query.Result, base int64, shiftValues bool, added map[string]string) answer {
	a := answer{typ: r.Type, str: r.String}
	sorted := true
	var prev labels.Labels
	for i, s := range r.Series {
		ls := labels.FromMap(s.Metric)
		if i > 0 && labels.Compare(prev, ls) > 0 {
			sorted = false
		}
		prev = ls
		if del := addedNames(ls, added); len(del) > 0 {
			ls = labels.NewBuilder(ls).Del(del...).Labels()
			a.added = true
		}
		as := answerSeries{labels: ls}
		for _, p := range s.Points {
			if shiftValues { // a time in seconds, exact to the millisecond: shifted in integer ms
				p.V = float64(int64(math.Round(p.V*1000))-base) / 1000
			}
			as.points = append(as.points, point{T: p.T - base, V: p.V})
		}
		for _, h := range s.Histograms {
			as.points = append(as.points, point{T: h.T - base, H: &h})
		}
		slices.SortStableFunc(as.points, func(a, b point) int { return cmp.Compare(a.T, b.T) })
		a.series = append(a.series, as)
	}
	if a.added && a.typ == "matrix" && sorted {
		slices.SortStableFunc(a.series, func(x, y answerSeries) int { return labels.Compare(x.labels, y.labels) })
	}
	return a
}

// addedNames are the names of the labels of ls that are labels the storage adds, with the
// value it adds.
func addedNames(ls labels.Labels, added map[string]string) []string {
	var out []string
	for name, v := range added {
		if ls.Get(name) == v {
			out = append(out, name)
		}
	}
	return out
}

// compare checks an answer against the eval's expectation as the runner's compareResult.
func compare(e *Eval, a answer) *failure {
	switch a.typ {
	case "matrix":
		return compareMatrix(e, a)
	case "vector":
		return compareVector(e, a, e.isOrdered())
	case "scalar":
		if e.scalar == nil {
			return wrong(e.describe(), "scalar %s", formatAnswer(a))
		}
		if v := a.series[0].points[0].V; !almost.Equal(*e.scalar, v, epsilon) {
			return wrong(e.describe(), "scalar %v", v)
		}
	case "string":
		if e.str == nil || *e.str != a.str {
			return wrong(e.describe(), "string %q", a.str)
		}
	default:
		return wrong(e.describe(), "result type %q", a.typ)
	}
	return nil
}

func compareVector(e *Eval, a answer, ordered bool) *failure {
	if e.scalar != nil {
		return wrong(e.describe(), "vector %s", formatAnswer(a))
	}
	seen := map[uint64]bool{}
	for pos, s := range a.series {
		h := s.labels.Hash()
		exp, ok := e.series[h]
		if !ok || len(s.points) == 0 {
			return wrong(e.describe(), "unexpected series %s in %s", s.labels, formatAnswer(a))
		}
		if ordered && exp.pos != pos+1 {
			return wrong(e.describe(), "%s at position %d in %s", s.labels, pos+1, formatAnswer(a))
		}
		if !samePoint(exp.vals[0], s.points[0]) {
			return wrong(e.describe(), "%s %s", s.labels, formatPoints(s.points[:1]))
		}
		seen[h] = true
	}
	for h, exp := range e.series {
		if !seen[h] {
			return wrong(e.describe(), "no %s in %s", exp.labels, formatAnswer(a))
		}
	}
	return nil
}

func compareMatrix(e *Eval, a answer) *failure {
	if e.isOrdered() {
		return wrong(e.describe(), "a matrix, which has no order")
	}
	if e.scalar != nil {
		return wrong(e.describe(), "matrix %s", formatAnswer(a))
	}
	if !slices.IsSortedFunc(a.series, func(x, y answerSeries) int { return labels.Compare(x.labels, y.labels) }) {
		return wrong("a matrix sorted by labels", "%s", formatAnswer(a))
	}
	seen := map[uint64]bool{}
	for _, s := range a.series {
		h := s.labels.Hash()
		exp, ok := e.series[h]
		if !ok {
			return wrong(e.describe(), "unexpected series %s in %s", s.labels, formatAnswer(a))
		}
		seen[h] = true
		var (
			want []parser.SequenceValue
			at   []int64
		)
		for i, v := range exp.vals {
			t := e.Start + int64(i)*e.Step.Milliseconds()
			if !e.Range && !e.rangeVector || t > e.End {
				return wrong(e.describe(), "a matrix with more points than the query's range has")
			}
			if !v.Omitted {
				want, at = append(want, v), append(at, t)
			}
		}
		if len(want) != len(s.points) {
			return wrong(e.describe(), "%d points for %s: %s", len(s.points), s.labels, formatPoints(s.points))
		}
		for i, w := range want {
			if g := s.points[i]; g.T != at[i] || !samePoint(w, g) {
				return wrong(e.describe(), "%s: %s", s.labels, formatPoints(s.points))
			}
		}
	}
	for h, exp := range e.series {
		if !seen[h] {
			return wrong(e.describe(), "no %s in %s", exp.labels, formatAnswer(a))
		}
	}
	return nil
}

// atStep is the range-mode check's vector: each series' point at t (the runner's check of an
// instant eval through a range query around it).
func atStep(a answer, t int64) answer {
	v := answer{typ: "vector"}
	for _, s := range a.series {
		for _, p := range s.points {
			if p.T == t {
				v.series = append(v.series, answerSeries{labels: s.labels, points: []point{p}})
				break
			}
		}
	}
	return v
}

// describe is what the eval expects, in the test file's notation.
func (e *Eval) describe() string {
	switch {
	case e.isFail():
		return "an error"
	case e.scalar != nil:
		return "scalar " + strconv.FormatFloat(*e.scalar, 'g', -1, 64)
	case e.str != nil:
		return "string " + strconv.Quote(*e.str)
	case len(e.series) == 0:
		return "no series"
	}
	var lines []string
	for _, s := range e.series {
		vals := make([]string, len(s.vals))
		for i, v := range s.vals {
			switch {
			case v.Omitted:
				vals[i] = "_"
			case v.Histogram != nil:
				vals[i] = v.Histogram.TestExpression()
			default:
				vals[i] = strconv.FormatFloat(v.Value, 'g', -1, 64)
			}
		}
		lines = append(lines, s.labels.String()+" "+strings.Join(vals, " "))
	}
	slices.Sort(lines)
	return strings.Join(lines, "; ")
}

const maxShown = 10

func formatAnswer(a answer) string {
	if len(a.series) == 0 {
		return "no series"
	}
	var parts []string
	for i, s := range a.series {
		if i == maxShown {
			parts = append(parts, fmt.Sprintf("… %d more", len(a.series)-maxShown))
			break
		}
		parts = append(parts, s.labels.String()+" "+formatPoints(s.points))
	}
	return strings.Join(parts, "; ")
}

func formatPoints(ps []point) string {
	var b strings.Builder
	for i, p := range ps {
		if i == maxShown {
			fmt.Fprintf(&b, " … %d more", len(ps)-maxShown)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if p.H != nil {
			b.WriteString(formatHistogram(p.H))
		} else {
			b.WriteString(strconv.FormatFloat(p.V, 'g', -1, 64))
		}
		if len(ps) > 1 {
			b.WriteString("@" + (time.Duration(p.T) * time.Millisecond).String())
		}
	}
	return b.String()
}
