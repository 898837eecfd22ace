package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// TestSeriesEvents runs a ramp, a spike, pod churn, late and out-of-order samples for 30 s
// against the Debian VictoriaMetrics, Prometheus 2.42, and Prometheus 2.42 with a 10m
// out-of-order window: every account balances, held samples counted apart; the storages' own
// created-series counters come to the series the workload created; and the read-back says
// what each storage did: late samples stored everywhere, out-of-order ones refused (400) by
// Prometheus without the window and stored by the other two.
func TestSeriesEvents(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	prom := startStorage(t, storage.KindPrometheus, "prom")
	ooo := startPrometheusOOO(t, "10m")
	cfg := fmt.Sprintf(`
duration: 30s
targetsCount: 10
scrapeInterval: 5s
scrapeConfigUpdatePercent: 0
queryInterval: 5s
observeInterval: 2s
# The storages' own series counters are compared with the workload's series exactly: no
# freshness canary, whose series (one new per write for the index probe) are its own.
freshness: {interval: 0s}
series:
  events:
    ramp: {from: 10, to: 20, over: 15s}
    spike: {for: 6s, every: 20s, factor: 2}
    podChurn: {lifetime: 20s}
  late: {percent: 5, by: 10s}
  outOfOrder: {percent: 5, by: 10s}
remoteStorages:
  vm: {writeURL: %[1]sapi/v1/write, readURL: %[1]s, metricsURLs: [%[1]smetrics]}
  prom: {writeURL: %[2]sapi/v1/write, readURL: %[2]s, metricsURLs: [%[2]smetrics]}
  promooo: {writeURL: %[3]sapi/v1/write, readURL: %[3]s, metricsURLs: [%[3]smetrics]}
`, vm.URL, prom.URL, ooo)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	res := rr.results
	w := res.Workload
	if w.Series == nil || w.SeriesCreated == 0 {
		t.Fatalf("workload %+v: no series section or nothing created", w)
	}
	names := map[string]int{}
	for _, e := range w.Series.Events {
		names[e.Name]++
	}
	if diff := cmp.Diff(map[string]int{"ramp": 1, "spike": 1}, names); diff != "" {
		t.Errorf("events of the run (-want +got):\n%s", diff)
	}
	// Every series the run wrote; VictoriaMetrics drops NaN samples, so it creates an
	// all-NaN series only if a staleness marker ended it: at most nanSeries of every
	// seriesPerTarget fewer.
	written, per := w.Series.SeriesWritten, int64(w.SeriesPerTarget)
	created := map[string]struct {
		metric   string
		min, max int64
	}{
		"vm":      {"vm_new_timeseries_created_total", written - written/per*int64(nanSeries(t)) - int64(nanSeries(t)), written},
		"prom":    {"prometheus_tsdb_head_series_created_total", written, written},
		"promooo": {"prometheus_tsdb_head_series_created_total", written, written},
	}
	metricsURL := map[string]string{"vm": vm.URL + "metrics", "prom": prom.URL + "metrics", "promooo": ooo + "metrics"}
	wantOOO := map[string]string{"vm": "stored", "prom": "refused", "promooo": "stored"}
	for _, name := range []string{"prom", "promooo", "vm"} {
		t.Run(name, func(t *testing.T) {
			s := storageResult(t, res, name)
			wr := s.Write
			if ok, diff := wr.Balanced(); !ok || wr.GeneratedSamples == 0 {
				t.Errorf("accounting: generated %d acked %d, off by %d", wr.GeneratedSamples, wr.AckedSamples, diff)
			}
			for kind, h := range map[string]*results.WriteHeld{"late": wr.Late, "outOfOrder": wr.OutOfOrder} {
				if h == nil || h.Sent == 0 || h.Sent != h.Acked+h.RefusedTotal()+h.Pending {
					t.Errorf("write.%s %+v: want some sent and sent = acked + refused + pending", kind, h)
				}
			}
			if wr.Late.Acked != wr.Late.Sent {
				t.Errorf("write.late %+v: want every one acked", wr.Late)
			}
			wantRefused := map[string]int64{}
			if wantOOO[name] == "refused" {
				wantRefused["http_400"] = wr.OutOfOrder.Sent
			}
			if diff := cmp.Diff(wantRefused, wr.OutOfOrder.Refused, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("write.outOfOrder.refused (-want +got):\n%s", diff)
			}
			if wr.Dropped() != wr.OutOfOrder.RefusedTotal() {
				t.Errorf("dropped %v: want only refused out-of-order samples", wr.DroppedSamples)
			}
			v := s.Verify
			if v == nil || v.CheckedSamples == 0 || v.MissingSamples != 0 || v.UnexpectedSamples != 0 || v.StalenessIgnored != 0 {
				t.Errorf("read-back %+v", v)
			}
			if v.Late == nil || v.Late.Verdict() != "stored" {
				t.Errorf("verify.late %+v, want stored", v.Late)
			}
			if v.OutOfOrder == nil || v.OutOfOrder.Verdict() != wantOOO[name] {
				t.Errorf("verify.outOfOrder %+v, want %s", v.OutOfOrder, wantOOO[name])
			}
			c := created[name]
			eventually(t, 20*time.Second, func() string {
				if got := int64(scrapeMetric(t, metricsURL[name], c.metric, nil)); got < c.min || got > c.max {
					return fmt.Sprintf("%s = %d, want %d–%d (the run wrote %d series)", c.metric, got, c.min, c.max, written)
				}
				return ""
			})
			if tl := s.Resources.Timeline; len(tl) == 0 || tl[len(tl)-1].SeriesCreated == nil {
				t.Errorf("no seriesCreated in the resource timeline's last point: the series created chart would be empty")
			}
			if name != "vm" {
				// Prometheus' head keeps a series that went stale until its next compaction
				// (2 h blocks): its active series are every series written.
				eventually(t, 20*time.Second, func() string {
					if got := int64(scrapeMetric(t, metricsURL[name], "prometheus_tsdb_head_series", nil)); got != written {
						return fmt.Sprintf("prometheus_tsdb_head_series = %d, want %d, every series written", got, written)
					}
					return ""
				})
			}
			if s.Series == nil || len(s.Series.Events) != len(w.Series.Events) {
				t.Fatalf("event figures %+v, want one per event", s.Series)
			}
			for _, f := range s.Series.Events {
				// The ramp starts with the run: it has no calm before it.
				if f.CPUCores.During == nil || f.RSSBytes.During == nil || f.Name == "spike" && (f.CPUCores.Before == nil || f.RSSBytes.Before == nil) {
					t.Errorf("event %s: figures missing: %+v", f.Name, f)
				}
			}
		})
	}
}

// startPrometheusOOO starts the Debian Prometheus with an out-of-order window in its config
// file (2.42 has no flag for it) and returns its URL.
func startPrometheusOOO(t *testing.T, window string) string {
	t.Helper()
	dir := testDir(t)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("storage:\n  tsdb:\n    out_of_order_time_window: "+window+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	log, err := os.Create(filepath.Join(dir, "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), "prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
	})
	u := "http://" + addr + "/"
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(u + "-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return u
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "log.txt"))
			t.Fatalf("prometheus with an out-of-order window not ready: %v\n%s", err, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
