package remotewrite

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// TestResumeContinuesTheAccount: a writer resumed from a checkpoint makes no scrape scheduled
// before From, and its account is the checkpoint's (less what it had pending, whose fate no
// one knows) plus its own, balanced.
func TestResumeContinuesTheAccount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := memReceiver(t, nil)
		base := &results.Write{
			GeneratedSamples: 1000, AckedSamples: 900, PendingSamples: 40, DroppedSamples: map[string]int64{"http_400": 60},
			RequestsByStatus: map[string]int64{"204": 9}, Retries: 3, BytesSent: 5000, MaxLagSeconds: 7,
			AchievedSamplesPerSecond: 90, // 900 acked over 10 s
			Limits:                   []results.WriteLimit{{Limit: "ingestion rate", Family: "Cortex", Status: 429, Requests: 5}},
		}
		w := run(t, map[string]config.Storage{"s": writeTo("http://s.test")}, memNet{"s.test": rc}, 2*time.Second, func(w *Writer) {
			w.From, w.End = time.Now().Add(500*time.Millisecond), time.Now().Add(1500*time.Millisecond)
			w.Resume("s", base)
		})
		// 20 targets × 10 series every 100 ms, over the second from From to End: 10 scrapes each.
		if rc.samples != 20*10*10 {
			t.Errorf("receiver got %d samples, want the %d scheduled from From on", rc.samples, 20*10*10)
		}
		for s, ts := range rc.series {
			if ts[0] < w.From.UnixMilli() {
				t.Fatalf("series %s has a sample at %d, before From %d", s, ts[0], w.From.UnixMilli())
			}
		}
		got := w.Results("s")
		want := results.Write{
			GeneratedSamples: 960 + rc.samples, AckedSamples: 900 + rc.samples, DroppedSamples: map[string]int64{"http_400": 60},
			Retries: 3, MaxLagSeconds: 7,
		}
		sub := results.Write{
			GeneratedSamples: got.GeneratedSamples, AckedSamples: got.AckedSamples, DroppedSamples: got.DroppedSamples,
			Retries: got.Retries, MaxLagSeconds: got.MaxLagSeconds,
		}
		if diff := cmp.Diff(want, sub); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if got.BytesSent <= 5000 {
			t.Errorf("bytes sent %d, want the checkpoint's 5000 and more", got.BytesSent)
		}
		if got.RequestsByStatus["204"] != 9+int64(rc.requests) {
			t.Errorf("requests 204: %d, want 9 + %d", got.RequestsByStatus["204"], rc.requests)
		}
		// The rate over both parts: 900 + 2000 acked over 10 s and this process's at most 1.5 s
		// (it was this process's alone, ~2000/s, before).
		if r := got.AchievedSamplesPerSecond; r < 2900/11.5 || r > 2900/10 {
			t.Errorf("achieved %.1f samples/s, want the %d acked over both parts' time", r, 900+rc.samples)
		}
		// The checkpoint's limits stay, once however often Results runs (every checkpoint).
		if again := w.Results("s"); !cmp.Equal(again.Limits, base.Limits) || base.Limits[0].Requests != 5 {
			t.Errorf("limits %+v, want the checkpoint's %+v", again.Limits, base.Limits)
		}
		if w.Acked("s") != got.AckedSamples {
			t.Errorf("Acked %d, Results %d", w.Acked("s"), got.AckedSamples)
		}
	})
}

// TestSkipBefore: the first position at or after from, over cycles of three targets.
func TestSkipBefore(t *testing.T) {
	at := func(pos int, k int64) int64 { return k*100 + int64(pos)*10 } // phases 0, 10, 20
	for _, c := range []struct {
		from  int64
		pos   int
		cycle int64
	}{{0, 0, 0}, {5, 1, 0}, {20, 2, 0}, {21, 0, 1}, {100_010, 1, 1000}} {
		if pos, k := skipBefore(c.from, 3, at); pos != c.pos || k != c.cycle {
			t.Errorf("from %d: position %d of cycle %d, want %d of %d", c.from, pos, k, c.pos, c.cycle)
		}
	}
}
