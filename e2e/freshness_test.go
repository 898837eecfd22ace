package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
)

// TestFreshnessLatencyOffset runs the canary against two Debian VictoriaMetrics, one as
// tsbench starts it (-search.latencyOffset=0s) and one with -search.latencyOffset=5s: the
// second's instant-query freshness is at least the 5 s it hides the newest samples for, the
// first's well under it, and every acked canary sample is accounted for.
func TestFreshnessLatencyOffset(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics")
	vm0 := startStorage(t, storage.KindVictoriaMetrics, "vm0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vm5, err := local.StartWith(ctx, storage.KindVictoriaMetrics, "vm5", false, 0, []string{"-search.latencyOffset=5s"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := vm5.Stop(); err != nil {
			t.Error(err)
		}
	})
	cfg := fmt.Sprintf(`
duration: 25s
targetsCount: 2
verifySamples: 0
freshness: {writeInterval: 1s} # a sample a second (24 queries/s): enough samples in 25 s
remoteStorages:
  vm0: {writeURL: %s, readURL: %s}
  vm5: {writeURL: %s, readURL: %s}
`, vm0.Storage.WriteURL, vm0.Storage.ReadURL, vm5.Storage.WriteURL, vm5.Storage.ReadURL)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit %d; stderr:\n%s", rr.code, rr.stderr)
	}
	p50 := map[string]float64{}
	for _, name := range []string{"vm0", "vm5"} {
		f := storageResult(t, rr.results, name).Freshness
		if f == nil {
			t.Fatalf("%s: no freshness section", name)
		}
		if f.Acked < 20 || f.Acked != f.Written {
			t.Errorf("%s: %d of %d canary writes acked, want about 25, all", name, f.Acked, f.Written)
		}
		for what, p := range map[string]*results.FreshnessProbe{"instant": f.Instant, "range": f.Range, "series": f.Series} {
			if got := p.Visible + p.NeverVisible + p.Pending; got != f.Acked || len(p.Errors) != 0 {
				t.Errorf("%s %s: visible %d + never %d + pending %d = %d, want acked %d; errors %v", name, what, p.Visible, p.NeverVisible, p.Pending, got, f.Acked, p.Errors)
			}
		}
		if f.Instant.Visible < 10 || f.Instant.Seconds.P50 == nil {
			t.Fatalf("%s: %d canary samples seen by the instant query", name, f.Instant.Visible)
		}
		p50[name] = *f.Instant.Seconds.P50
		t.Logf("%s instant p50 %.3fs p99 %.3fs max %.3fs; range p50 %v; series p50 %v; %.1f queries/s",
			name, *f.Instant.Seconds.P50, *f.Instant.Seconds.P99, *f.Instant.Seconds.Max, deref(f.Range.Seconds.P50), deref(f.Series.Seconds.P50), f.QueriesPerSecond)
	}
	if p50["vm0"] > 2.5 {
		t.Errorf("vm0 (-search.latencyOffset=0s): instant p50 %.3fs, want under 2.5s", p50["vm0"])
	}
	if p50["vm5"] < 5 || p50["vm5"] > 7.5 {
		t.Errorf("vm5 (-search.latencyOffset=5s): instant p50 %.3fs, want in [5s, 7.5s]", p50["vm5"])
	}
	if d := p50["vm5"] - p50["vm0"]; d < 3.5 {
		t.Errorf("the 5s offset moved the instant p50 by %.3fs, want about 5s", d)
	}
}

// canary is how many samples the storage ingested of the freshness canary, beside the
// workload's: its ingestion counters hold both.
func canary(s results.Storage) float64 {
	if s.Freshness == nil {
		return 0
	}
	return float64(s.Freshness.AckedSamples)
}
