package verify

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
)

// Tolerances of the cross-storage rule comparison (issue 5): a raw selection must come back
// as written, up to float formatting; a computed expression may differ by summation order.
const (
	rawTolerance      = 1e-9
	computedTolerance = 1e-6
)

// selectorOnly matches an expression that only selects series: `name`, `name{...}` or
// `{...}` (no function, operator, range or offset).
var selectorOnly = regexp.MustCompile(`^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*(\{[^{}]*\})?\s*$`)

func isRawSelection(expr string) bool {
	return strings.TrimSpace(expr) != "" && selectorOnly.MatchString(expr)
}

// ruleAnswer is one storage's range result for one rule; neither when the rule was not run.
type ruleAnswer struct {
	res *result
	err error
}

// Lookback is how far before an evaluation time expr reads samples: its largest range (of a
// range selector or a subquery) plus offset, nested subqueries added up; an instant selector
// counts its offset only; 0 when the expression does not parse.
func Lookback(expr string) time.Duration {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return 0
	}
	return lookbackOf(e)
}

func lookbackOf(n parser.Node) time.Duration {
	switch e := n.(type) {
	case *parser.MatrixSelector:
		if vs, ok := e.VectorSelector.(*parser.VectorSelector); ok {
			return e.Range + vs.OriginalOffset
		}
		return e.Range
	case *parser.SubqueryExpr:
		return e.Range + e.OriginalOffset + lookbackOf(e.Expr)
	case *parser.VectorSelector:
		return e.OriginalOffset
	}
	var most time.Duration
	for _, c := range parser.Children(n) {
		most = max(most, lookbackOf(c))
	}
	return most
}

// ruleSpan is one rule's range query, [from, end] by step; from > end when the window is too
// short for the rule.
type ruleSpan struct{ from, end, step int64 }

// ruleSpans gives every rule's range query over the common range (ruleRange), and names the
// rules whose lookback is longer than the checked window, each with what it needs. A rule's
// query starts where every series written from the window's start fills its lookback:
// earlier, a rate over a series younger than its range is each engine's extrapolation
// (Prometheus' and MetricsQL's differ by design), not the data.
func ruleSpans(rules []query.NamedExpr, w window, interval int64, ruleWindow time.Duration) ([]ruleSpan, []string) {
	start, end, step := ruleRange(w, interval, ruleWindow)
	spans := make([]ruleSpan, len(rules))
	var notCompared []string
	for i, rule := range rules {
		need := Lookback(rule.Expr)
		from := max(start, (w.from+need.Milliseconds()+step-1)/step*step)
		spans[i] = ruleSpan{from: from, end: end, step: step}
		if from > end {
			notCompared = append(notCompared, fmt.Sprintf("%s (needs %s of data)", rule.Name, need))
		}
	}
	return spans, notCompared
}

// ruleRange is the rules' common range: the last RuleWindow of the checked window (or all of
// it), with a step of one scrape interval rounded up to a whole second, start and end on
// multiples of the step so that no storage realigns them.
func ruleRange(w window, interval int64, ruleWindow time.Duration) (start, end, step int64) {
	step = max(1000, (interval+999)/1000*1000)
	end = w.to / step * step
	start = max(w.from, end-ruleWindow.Milliseconds())
	start = (start + step - 1) / step * step
	return start, end, step
}

// runRules runs every rule as a range query over its span on one storage; a rule the window
// is too short for is not run.
func runRules(ctx context.Context, r *reader, rules []query.NamedExpr, spans []ruleSpan) []ruleAnswer {
	out := make([]ruleAnswer, len(rules))
	for i, rule := range rules {
		s := spans[i]
		if s.from > s.end {
			continue
		}
		res, err := r.rangeQuery(ctx, rule.Expr, s.from, s.end, s.step)
		if err == nil && res.Type != "matrix" {
			err = fmt.Errorf("result type %s, want matrix", res.Type)
		}
		out[i] = ruleAnswer{res: res, err: err}
	}
	return out
}

// compareRules compares, rule by rule, the answers of the storages that answered it and lists,
// per storage, each rule that differs from another storage's answer (both sides list it). A
// rule is compared only when at least two storages answered it: a single answer differs from
// nothing. Then a storage that did not answer it (the engine rejected it, or the request
// failed) lists that, since the others did answer.
func compareRules(rules []query.NamedExpr, answers map[string][]ruleAnswer) (map[string][]results.RuleDiff, map[string]int) {
	names := make([]string, 0, len(answers))
	for n := range answers {
		names = append(names, n)
	}
	sort.Strings(names)
	out, compared := map[string][]results.RuleDiff{}, map[string]int{}
	for i, rule := range rules {
		tol := computedTolerance
		if isRawSelection(rule.Expr) {
			tol = rawTolerance
		}
		answered := func(name string) bool {
			return i < len(answers[name]) && answers[name][i].res != nil && answers[name][i].err == nil
		}
		if n := len(slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !answered(n) })); n < 2 {
			continue
		}
		for _, a := range names {
			if i >= len(answers[a]) {
				continue
			}
			own := answers[a][i]
			if own.res == nil && own.err == nil {
				continue // not run: the window is too short for it
			}
			if own.err != nil {
				out[a] = append(out[a], results.RuleDiff{Rule: rule.Name, Detail: "error: " + own.err.Error()})
				continue
			}
			compared[a]++
			for _, b := range names {
				if a == b || !answered(b) {
					continue
				}
				if d := diffResults(own.res, answers[b][i].res, tol); d != "" {
					out[a] = append(out[a], results.RuleDiff{Rule: rule.Name, Detail: "vs " + b + ": " + d})
				}
			}
		}
	}
	return out, compared
}

// diffResults describes how matrix a differs from b as sets of series: series only in one,
// points only in one, values beyond the relative tolerance (the largest shown). "" if same.
func diffResults(a, b *result, tol float64) string {
	am, bm := bySeries(a), bySeries(b)
	var onlyA, onlyB, pointsA, pointsB, differ int
	var worst float64
	var worstAt string
	for key, as := range am {
		bs, ok := bm[key]
		if !ok {
			onlyA++
			continue
		}
		bt := map[int64]float64{}
		for _, p := range bs.Points {
			bt[p.T] = p.V
		}
		seen := 0
		for _, p := range as.Points {
			bv, ok := bt[p.T]
			if !ok {
				pointsA++
				continue
			}
			seen++
			if !closeEnough(p.V, bv, tol) {
				differ++
				e := math.Abs(p.V-bv) / math.Max(math.Abs(p.V), math.Abs(bv))
				if math.IsNaN(e) {
					e = math.Inf(1)
				}
				if e > worst || worstAt == "" {
					worst, worstAt = e, fmt.Sprintf("%s at %s: %s vs %s", render(as.Labels), query.FormatMillis(p.T), fmtFloat(p.V), fmtFloat(bv))
				}
			}
		}
		pointsB += len(bs.Points) - seen
	}
	for key := range bm {
		if _, ok := am[key]; !ok {
			onlyB++
		}
	}
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(onlyA, "series only here")
	add(onlyB, "series only there")
	add(pointsA, "points only here")
	add(pointsB, "points only there")
	if differ > 0 {
		parts = append(parts, fmt.Sprintf("%d values differ beyond %g (largest %.3g, %s)", differ, tol, worst, worstAt))
	}
	return strings.Join(parts, ", ")
}

func bySeries(r *result) map[string]series {
	m := map[string]series{}
	if r == nil {
		return m
	}
	for _, s := range r.Series {
		m[keyOf(s.Labels)] = s
	}
	return m
}

// otlpRenames is where t keeps the workload's job and instance when not under those names
// (written in otlp-http, otlpLabels not prometheus): old → new; nil otherwise.
func otlpRenames(t Target) map[string]string {
	return config.Storage{Protocol: t.Protocol, OTLPLabels: t.OTLPLabels}.OTLPRenames()
}

// runRulesAs runs the rules on a storage that keeps some labels under other names (names:
// old → new; otlpLabels), asked under its names, and gives its answers the old names back:
// the storages compare under the workload's names, and none is blamed for the names the
// user said it uses.
func runRulesAs(ctx context.Context, r *reader, rules []query.NamedExpr, spans []ruleSpan, names map[string]string) []ruleAnswer {
	if len(names) == 0 {
		return runRules(ctx, r, rules, spans)
	}
	answers := runRules(ctx, r, query.RenameRules(rules, names), spans)
	back := map[string]string{}
	for old, n := range names {
		back[n] = old
	}
	for _, a := range answers {
		if a.res == nil {
			continue
		}
		for i := range a.res.Series {
			ls := a.res.Series[i].Labels
			for j := range ls {
				if old, ok := back[ls[j].Name]; ok {
					ls[j].Name = old
				}
			}
			slices.SortFunc(ls, func(x, y label) int { return strings.Compare(x.Name, y.Name) })
		}
	}
	return answers
}
