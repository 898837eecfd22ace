package threshold

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// CompareRule is a limit on how much a figure may change from the old runs to a new one:
// "[storage:] figure op change [~noise] [?ok]", e.g. "query.p99>+20%" (p99 may grow by 20 %
// at most) or "write.achievedSamplesPerSecond<-5%" (may fall by 5 % at most). The change is
// a percent of the baseline (the old runs' median), or an absolute change in the figure's
// unit ("query.p99>+50ms"). A rule fails when its limit is passed, as written (as k6
// thresholds do); one with "~noise" ("query.p99>+20%~noise") fails only when the change is
// also beyond the old runs' noise. A rule fails on a figure unknown in the old runs or in the
// new one, unless it ends in "?ok" ("verify.missingSamples>+0?ok", "p99>+20%~noise?ok").
type CompareRule struct {
	Expr      string
	Storage   string // empty: every storage of the old runs
	Figure    string
	Op        string // ">" fails on a larger increase, "<" on a larger decrease
	Limit     float64
	Percent   bool
	Noise     bool // "~noise": past the limit and beyond the old runs' noise
	UnknownOK bool // "?ok": a figure unknown on either side passes
}

// ParseCompareRules parses every rule; key names where they come from in errors
// ("compareThresholds", "-fail-on"), and a rule's storage must be one of storages. A figure
// may be named by its last part alone when that is unique: "bytesPerSample" is
// resources.bytesPerSample.
func ParseCompareRules(key string, exprs, storages []string) ([]CompareRule, error) {
	var rules []CompareRule
	var errs []error
	for i, e := range exprs {
		r, err := parseCompareRule(e)
		if err == nil && r.Storage != "" && !slices.Contains(storages, r.Storage) {
			err = fmt.Errorf("unknown storage %q (storages: %s)", r.Storage, strings.Join(storages, ", "))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %q: %w", key, i, e, err))
			continue
		}
		rules = append(rules, r)
	}
	return rules, errors.Join(errs...)
}

// SplitRules splits a -fail-on list at its commas.
func SplitRules(list string) []string {
	var out []string
	for part := range strings.SplitSeq(list, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseCompareRule(expr string) (CompareRule, error) {
	r := CompareRule{Expr: expr}
	rest := strings.TrimSpace(expr)
	if name, after, ok := strings.Cut(rest, ":"); ok {
		r.Storage, rest = strings.TrimSpace(name), strings.TrimSpace(after)
	}
	i := strings.IndexAny(rest, "<>")
	if i < 0 {
		return r, errors.New(`want [storage:] figure > +change or figure < -change, e.g. "query.p99>+20%"`)
	}
	fig, err := resolveFigure(strings.TrimSpace(rest[:i]))
	if err != nil {
		return r, err
	}
	r.Figure, r.Op = fig, rest[i:i+1]
	value := strings.TrimSpace(rest[i+1:])
	if strings.HasPrefix(value, "=") {
		return r, fmt.Errorf("operator %q: use > or <, the limit itself passes", rest[i:i+2])
	}
	if v, ok := strings.CutSuffix(value, okSuffix); ok {
		r.UnknownOK, value = true, strings.TrimSpace(v)
	}
	if v, ok := strings.CutSuffix(value, noiseSuffix); ok {
		r.Noise, value = true, strings.TrimSpace(v)
	}
	if v, ok := strings.CutSuffix(value, "%"); ok {
		r.Percent = true
		r.Limit, err = strconv.ParseFloat(v, 64)
	} else {
		r.Limit, err = parseValue(value)
	}
	if err != nil || math.IsNaN(r.Limit) {
		return r, fmt.Errorf("change %q is not a percent (+20%%), a number, a duration (+50ms) or a size (+1GiB), then ~noise, ?ok, both or neither", value)
	}
	return r, nil
}

// noiseSuffix ends a rule that fails only beyond the old runs' noise; okSuffix, after it, one
// that passes a figure unknown on either side.
const (
	noiseSuffix = "~noise"
	okSuffix    = "?ok"
)

// resolveFigure is the figure a rule names, in full or by its last part.
func resolveFigure(name string) (string, error) {
	names := FigureNames()
	if slices.Contains(names, name) {
		return name, nil
	}
	var matches []string
	for _, n := range names {
		if strings.HasSuffix(n, "."+name) {
			matches = append(matches, n)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("unknown figure %q (one of %s)", name, strings.Join(names, ", "))
	}
	return "", fmt.Errorf("figure %q is ambiguous: %s", name, strings.Join(matches, ", "))
}

// Verdict is one rule checked on one storage.
type Verdict struct {
	Rule    CompareRule
	Row     Row
	Failed  bool
	Outcome string // why it passed or failed, in words; the noise is in Row
}

// Gate checks every rule on every storage it applies to, in rule then storage order: a rule
// that names a storage on it, any other on every storage of the old runs (one only in the new
// run has nothing to be compared with) but, for a write figure, one no run wrote to, as
// Evaluate skips it. A rule fails when the change passes its limit (and, for a ~noise rule,
// is beyond the old runs' noise too), or when the figure is unknown in the old runs or in
// the new one (a baseline that checked nothing, a storage gone), unless it ends in ?ok.
func Gate(olds []*results.Run, cur *results.Run, rules []CompareRule) []Verdict {
	figures := Figures()
	var out []Verdict
	for _, rule := range rules {
		names := gateStorages(rule, olds, cur)
		if len(names) == 0 {
			row := Row{Storage: "every storage", Figure: rule.Figure, OldWhy: "no storage in it"}
			out = append(out, verdict(rule, row, len(olds)))
		}
		for _, name := range names {
			row := figureRow(name, rule.Figure, figures[rule.Figure], olds, cur.Storage(name))
			out = append(out, verdict(rule, row, len(olds)))
		}
	}
	return out
}

// gateStorages are the storages a rule is checked on.
func gateStorages(rule CompareRule, olds []*results.Run, cur *results.Run) []string {
	if rule.Storage != "" {
		return []string{rule.Storage}
	}
	all := slices.Concat(olds, []*results.Run{cur})
	var names []string
	for _, name := range storageNames(olds) {
		if !strings.HasPrefix(rule.Figure, "write.") || slices.ContainsFunc(all, func(r *results.Run) bool {
			s := r.Storage(name)
			return s != nil && s.Write != nil
		}) {
			names = append(names, name)
		}
	}
	return names
}

// verdict is rule checked on row, of oldRuns old runs.
func verdict(rule CompareRule, row Row, oldRuns int) Verdict {
	v := Verdict{Rule: rule, Row: row}
	if row.Old == nil || row.New == nil {
		v.Outcome = unknownOutcome(row, oldRuns)
		if rule.UnknownOK {
			v.Outcome += "; passed by ?ok"
		} else {
			v.Failed = true
		}
		return v
	}
	change := *row.New - *row.Old
	if rule.Percent {
		change = percentChange(*row.Old, *row.New)
	}
	passes := change > rule.Limit
	if rule.Op == "<" {
		passes = change < rule.Limit
	}
	_, noise := oldSide(oldRuns)
	switch {
	case !passes:
		v.Outcome = "within the limit"
	case !rule.Noise:
		v.Failed, v.Outcome = true, "past the limit"
	case !row.Flagged:
		v.Outcome = "past the limit but within the " + noise + ": not a regression"
	default:
		v.Failed, v.Outcome = true, "past the limit and beyond the "+noise
	}
	return v
}

// oldSide is how a verdict names the baseline and its noise: "old run" and "old run's
// noise", or "old runs" and "old runs' noise" when there are several.
func oldSide(oldRuns int) (name, noise string) {
	if oldRuns > 1 {
		return "old runs", "old runs' noise"
	}
	return "old run", "old run's noise"
}

// unknownOutcome says which side of row is unknown, and why where known: "unknown in the old
// run: the read-back checked no samples".
func unknownOutcome(row Row, oldRuns int) string {
	var parts []string
	side := func(name, why string) {
		if why != "" {
			name += ": " + why
		}
		parts = append(parts, "unknown in the "+name)
	}
	if row.Old == nil {
		name, _ := oldSide(oldRuns)
		side(name, row.OldWhy)
	}
	if row.New == nil {
		side("new run", row.NewWhy)
	}
	return strings.Join(parts, "; ")
}

// percentChange is new over old in percent; from 0, any increase is +Inf and any decrease -Inf.
func percentChange(old, cur float64) float64 {
	if old == 0 {
		switch {
		case cur > 0:
			return math.Inf(1)
		case cur < 0:
			return math.Inf(-1)
		}
		return 0
	}
	return 100 * (cur - old) / math.Abs(old)
}

// Failed counts the failed verdicts.
func Failed(vs []Verdict) int {
	n := 0
	for _, v := range vs {
		if v.Failed {
			n++
		}
	}
	return n
}
