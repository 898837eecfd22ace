package conformance

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
)

// minAlign is the least alignment of a block's time base. Subqueries evaluate at absolute
// multiples of their step (from Unix 0), and VictoriaMetrics aligns a range query's start to
// its step: a block's base is a multiple of 1m and of every subquery and range step its evals
// use (at most maxAlign), so that both see the times the test file meant.
const (
	minAlign = time.Minute
	maxAlign = 24 * time.Hour
)

// gap is kept between two blocks' intervals, and between the last one and now.
const gap = 10 * time.Minute

// Placed is a block at its time base (Unix ms): its samples at Base+T, its evals at Base+At.
type Placed struct {
	*Block
	Base int64
}

// span is an interval of ms relative to a base.
type span struct{ lo, hi int64 }

// keep is how far outside every eval's reads a sample is still written: samples no eval reads
// are left out (a file loads 1000 minutes for evals over its first one), but a storage that
// looks at the sample before a window (VictoriaMetrics' rate and increase) still finds it.
const keep = 10 * time.Minute

// intervals are the spans a block occupies relative to its base: each eval's reads (as
// Prometheus' engine bounds them, FindMinMaxTime, for the query and for its range-mode check
// from At-1m to At+1m), widened by keep, merged. Another block's intervals must not overlap
// them (a gap apart): no eval then sees another block's series. An eval that does not parse
// reads nothing here (a storage will reject it).
func intervals(b *Block) []span {
	var out []span
	k := keep.Milliseconds()
	for _, e := range b.Evals {
		if lo, hi, ok := reads(e); ok {
			out = append(out, span{lo - k, hi + k})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	merged := out[:0]
	for _, s := range out {
		if n := len(merged); n > 0 && s.lo <= merged[n-1].hi+gap.Milliseconds() {
			merged[n-1].hi = max(merged[n-1].hi, s.hi)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// lookback is the lookback delta of the runner's engine and of a default Prometheus.
const lookback = 5 * time.Minute

// reads bounds what an eval reads, in ms from the test start.
func reads(e *Eval) (lo, hi int64, ok bool) {
	start, end, step := e.At, e.At, time.Minute
	if e.Range {
		start, end, step = e.Start, e.End, e.Step
	} else if !e.excludeRange { // the runner's range-mode check
		start, end = e.At-time.Minute.Milliseconds(), e.At+time.Minute.Milliseconds()
	}
	expr, err := parser.ParseExpr(e.Expr)
	if err != nil {
		return 0, 0, false
	}
	st, en := time.UnixMilli(start), time.UnixMilli(end)
	if expr, err = promql.PreprocessExpr(expr, st, en, step); err != nil {
		return 0, 0, false
	}
	lo, hi = promql.FindMinMaxTime(&parser.EvalStmt{Expr: expr, Start: st, End: en, Interval: step, LookbackDelta: lookback})
	if lo == 0 && hi == 0 { // no selector
		return start, end, true
	}
	return min(lo, start), max(hi, end), true
}

// alignment is a block's base alignment in ms (minAlign).
func alignment(b *Block) int64 {
	a := minAlign.Milliseconds()
	for _, e := range b.Evals {
		steps := patSubqueryStep.FindAllStringSubmatch(unquoted(e.Expr), -1)
		for _, m := range steps {
			if d, err := model.ParseDuration(strings.TrimSpace(m[1])); err == nil && d > 0 {
				a = lcm(a, time.Duration(d).Milliseconds())
			}
		}
		if e.Range && e.Step > 0 {
			a = lcm(a, e.Step.Milliseconds())
		}
	}
	if a > maxAlign.Milliseconds() {
		return maxAlign.Milliseconds()
	}
	return a
}

var patSubqueryStep = regexp.MustCompile(`\[[^\]:]*:([^\]]+)\]`)

func lcm(a, b int64) int64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// Layout places each block at the first aligned base where its intervals overlap no other
// block's (a gap apart), then moves them all so that the last interval ends gap before now.
// It returns the blocks in base order, and the span from the first interval to now.
func Layout(blocks []*Block, now time.Time) ([]Placed, time.Duration) {
	g := gap.Milliseconds()
	var taken []span // absolute within the layout, sorted by lo
	free := func(ss []span, base int64) bool {
		for _, s := range ss {
			for _, t := range taken {
				if s.lo+base < t.hi+g && t.lo < s.hi+base+g {
					return false
				}
			}
		}
		return true
	}
	placed := make([]Placed, len(blocks))
	var first, end int64 // of every interval, once seen
	seen := false
	for i, b := range blocks {
		ss, a := intervals(b), alignment(b)
		base := int64(0)
		if len(ss) > 0 && len(taken) > 0 {
			base = ceilDiv(taken[0].lo-ss[0].lo, a) * a // may be negative: fill from the earliest
			for !free(ss, base) {
				base += a
			}
		}
		for _, s := range ss {
			taken = append(taken, span{s.lo + base, s.hi + base})
			if !seen {
				first, end, seen = s.lo+base, s.hi+base, true
			}
			first, end = min(first, s.lo+base), max(end, s.hi+base)
		}
		slices.SortFunc(taken, func(x, y span) int { return cmp.Compare(x.lo, y.lo) })
		placed[i] = Placed{Block: b, Base: base}
	}
	if !seen { // nothing is read: no data, no time
		return placed, 0
	}
	// One shift for all keeps every base's alignment: it is a multiple of maxAlign.
	shift := floorDiv(now.UnixMilli()-g-end, maxAlign.Milliseconds()) * maxAlign.Milliseconds()
	for i := range placed {
		placed[i].Base += shift
	}
	slices.SortStableFunc(placed, func(x, y Placed) int { return cmp.Compare(x.Base, y.Base) })
	return placed, time.Duration(now.UnixMilli()-(first+shift)) * time.Millisecond
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// patAt finds `@ <time>` modifiers with a number or duration (not start() or end()).
var patAt = regexp.MustCompile(`@\s*([-+]?[0-9][0-9a-zA-Z.]*)`)

func atMillis(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	var ms int64
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		ms = int64(f * 1000)
	} else if d, err := model.ParseDuration(s); err == nil {
		ms = time.Duration(d).Milliseconds()
	} else {
		return 0, false
	}
	if neg {
		ms = -ms
	}
	return ms, true
}

// Shift moves an expression's `@` times by base ms, as its data was moved.
func Shift(expr string, base int64) string {
	if !strings.Contains(expr, "@") {
		return expr
	}
	// Replace only outside string literals: cut the expression at its quotes.
	var b strings.Builder
	last := 0
	for _, q := range patQuoted.FindAllStringIndex(expr, -1) {
		b.WriteString(shiftAt(expr[last:q[0]], base))
		b.WriteString(expr[q[0]:q[1]])
		last = q[1]
	}
	b.WriteString(shiftAt(expr[last:], base))
	return b.String()
}

func shiftAt(s string, base int64) string {
	return patAt.ReplaceAllStringFunc(s, func(m string) string {
		ms, ok := atMillis(patAt.FindStringSubmatch(m)[1])
		if !ok {
			return m
		}
		return "@ " + strconv.FormatFloat(float64(ms+base)/1000, 'f', -1, 64)
	})
}

// Functions whose answer depends on the evaluation time itself, not on the data: with no
// argument, the date functions read time().
var (
	patTimeCall = regexp.MustCompile(`\b(time|minute|hour|day_of_month|day_of_week|day_of_year|days_in_month|month|year)\s*\(\s*\)`)
	patTsCall   = regexp.MustCompile(`\b(timestamp|ts_of_[a-z_]+)\s*\(`)
	patOuterTs  = regexp.MustCompile(`^\s*(timestamp|time|ts_of_[a-z_]+)\s*\(`)
)

// timeValued tells how an expression's answer relates to absolute time: "" when it does not
// depend on it; "shift" when the whole answer is a time (time() or timestamp(...) outermost),
// which moves with the data; "absolute" when it cannot be moved honestly.
func timeValued(expr string) string {
	e := strings.TrimSpace(unquoted(expr))
	if !patTimeCall.MatchString(e) && !patTsCall.MatchString(e) {
		return ""
	}
	if m := patOuterTs.FindStringIndex(e); m != nil && closesAtEnd(e, m[1]-1) {
		inner := e[m[1] : len(e)-1]
		if !patTimeCall.MatchString(inner) && !patTsCall.MatchString(inner) {
			return "shift"
		}
	}
	return "absolute"
}

// closesAtEnd reports whether the parenthesis opened at e[open] closes at e's end.
func closesAtEnd(e string, open int) bool {
	depth := 0
	for i := open; i < len(e); i++ {
		switch e[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i == len(e)-1
			}
		}
	}
	return false
}
