package threshold

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tsbench/tsbench/internal/results"
)

// TestCompareSeveralRuns (issue 35): with several old runs a figure's baseline is their median
// and its noise their spread (t-based, around their mean), whatever each run's own intervals
// say; a figure known in one old run alone keeps that run's within-run noise; an exact count
// has none.
func TestCompareSeveralRuns(t *testing.T) {
	old := func(rate, p99 float64, drops int64, checked bool) *results.Run {
		r := rateRun(rate, 3_000) // a wide per-interval spread: not the noise with several runs
		s := &r.Storages[0]
		s.Write.DroppedSamples["http_400"] = drops
		if p99 > 0 {
			s.Query = &results.Query{Errors: map[string]int64{}, LatencySeconds: results.Latency{P99: new(p99)}}
		}
		if checked { // read back, and bytes per sample observed with a warm-up's timeline
			s.Verify = &results.Verify{CheckedSamples: 100}
			s.Resources = &results.Resources{BytesPerSample: new(1.5)}
			for _, b := range []float64{120, 30, 8, 3, 1.5} {
				s.Resources.Timeline = append(s.Resources.Timeline, results.ResourcePoint{BytesPerSample: new(b)})
			}
		}
		return r
	}
	olds := []*results.Run{old(30_000, 0.12, 0, false), old(31_000, 0.13, 0, true), old(29_500, 0, 0, false)}
	rates := []float64{30_000, 31_000, 29_500}
	width := t975(2) * math.Sqrt(variance(rates)*(1+1.0/3)) // ±2170: t(0.975, 2)·s·sqrt(1+1/3)
	p99s := []float64{0.12, 0.13}
	tests := []struct {
		name string
		cur  *results.Run
		fig  string
		want Row
	}{
		{"a drop past the spread", old(26_000, 0.12, 0, true), "write.achievedSamplesPerSecond", Row{
			Old: new(30_000.0), Runs: 3, New: new(26_000.0), Change: new(-100 * 4_000.0 / 30_000),
			Noise: width, Method: "t, 3 runs", Flagged: true,
		}},
		// 28500 is 1500 from the median, within ±2170 of the mean 30166.7 (1667 away).
		{"a drop within the spread", old(28_500, 0.12, 0, true), "write.achievedSamplesPerSecond", Row{
			Old: new(30_000.0), Runs: 3, New: new(28_500.0), Change: new(-5.0), Noise: width, Method: "t, 3 runs",
		}},
		{"known in two runs of three", old(30_000, 0.2, 0, true), "query.p99", Row{
			Old: new(0.125), Runs: 2, New: new(0.2), Change: new(60.0),
			Noise: t975(1) * math.Sqrt(variance(p99s)*1.5), Method: "t, 2 runs",
		}},
		{"known in one run of three: its own noise", old(30_000, 0.12, 0, true), "resources.bytesPerSample", Row{
			Old: new(1.5), Runs: 1, New: new(1.5), Change: new(0.0),
			Noise: 2 * math.Sqrt(2*variance([]float64{120, 30, 8, 3, 1.5})), Method: "σ",
		}},
		{"an exact count", old(30_000, 0.12, 1, true), "write.droppedSamples", Row{
			Old: new(0.0), Runs: 3, New: new(1.0), Method: "exact", Flagged: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Row
			for _, r := range Compare(olds, tt.cur) {
				if r.Figure == tt.fig {
					got = r
				}
			}
			tt.want.Storage, tt.want.Figure = "vm", tt.fig
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunsNoiseCoverage: a new run like n old ones (all drawn from one normal distribution) is
// flagged about 5 % of the time for every n from 2 to 10, as a 95 % prediction interval must;
// the old runs' range would flag it 2/(n+1) of the time, two in three for n = 2.
func TestRunsNoiseCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 2))
	const trials = 40_000 // the flagged share's standard error is 0.11 %
	for n := 2; n <= 10; n++ {
		flagged := 0
		xs := make([]float64, n)
		for range trials {
			for i := range xs {
				xs[i] = 100 + 7*rng.NormFloat64()
			}
			center, width, _ := runsNoise(xs)
			if math.Abs(100+7*rng.NormFloat64()-center) > width {
				flagged++
			}
		}
		if share := float64(flagged) / trials; math.Abs(share-0.05) > 0.005 {
			t.Errorf("%d old runs: %.2f%% of A/A new runs flagged, want 5%% ± 0.5%%", n, 100*share)
		}
	}
}

// TestT975: each value of the table is the 0.975 quantile of Student's t with its degrees of
// freedom to its 3 decimals, checked against the distribution's density integrated
// numerically.
func TestT975(t *testing.T) {
	for df := 1; df <= 30; df++ {
		q := t975(df)
		if lo, hi := tCDF(df, q-0.0005), tCDF(df, q+0.0005); lo > 0.975 || hi < 0.975 {
			t.Errorf("t975(%d) = %v: P(T ≤ it ∓ 0.0005) = %.6f, %.6f, want 0.975 between", df, q, lo, hi)
		}
	}
	if q := t975(1000); math.Abs(q-1.962) > 0.001 {
		t.Errorf("t975(1000) = %v, want 1.962, near the normal's 1.960", q)
	}
}

// tCDF is P(T ≤ x) for Student's t with df degrees of freedom and x ≥ 0, by Simpson's rule.
func tCDF(df int, x float64) float64 {
	nu := float64(df)
	lg1, _ := math.Lgamma((nu + 1) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	c := math.Exp(lg1-lg2) / math.Sqrt(nu*math.Pi)
	density := func(x float64) float64 { return c * math.Pow(1+x*x/nu, -(nu+1)/2) }
	const steps = 10_000
	h := x / steps
	sum := density(0) + density(x)
	for i := 1; i < steps; i++ {
		sum += float64(2+2*(i%2)) * density(float64(i)*h)
	}
	return 0.5 + sum*h/3
}

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	if got := median(xs); got != 2 || xs[0] != 3 {
		t.Errorf("median(3, 1, 2) = %v, xs %v: want 2, xs unchanged", got, xs)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4, 1, 3, 2) = %v, want 2.5", got)
	}
}
