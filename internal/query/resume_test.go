package query

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// TestResumeContinuesLatencies: a runner resumed from a checkpoint's results counts on from
// them: executions add up, and the latency histogram holds both runs' evaluations, so the
// checkpoint's slow answers stay in the p99 (issue 19).
func TestResumeContinuesLatencies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answer := func(delay time.Duration) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				time.Sleep(delay)
				_, _ = w.Write([]byte(vector2))
			})
		}
		cfg := config.Default()
		first, _ := fakeRunner(t, cfg, rules(time.Second, "r"), answer(2*time.Second))
		runFor(t, first, 100*time.Second)
		cp := first.Results()
		second, _ := fakeRunner(t, cfg, rules(time.Second, "r"), answer(10*time.Millisecond))
		if err := second.Resume(cp); err != nil {
			t.Fatal(err)
		}
		runFor(t, second, 10*time.Second)
		got := second.Results()
		fresh := got.Executed - cp.Executed
		if fresh < 9 || got.PerQuery[0].Executed != got.Executed || got.OK != cp.OK+fresh {
			t.Errorf("executed %d (checkpoint %d), ok %d: want the checkpoint's and ~10 more", got.Executed, cp.Executed, got.OK)
		}
		// The checkpoint's ~33 answers of 2 s are more than 1% of the ~43 in all.
		if p99 := got.LatencySeconds.P99; p99 == nil || *p99 < 2 {
			t.Errorf("p99 %v, want the checkpoint's 2 s answers in it", p99)
		}
		if p50 := got.LatencySeconds.P50; p50 == nil || *p50 < 2 {
			t.Errorf("p50 %v: most answers took 2 s", p50)
		}
		if len(got.Timeline) <= len(cp.Timeline) {
			t.Errorf("timeline of %d points, the checkpoint had %d: want it continued", len(got.Timeline), len(cp.Timeline))
		}
	})
}
