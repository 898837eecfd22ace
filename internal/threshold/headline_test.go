package threshold

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The t quantiles every statistics table prints.
func TestStudentQuantile(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706}, {0.975, 2, 4.303}, {0.975, 4, 2.776}, {0.995, 9, 3.250}, {0.975, 30, 2.042},
	} {
		if got := studentQuantile(c.p, c.df); math.Abs(got-c.want) > 0.001 {
			t.Errorf("t(%v, df %v) = %.4f, want %.3f", c.p, c.df, got, c.want)
		}
	}
	if got := normalQuantile(0.975); math.Abs(got-1.95996) > 1e-4 {
		t.Errorf("z(0.975) = %v", got)
	}
}

// contest is a two-storage row with the given rounds.
func contest(a, b []float64) Contest {
	return Contest{
		Figure: "query.p99", Values: [][]float64{a, b}, SE: []float64{math.NaN(), math.NaN()},
		Ranked: []bool{true, true}, Printed: []string{fmt.Sprint(median(a)), fmt.Sprint(median(b))},
	}
}

// An A/A table: 25 rows, each storage's three rounds drawn from the same distribution with
// a shared round effect (a busy machine slows both). At the family-wise 95 %, no more than
// 5 % of such tables may show a best on any row; 400 tables are drawn with a fixed seed, so
// the count is exact and the bound is checked with room for the draw (binomial sd ~4.4).
func TestJudgeAAShowsNoBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	withBest, tables := 0, 400
	for range tables {
		var rows []Contest
		for range 25 {
			var a, b []float64
			for range 3 {
				round := 1 + 0.3*rng.NormFloat64()*rng.NormFloat64()
				a = append(a, round*math.Exp(0.1*rng.NormFloat64()))
				b = append(b, round*math.Exp(0.1*rng.NormFloat64()))
			}
			rows = append(rows, contest(a, b))
		}
		h := Judge([]string{"a", "b"}, rows, 3, DefaultConfidence)
		for _, r := range h.Rows {
			if r.Best != "" {
				withBest++
				break
			}
		}
	}
	if withBest > tables*5/100 {
		t.Errorf("%d of %d A/A tables show a best: the family-wise level is 5 %%", withBest, tables)
	}
}

// A/B: b is 10× slower in every round; the row's best is a, and the ratio's interval
// excludes 1.
func TestJudgeABShowsTheBest(t *testing.T) {
	rows := []Contest{contest([]float64{0.010, 0.012, 0.011}, []float64{0.105, 0.118, 0.109})}
	for range 24 { // the other rows of a table: identical
		rows = append(rows, contest([]float64{1, 1, 1}, []float64{1, 1, 1}))
	}
	h := Judge([]string{"a", "b"}, rows, 3, DefaultConfidence)
	r := h.Rows[0]
	if r.Best != "a" || len(r.Ratios) != 1 || r.Ratios[0].High == nil || *r.Ratios[0].High >= 1 {
		t.Fatalf("row %+v ratios %+v: want best a, a/b's interval below 1", r, r.Ratios)
	}
	if ratio := *r.Ratios[0].Ratio; math.Abs(ratio-0.011/0.109) > 1e-9 {
		t.Errorf("ratio %v, want the medians' 0.011/0.109", ratio)
	}
	for _, r := range h.Rows[1:] {
		if r.Best != "" || r.Reason != "a tie at the printed precision" {
			t.Errorf("identical row: best %q reason %q", r.Best, r.Reason)
		}
	}
}

// One round: a figure without a noise estimate gets no best; an exact count gets one when
// it differs; a figure with within-run errors gets one when the difference is far beyond.
func TestJudgeOneRound(t *testing.T) {
	noNoise := contest([]float64{3.5}, []float64{6.8})
	exact := contest([]float64{0}, []float64{36})
	exact.Exact = true
	measured := contest([]float64{0.1}, []float64{0.5})
	measured.SE = []float64{0.01, 0.02}
	near := contest([]float64{0.10}, []float64{0.11})
	near.SE = []float64{0.01, 0.02}
	unranked := contest([]float64{0.001}, []float64{0.5})
	unranked.SE, unranked.Ranked = []float64{0.0001, 0.02}, []bool{false, true}
	h := Judge([]string{"a", "b"}, []Contest{noNoise, exact, measured, near, unranked}, 1, DefaultConfidence)
	var got []string
	for _, r := range h.Rows {
		got = append(got, r.Best+"|"+r.Reason)
	}
	want := []string{
		"|no noise estimate with one round: repeat the run (-rounds 3) to rank it",
		"a|", "a|", "", "|fewer than two storages to rank",
	}
	for i := range want {
		if i == 3 {
			if h.Rows[3].Best != "" || h.Rows[3].P == nil {
				t.Errorf("close row: best %q p %v: want none, tested", h.Rows[3].Best, h.Rows[3].P)
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("row %d: %q, want %q", i, got[i], want[i])
		}
	}
	if h.Judged != 3 {
		t.Errorf("judged %d rows, want 3 (exact, measured, close)", h.Judged)
	}
}

// Two rounds at a tiny level give a t quantile in the hundreds: a ratio interval past a
// float64's range is none, never +Inf (results.json could not be written: issue 35, found by
// e2e TestHistory).
func TestJudgeNeverInfinite(t *testing.T) {
	c := contest([]float64{1e-3, 5}, []float64{2, 1e-3})
	h := Judge([]string{"a", "b"}, []Contest{c}, 2, 0.99999)
	if _, err := json.Marshal(h); err != nil {
		t.Fatalf("the headline does not encode: %v (%+v)", err, h.Rows[0].Ratios)
	}
}

// A within-run noise of hours against medians of a second (max lag over a run with a 24 h
// catch-up) made the ratio's interval +Inf, which results.json cannot hold: it has none.
func TestJudgeRatioIntervalOverflows(t *testing.T) {
	c := contest([]float64{1.096}, []float64{1.889})
	c.SE = []float64{25000, 22000}
	h := Judge([]string{"a", "b"}, []Contest{c}, 1, DefaultConfidence)
	r := h.Rows[0].Ratios[0]
	if r.Ratio == nil || r.Low != nil || r.High != nil {
		t.Errorf("ratio %v [%v, %v]: want the ratio without an interval", r.Ratio, r.Low, r.High)
	}
	if _, err := json.Marshal(h); err != nil {
		t.Errorf("marshal: %v", err)
	}
}
