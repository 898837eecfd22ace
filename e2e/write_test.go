package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// TestWriteAccounting is the write path's acceptance check: a 70 s run of 50 targets at a 5 s
// interval with churn, against real VictoriaMetrics and Prometheus. What tsbench says was acked
// is what each storage says it ingested, nothing is dropped or pending, and each storage holds
// exactly the series that were written. The same run carries the default read load: every
// default rule executes on both storages without errors.
func TestWriteAccounting(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	prom := startStorage(t, storage.KindPrometheus, "prom")
	// 70 s: the panels' 1 m interval, with each storage's own phase up to a minute, fits in
	// the query load's window whatever the phases (checkReadLoad wants every panel run).
	cfg := fmt.Sprintf(`
duration: 70s
targetsCount: 50
scrapeInterval: 5s
scrapeConfigUpdatePercent: 10
scrapeConfigUpdateInterval: 25s
queryInterval: 10s
remoteStorages:
  vm: {writeURL: %sapi/v1/write, readURL: %s}
  prom: {writeURL: %sapi/v1/write, readURL: %s}
`, vm.URL, vm.URL, prom.URL, prom.URL)
	start := time.Now()
	rr := runTsbench(t, 4*time.Minute, cfg)
	if rr.code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	res := rr.results
	w := res.Workload
	if w.Targets != 50 || w.SeriesPerTarget < 800 || w.SeriesPerTarget > 1000 {
		t.Errorf("workload %+v: want 50 targets of 800–1000 series", w)
	}
	// Churn at 25 s and 50 s, 5 targets each: every one of them is scraped again before 70 s (the third would be at 75 s).
	if want := int64(2 * 5 * w.SeriesPerTarget); w.SeriesCreated != want {
		t.Errorf("seriesCreated %d, want %d (2 churns × 5 targets × %d series)", w.SeriesCreated, want, w.SeriesPerTarget)
	}
	if w.StaleMarkers != w.SeriesCreated {
		t.Errorf("staleMarkers %d, want one per series left by churn: %d", w.StaleMarkers, w.SeriesCreated)
	}
	wantSeries := 50*w.SeriesPerTarget + int(w.SeriesCreated)

	ingested := map[string]func() float64{
		"vm": func() float64 {
			return scrapeMetric(t, vm.URL+"metrics", "vm_rows_inserted_total", map[string]string{"type": "promremotewrite"})
		},
		"prom": func() float64 {
			return scrapeMetric(t, prom.URL+"metrics", "prometheus_tsdb_head_samples_appended_total", nil)
		},
	}
	readURL := map[string]string{"vm": vm.URL, "prom": prom.URL}
	for _, name := range []string{"prom", "vm"} {
		t.Run(name, func(t *testing.T) {
			s := storageResult(t, res, name)
			if s.Write == nil {
				t.Fatal("no write section")
			}
			wr := s.Write
			if len(wr.DroppedSamples) != 0 || wr.PendingSamples != 0 {
				t.Errorf("dropped %v pending %d, want none", wr.DroppedSamples, wr.PendingSamples)
			}
			if ok, diff := wr.Balanced(); !ok || wr.GeneratedSamples == 0 {
				t.Errorf("accounting: generated %d acked %d, off by %d", wr.GeneratedSamples, wr.AckedSamples, diff)
			}
			if got := ingested[name]() - canary(s); got != float64(wr.AckedSamples) {
				t.Errorf("storage ingested %.0f samples beside the freshness canary's, tsbench acked %d", got, wr.AckedSamples)
			}
			want := wantSeries
			if name == "vm" {
				// VictoriaMetrics drops NaN samples (staleness markers aside), so a series whose
				// every value is NaN exists there only if a marker ended it: the current
				// revision of each target has nanSeries that VictoriaMetrics never stores.
				want -= 50 * nanSeries(t)
			}
			// The series index is eventually consistent in VictoriaMetrics: retry briefly.
			eventually(t, 20*time.Second, func() string {
				got := seriesCount(t, readURL[name], `{job="node_exporter"}`, start)
				if got != want {
					return fmt.Sprintf("storage holds %d series, want %d (%d targets × %d + %d churned = %d, less what it cannot hold)",
						got, want, 50, w.SeriesPerTarget, w.SeriesCreated, wantSeries)
				}
				return ""
			})
			checkReadLoad(t, s)
		})
	}
	if diff := cmp.Diff([]string(nil), res.AccountingErrors); diff != "" {
		t.Errorf("accounting errors (-want +got):\n%s", diff)
	}
}

// nanSeries is how many series of the default profile are NaN at every scrape.
func nanSeries(t *testing.T) int {
	t.Helper()
	p, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range p.Series {
		if s.Shape.Kind == "nan" {
			n++
		}
	}
	return n
}
