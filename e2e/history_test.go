package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/storage"
)

// TestHistory is history's acceptance check (issue 12): 10 targets at 5 s with churn every
// 2m, 15m of history, then 30s live, against real VictoriaMetrics and Prometheus. Each
// storage catches up and acks all of it; what tsbench acked is what the storage says it
// ingested, nothing is dropped or pending; the read-back checks the history from its first
// minute; no rule with a window of 15m or less is left uncompared. A second run against the
// same Prometheus, which now holds newer samples of the same series, has the history it
// refuses under droppedSamples with its status, and the account still balances.
func TestHistory(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	prom := startStorage(t, storage.KindPrometheus, "prom")
	cfg := fmt.Sprintf(`
history: 15m
duration: 30s
targetsCount: 10
scrapeInterval: 5s
scrapeConfigUpdatePercent: 10
scrapeConfigUpdateInterval: 2m
remoteStorages:
  vm: {writeURL: %sapi/v1/write, readURL: %s}
  prom: {writeURL: %sapi/v1/write, readURL: %s}
`, vm.URL, vm.URL, prom.URL, prom.URL)
	rr := runTsbench(t, 4*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	res := rr.results
	if res.Workload.HistorySeconds != 900 {
		t.Errorf("workload.historySeconds %v, want 900", res.Workload.HistorySeconds)
	}
	clock := res.StartTime.Add(-15 * time.Minute)
	ingested := map[string]func() float64{
		"vm": func() float64 {
			return scrapeMetric(t, vm.URL+"metrics", "vm_rows_inserted_total", map[string]string{"type": "promremotewrite"})
		},
		"prom": func() float64 {
			return scrapeMetric(t, prom.URL+"metrics", "prometheus_tsdb_head_samples_appended_total", nil)
		},
	}
	needs := regexp.MustCompile(`\(needs (\S+) of data\)$`)
	for _, name := range []string{"prom", "vm"} {
		t.Run(name, func(t *testing.T) {
			s := storageResult(t, res, name)
			wr := s.Write
			if wr == nil || wr.History == nil {
				t.Fatalf("write %+v: want a history section", wr)
			}
			if len(wr.DroppedSamples) != 0 || wr.PendingSamples != 0 {
				t.Errorf("dropped %v pending %d, want none", wr.DroppedSamples, wr.PendingSamples)
			}
			if ok, diff := wr.Balanced(); !ok {
				t.Errorf("accounting off by %d", diff)
			}
			if got := ingested[name]() - canary(s); got != float64(wr.AckedSamples) {
				t.Errorf("storage ingested %.0f samples beside the freshness canary's, tsbench acked %d", got, wr.AckedSamples)
			}
			h := wr.History
			// 10 targets × ~839 series × 180 scrapes in 15m, and more while catching up.
			if !h.CaughtUp || h.AckedSamples != h.GeneratedSamples || h.AckedSamples < int64(10*res.Workload.SeriesPerTarget*180) || h.SamplesPerSecond <= 0 {
				t.Errorf("history %+v: want caught up, all of 15m acked", h)
			}
			t.Logf("%s caught up at %.0f samples/s in %.1fs", name, h.SamplesPerSecond, h.Seconds)
			if s.Resources == nil || s.Resources.History == nil {
				t.Errorf("resources %+v: want a history section", s.Resources)
			}
			v := s.Verify
			if v == nil {
				t.Fatal("no read-back")
			}
			// VictoriaMetrics changes a few values in their last bit (relative error 2.2e-16):
			// its own, as without history.
			if v.CheckedSamples == 0 || v.MissingSamples != 0 || v.DuplicateSamples != 0 || v.UnexpectedSamples != 0 || v.MaxRelativeError > 1e-12 {
				t.Errorf("read-back: checked %d, missing %d, duplicate %d, unexpected %d, max relative error %g; errors %v",
					v.CheckedSamples, v.MissingSamples, v.DuplicateSamples, v.UnexpectedSamples, v.MaxRelativeError, v.Errors)
			}
			if v.CheckedFrom.After(clock.Add(time.Minute)) {
				t.Errorf("read-back checked from %v, want within the first minute of history (from %v)", v.CheckedFrom, clock)
			}
			for _, rule := range v.RulesNotCompared {
				m := needs.FindStringSubmatch(rule)
				if m == nil {
					t.Errorf("rule not compared without its need: %q", rule)
					continue
				}
				if d, err := time.ParseDuration(m[1]); err != nil || d <= 15*time.Minute {
					t.Errorf("rule %q not compared, though the history covers its window", rule)
				}
			}
		})
	}
	if diff := cmp.Diff([]string(nil), res.AccountingErrors); diff != "" {
		t.Errorf("accounting errors (-want +got):\n%s", diff)
	}
	if t.Failed() {
		return
	}

	// The same workload again, 5 minutes back: Prometheus holds newer samples of every series,
	// and refuses each request with an older one (400, out of order).
	before := ingested["prom"]()
	rr = runTsbench(t, 3*time.Minute, fmt.Sprintf(`
history: 5m
duration: 10s
targetsCount: 10
scrapeInterval: 5s
scrapeConfigUpdatePercent: 10
scrapeConfigUpdateInterval: 2m
verifySamples: 0
remoteStorages:
  prom: {writeURL: %sapi/v1/write, readURL: %s}
`, prom.URL, prom.URL))
	if rr.results == nil {
		t.Fatalf("second run: no results; exit %d; stderr:\n%s", rr.code, rr.stderr)
	}
	wr := storageResult(t, rr.results, "prom").Write
	if wr == nil || wr.History == nil {
		t.Fatalf("second run: write %+v, want a history section", wr)
	}
	if wr.DroppedSamples["http_400"] == 0 || wr.PendingSamples != 0 {
		t.Errorf("second run: dropped %v pending %d, want refused samples as http_400", wr.DroppedSamples, wr.PendingSamples)
	}
	if ok, diff := wr.Balanced(); !ok {
		t.Errorf("second run: accounting off by %d", diff)
	}
	if got := ingested["prom"]() - before - canary(storageResult(t, rr.results, "prom")); got != float64(wr.AckedSamples) {
		t.Errorf("second run: Prometheus ingested %.0f samples, tsbench acked %d", got, wr.AckedSamples)
	}
	if !strings.Contains(rr.stdout, "refused") {
		t.Errorf("second run: the summary does not say why samples were refused:\n%s", rr.stdout)
	}
}

// TestHistoryBeyondTheHead is issue 36's 24-hour run made short: 80 minutes of history, more
// than the hour Prometheus' head accepts behind its newest sample, for 5 targets into the
// VictoriaMetrics and Prometheus tsbench starts itself, with a canary sample due every second.
// The catch-up stays in time order within its bound and the canary waits until the storage
// caught up, so each storage takes every sample: nothing dropped, what it says it ingested is
// what tsbench acked (and the canary's), the summary says no sample was refused, and the
// storages' settings are those of the run, printed and in results.json.
func TestHistoryBeyondTheHead(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	rr := runTsbench(t, 3*time.Minute, `
history: 80m
duration: 5s
targetsCount: 5
verifySamples: 0
freshness: {writeInterval: 1s}
`)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	res := rr.results
	if res.Workload.HistorySkewSeconds != 60 {
		t.Errorf("workload.historySkewSeconds %v, want 60", res.Workload.HistorySkewSeconds)
	}
	retention := map[string]string{"prometheus": "--storage.tsdb.retention.time=15d", "victoriametrics": "-retentionPeriod=31d"}
	for name, flag := range retention {
		t.Run(name, func(t *testing.T) {
			s := storageResult(t, res, name)
			w := s.Write
			if w == nil || w.History == nil {
				t.Fatalf("write %+v: want a history section", w)
			}
			h := w.History
			// 5 targets × 839 series × 480 scrapes in 80m, and more while catching up.
			if len(w.DroppedSamples) != 0 || w.PendingSamples != 0 || !h.CaughtUp || h.AckedSamples != h.GeneratedSamples || h.AckedSamples < 5*839*480 {
				t.Errorf("dropped %v, pending %d, history %+v: want all of 80m acked", w.DroppedSamples, w.PendingSamples, h)
			}
			if r := s.Resources; r == nil || r.IngestedSamples == nil || *r.IngestedSamples-canary(s) != float64(w.AckedSamples) {
				t.Errorf("resources %+v: want the storage's own count of ingested samples to be the %d acked and the canary's", r, w.AckedSamples)
			}
			if f := s.Freshness; f == nil || f.Acked == 0 || f.Acked != f.Written {
				t.Errorf("freshness %+v: want canary samples written after the catch-up, all acked", f)
			}
			if !slices.Contains(s.Settings, flag) {
				t.Errorf("settings %q, want %s among them", s.Settings, flag)
			}
			t.Logf("%s caught up at %.0f samples/s in %.1fs", name, h.SamplesPerSecond, h.Seconds)
		})
	}
	for _, want := range []string{"settings of the storages that change what tsbench measures:", retention["prometheus"], retention["victoriametrics"], "no sample more than 1m0s older"} {
		if !strings.Contains(rr.stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, rr.stdout)
		}
	}
	if strings.Contains(rr.stdout, "refused") {
		t.Errorf("the summary says samples were refused:\n%s", rr.stdout)
	}
}
