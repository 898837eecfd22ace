package results

import "testing"

// A day of freshness points stays within TimelinePoints, every sample counted once and the
// largest figure kept.
func TestFreshnessTimelineBounded(t *testing.T) {
	var tl Timeline[FreshnessPoint]
	const n = 8640 // a day at the default 10 s observeInterval
	for i := range n {
		p50, mx := 1.0, float64(i)
		tl.Add(FreshnessPoint{Visible: 2, P50: &p50, Max: &mx, NeverVisible: int64(i % 2)})
	}
	pts := tl.Points()
	var visible, never int64
	var largest float64
	for _, p := range pts {
		visible, never, largest = visible+p.Visible, never+p.NeverVisible, max(largest, *p.Max)
		if *p.P50 != 1 {
			t.Fatalf("p50 %v, want the mean 1", *p.P50)
		}
	}
	if len(pts) > TimelinePoints || visible != 2*n || never != n/2 || largest != n-1 {
		t.Errorf("%d points, visible %d, never %d, max %v: want at most %d, %d, %d, %d", len(pts), visible, never, largest, TimelinePoints, 2*n, n/2, n-1)
	}
}
