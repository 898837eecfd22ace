package threshold

import (
	"fmt"
	"math"
	"slices"

	"github.com/tsbench/tsbench/internal/results"
)

// baseline is one figure of one storage across the old runs.
type baseline struct {
	values []float64 // one per old run that knows the figure
	// storage is the last of those runs' storage: with one run, its per-interval values give
	// the noise.
	storage *results.Storage
	why     []string // why the other runs do not know it, each reason once
}

func (b *baseline) add(v float64, s *results.Storage) {
	b.values = append(b.values, v)
	b.storage = s
}

func (b *baseline) unknown(why string) {
	if why != "" && !slices.Contains(b.why, why) {
		b.why = append(b.why, why)
	}
}

// median is the middle of xs, or the mean of its two middles; xs is not changed.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// runsNoise is how far one new run may fall by chance from center, the mean of n ≥ 2 old
// runs' values xs: the half-width of the 95 % prediction interval of a single new
// observation, t(0.975, n−1) · s · sqrt(1 + 1/n), with s the old values' sample standard
// deviation. It holds a new run like the old ones 95 % of the time for any n when the figure
// varies about normally from run to run, and it is wide when n is small (15.6·s for 2 runs,
// 5.0·s for 3, 2.4·s for 10): two runs say little of the spread. The range of the old runs
// would hold a new run only with chance (n−1)/(n+1), a third for 2 runs, and the standard
// error of their mean alone leaves out the new run's own chance.
func runsNoise(xs []float64) (center, width float64, method string) {
	// About xs[0]: equal values give exactly their value and 0, where a plain mean of three
	// 0.18s is 0.18000000000000002 and their spread 1.7e-16.
	d := make([]float64, len(xs))
	for i, x := range xs {
		d[i] = x - xs[0]
	}
	n := float64(len(xs))
	return xs[0] + mean(d), t975(len(xs)-1) * math.Sqrt(variance(d)*(1+1/n)), fmt.Sprintf("t, %d runs", len(xs))
}

// t975 is Student's t distribution's 0.975 quantile with df degrees of freedom (df ≥ 1).
func t975(df int) float64 { return studentQuantile(0.975, float64(df)) }
