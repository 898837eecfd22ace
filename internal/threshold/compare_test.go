package threshold

import (
	"math"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
)

// rateRun is a run whose only figure is an ingestion rate of mean, from 20 per-interval
// rates of mean ± spread in a +,+,−,− cycle (lag-1 autocorrelation about 0).
func rateRun(mean, spread float64) *results.Run {
	w := &results.Write{DroppedSamples: map[string]int64{}, AchievedSamplesPerSecond: mean}
	for i := range 20 {
		v := mean + spread
		if i%4 >= 2 {
			v = mean - spread
		}
		w.Timeline = append(w.Timeline, results.WritePoint{SamplesPerSecs: v})
	}
	return &results.Run{Storages: []results.Storage{{Name: "vm", Write: w}}}
}

// TestCompareNoiseOfMean: the noise of a whole-run mean is its standard error, not the
// spread of single intervals, so with a 10 % per-interval spread over 20 intervals a 25 %
// drop is flagged (2σ of single intervals, 28 %, would hide it) and a 2 % one is not.
func TestCompareNoiseOfMean(t *testing.T) {
	old := rateRun(30_000, 3_000)
	for _, tt := range []struct {
		drop float64
		want bool
	}{{0.25, true}, {0.02, false}} {
		var row *Row
		for _, r := range Compare([]*results.Run{old}, rateRun(30_000*(1-tt.drop), 3_000)) {
			if r.Figure == "write.achievedSamplesPerSecond" {
				row = &r
			}
		}
		if row == nil || row.Flagged != tt.want {
			t.Errorf("%.0f%% drop: row %+v, want flagged %v", tt.drop*100, row, tt.want)
		}
	}
}

func TestEffectiveN(t *testing.T) {
	alternating := []float64{1, -1, 1, -1, 1, -1, 1, -1}
	trend := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	if got := effectiveN(alternating); got != 8 {
		t.Errorf("alternating: n_eff %v, want 8 (clamped to n)", got)
	}
	// ρ of a straight line over 8 points is 0.625: n_eff = 8·0.375/1.625.
	if got := effectiveN(trend); math.Abs(got-8*0.375/1.625) > 1e-9 {
		t.Errorf("trend: n_eff %v, want %v", got, 8*0.375/1.625)
	}
	if got := effectiveN([]float64{5, 5, 5}); got != 3 {
		t.Errorf("constant: n_eff %v, want 3", got)
	}
}

// TestCompareStorageInOneRun: a storage in one run only is compared, flagged, nil on the
// side that lacks it.
func TestCompareStorageInOneRun(t *testing.T) {
	p99 := func(v float64) *results.Query { return &results.Query{LatencySeconds: results.Latency{P99: &v}} }
	old := &results.Run{Storages: []results.Storage{{Name: "victoriametrics", Query: p99(0.045)}}}
	cur := &results.Run{Storages: []results.Storage{{Name: "prometheus", Query: p99(0.12)}}}
	seen := map[string]bool{}
	for _, r := range Compare([]*results.Run{old}, cur) {
		seen[r.Storage] = true
		if !r.Flagged || (r.Storage == "prometheus") != (r.Old == nil) || (r.Storage == "victoriametrics") != (r.New == nil) {
			t.Errorf("%s %s: old %v new %v flagged %v", r.Storage, r.Figure, r.Old, r.New, r.Flagged)
		}
	}
	if !seen["prometheus"] || !seen["victoriametrics"] {
		t.Errorf("storages compared: %v, want both", seen)
	}
}
