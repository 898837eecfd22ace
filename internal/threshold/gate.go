package threshold

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CompareRule is a limit on how much a figure may change from an old run to a new one:
// "[storage:] figure op change", e.g. "query.p99>+20%" (p99 may grow by 20 % at most) or
// "write.achievedSamplesPerSecond<-5%" (may fall by 5 % at most). The change is a percent
// of the old value, or an absolute change in the figure's unit ("query.p99>+50ms"). A rule
// fails when its limit is passed, as written (as k6 thresholds do); one that ends in "~noise"
// ("query.p99>+20%~noise") fails only when the change is also beyond the old run's noise.
type CompareRule struct {
	Expr    string
	Storage string // empty: every storage in both runs
	Figure  string
	Op      string // ">" fails on a larger increase, "<" on a larger decrease
	Limit   float64
	Percent bool
	Noise   bool // "~noise": past the limit and beyond the old run's noise
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
		return r, fmt.Errorf("change %q is not a percent (+20%%), a number, a duration (+50ms) or a size (+1GiB), with ~noise after it or not", value)
	}
	return r, nil
}

// noiseSuffix ends a rule that fails only beyond the old run's noise.
const noiseSuffix = "~noise"

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

// Gate checks every rule on every storage it applies to, in rule then storage order. A rule
// fails when the change passes its limit (and, for a ~noise rule, is beyond the old run's
// noise too), or when the old run knows the figure and the new one does not (a storage gone,
// a figure lost). Storages only in the new run have nothing to be compared with and are not
// checked.
func Gate(rows []Row, rules []CompareRule) []Verdict {
	var out []Verdict
	for _, rule := range rules {
		n := len(out)
		for _, row := range rows {
			if row.Figure != rule.Figure || (rule.Storage != "" && rule.Storage != row.Storage) || row.Old == nil {
				continue
			}
			out = append(out, verdict(rule, row))
		}
		if len(out) == n {
			storage := cmp.Or(rule.Storage, "every storage")
			out = append(out, Verdict{
				Rule: rule, Row: Row{Storage: storage, Figure: rule.Figure},
				Outcome: "unknown in the old run: nothing to compare",
			})
		}
	}
	return out
}

func verdict(rule CompareRule, row Row) Verdict {
	v := Verdict{Rule: rule, Row: row}
	if row.New == nil {
		v.Failed, v.Outcome = true, "unknown in the new run (a storage not in it: pair renamed ones with -map old=new)"
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
	switch {
	case !passes:
		v.Outcome = "within the limit"
	case !rule.Noise:
		v.Failed, v.Outcome = true, "past the limit"
	case !row.Flagged:
		v.Outcome = "past the limit but within the old run's noise: not a regression"
	default:
		v.Failed, v.Outcome = true, "past the limit and beyond the old run's noise"
	}
	return v
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
