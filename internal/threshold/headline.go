package threshold

import (
	"fmt"
	"math"

	"github.com/tsbench/tsbench/internal/results"
)

// DefaultConfidence is the headline's family-wise confidence: an A/A run shows a best on some
// row in at most 5 % of runs, however many rows the table has.
const DefaultConfidence = 0.95

// HeadlineMethod says how the headline's figures are judged, for results.json and the docs.
const HeadlineMethod = "median over rounds; per-figure interval: Student's t on the rounds' mean " +
	"(one round: the figure ± z times its within-run standard error, from its per-interval values, " +
	"or 5 % of it where it has none; exact counts have none); best: the best candidate against the " +
	"next one, paired by round (the log of their ratio when both are positive, else their difference), " +
	"Student's t (one round: the normal on the two within-run errors), Bonferroni-corrected over the " +
	"rows judged, so that a ratio's interval and a best agree and an A/A run shows no best at the " +
	"family-wise confidence"

// Contest is one row of the side-by-side table to judge.
type Contest struct {
	Figure string
	Label  string
	Higher bool // higher values are better; else lower
	Exact  bool // an exact count: any difference is real, there is no noise
	// Values are each storage's figure per round ([storage][round]), NaN where unknown.
	Values [][]float64
	// SE is each storage's within-run standard error of the figure (used with one round), NaN
	// where unknown.
	SE []float64
	// Ranked says which storages may be ranked (not failed, not failing queries on latency).
	Ranked []bool
	// Printed is each storage's cell as printed: equal cells are a tie, never a best.
	Printed []string
}

// Judge judges every row: medians, intervals, each row's best at the family-wise confidence
// (Bonferroni over the rows where a best was tested), every pair's ratio. storages are the
// names in Values' order.
func Judge(storages []string, rows []Contest, rounds int, confidence float64) *results.Headline {
	h := &results.Headline{Rounds: rounds, Confidence: confidence, Method: HeadlineMethod}
	cands := make([]candidate, len(rows))
	for i := range rows {
		cands[i] = rows[i].candidate()
		if cands[i].tested() {
			h.Judged++
		}
	}
	alpha := (1 - confidence) / float64(max(1, h.Judged))
	for i, c := range rows {
		h.Rows = append(h.Rows, c.judge(storages, cands[i], confidence, alpha))
	}
	return h
}

// candidate is a row's best and next storages by median, -1 when the row has fewer than two
// storages to rank; reason says why it has no best when that is known before testing.
type candidate struct {
	best, next int
	reason     string
}

func (c candidate) tested() bool { return c.best >= 0 && c.reason == "" }

func (c Contest) candidate() candidate {
	best, next := -1, -1
	better := func(i, j int) bool {
		mi, mj := median(known(c.Values[i])), median(known(c.Values[j]))
		if c.Higher {
			return mi > mj
		}
		return mi < mj
	}
	for i := range c.Values {
		if !c.Ranked[i] || len(known(c.Values[i])) == 0 {
			continue
		}
		switch {
		case best < 0 || better(i, best):
			best, next = i, best
		case next < 0 || better(i, next):
			next = i
		}
	}
	if best < 0 || next < 0 {
		return candidate{-1, -1, "fewer than two storages to rank"}
	}
	if c.Printed[best] == c.Printed[next] {
		return candidate{best, next, "a tie at the printed precision"}
	}
	if _, _, ok := c.test(best, next); !ok {
		return candidate{best, next, "no noise estimate with one round: repeat the run (-rounds 3) to rank it"}
	}
	return candidate{best, next, ""}
}

// judge fills the row's values, ratios and best.
func (c Contest) judge(storages []string, cand candidate, confidence, alpha float64) results.HeadlineRow {
	row := results.HeadlineRow{Figure: c.Figure, Label: c.Label, Better: "lower", Reason: cand.reason}
	if c.Higher {
		row.Better = "higher"
	}
	for i, name := range storages {
		row.Values = append(row.Values, c.value(name, i, 1-confidence))
	}
	for i := range storages {
		for j := i + 1; j < len(storages); j++ {
			if c.Ranked[i] && c.Ranked[j] {
				row.Ratios = append(row.Ratios, c.ratio(storages, i, j, alpha))
			}
		}
	}
	if !cand.tested() {
		return row
	}
	p, _, _ := c.test(cand.best, cand.next)
	row.P = &p
	if p <= alpha {
		row.Best = storages[cand.best]
	} else {
		row.Reason = fmt.Sprintf("no difference beyond the noise (p %.2g, needs ≤ %.2g)", p, alpha)
	}
	return row
}

// value is storage i's median and its interval at level 1-alpha.
func (c Contest) value(name string, i int, alpha float64) results.HeadlineValue {
	xs := known(c.Values[i])
	v := results.HeadlineValue{Storage: name, N: len(xs), Ranked: c.Ranked[i]}
	if len(xs) == 0 {
		return v
	}
	v.Median = new(median(xs))
	var mid, half float64
	switch {
	case c.Exact && len(xs) == 1:
		mid, half = xs[0], 0
	case len(xs) >= 2:
		mid = mean(xs)
		half = criticalValue(alpha, float64(len(xs)-1)) * math.Sqrt(variance(xs)/float64(len(xs)))
	case !math.IsNaN(c.SE[i]):
		mid, half = xs[0], criticalValue(alpha, math.Inf(1))*c.SE[i]
	default:
		return v
	}
	v.Low, v.High = new(mid-half), new(mid+half)
	return v
}

// known is xs without its NaNs.
func known(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// paired is the statistic comparing storages a and b: per round, the log of their ratio when
// every value is positive, else their difference; with one round, the same of the single
// values with its within-run standard error.
type paired struct {
	d   []float64 // per round
	se  float64   // one round: the standard error of d[0]; NaN when unknown
	log bool
}

func (c Contest) paired(a, b int) paired {
	var xa, xb []float64
	for r := range c.Values[a] {
		if r < len(c.Values[b]) && !math.IsNaN(c.Values[a][r]) && !math.IsNaN(c.Values[b][r]) {
			xa, xb = append(xa, c.Values[a][r]), append(xb, c.Values[b][r])
		}
	}
	p := paired{log: true, se: math.NaN()}
	for i := range xa {
		p.log = p.log && xa[i] > 0 && xb[i] > 0
	}
	for i := range xa {
		if p.log {
			p.d = append(p.d, math.Log(xa[i]/xb[i]))
		} else {
			p.d = append(p.d, xa[i]-xb[i])
		}
	}
	if len(xa) != 1 {
		return p
	}
	switch sa, sb := c.SE[a], c.SE[b]; {
	case c.Exact:
		p.se = 0
	case p.log:
		p.se = math.Hypot(sa/xa[0], sb/xb[0])
	default:
		p.se = math.Hypot(sa, sb)
	}
	return p
}

// center and half are the statistic's estimate and the half-width of its interval at alpha;
// ok false when there is no noise estimate.
func (p paired) interval(alpha float64) (center, half float64, ok bool) {
	switch n := len(p.d); {
	case n >= 2:
		center = mean(p.d)
		return center, criticalValue(alpha, float64(n-1)) * math.Sqrt(variance(p.d)/float64(n)), true
	case n == 1 && !math.IsNaN(p.se):
		return p.d[0], criticalValue(alpha, math.Inf(1)) * p.se, true
	}
	return 0, 0, false
}

// test is the two-sided p-value that storages a and b differ on the figure.
func (c Contest) test(a, b int) (p float64, pr paired, ok bool) {
	pr = c.paired(a, b)
	center, _, ok := pr.interval(0.05)
	if !ok {
		return math.NaN(), pr, false
	}
	var se, df float64
	switch n := len(pr.d); {
	case n >= 2:
		se, df = math.Sqrt(variance(pr.d)/float64(n)), float64(n-1)
	default:
		se, df = pr.se, math.Inf(1)
	}
	if se == 0 { // every round the same difference, or an exact count
		if center == 0 {
			return 1, pr, true
		}
		return 0, pr, true
	}
	return twoSidedP(center/se, df), pr, true
}

// ratio is storage i's median over storage j's, with its interval at alpha (the
// Bonferroni-corrected level, so the intervals of all rows hold together).
func (c Contest) ratio(storages []string, i, j int, alpha float64) results.Ratio {
	out := results.Ratio{A: storages[i], B: storages[j]}
	xi, xj := known(c.Values[i]), known(c.Values[j])
	if len(xi) == 0 || len(xj) == 0 || median(xj) == 0 {
		return out
	}
	out.Ratio = new(median(xi) / median(xj))
	pr := c.paired(i, j)
	if !pr.log {
		return out
	}
	// A noise as wide as a catch-up's lag (hours against a live second) makes the interval of
	// the log ratio overflow: it then has no bound, as results.json writes no infinity.
	if center, half, ok := pr.interval(alpha); ok && !math.IsInf(math.Exp(center+half), 0) {
		out.Low, out.High = new(math.Exp(center-half)), new(math.Exp(center+half))
	}
	return out
}

// Median is the middle of xs (the mean of the two middle values for an even count).
func Median(xs []float64) float64 { return median(xs) }

// ExactFigure reports whether a figure is an exact count: any difference in it is real.
func ExactFigure(figure string) bool { return exactFigure(figure) }

// WithinRunSE is the standard error of one run's figure v from the run's own per-interval
// values (noise, which bounds the change between two runs as twice the standard error of
// their difference, 2·√2 standard errors); 0 for an exact count, and 5 % of the figure over
// 2·√2 where the figure has no per-interval values.
func WithinRunSE(figure string, s *results.Storage, v *float64) float64 {
	n, _ := noise(figure, s, v)
	return n / (2 * math.Sqrt2)
}
