package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
)

// TestHAPairs writes an HA pair (series.haReplicas: 2) for 20 s in two runs at once: with a
// replica label to the Debian Prometheus 2.42 and VictoriaMetrics, which both store both
// replicas' series, and to VictoriaMetrics that drops the replica label (-relabelConfig) and
// deduplicates (-dedup.minScrapeInterval=5s), which stores one; and without one (both replicas write the very same series, timestamps
// 5s/3 apart) to VictoriaMetrics without and with -dedup.minScrapeInterval=5s (the scrape
// interval), which stores both copies and one copy. Every account counts every copy and
// balances; the read-back's verdict is what each storage did.
func TestHAPairs(t *testing.T) {
	t.Parallel() // each run starts its storages, in a slot of its own (parallel)
	requireBinaries(t, "victoria-metrics", "prometheus")
	dropReplica := filepath.Join(testDir(t), "relabel.yml")
	if err := os.WriteFile(dropReplica, []byte("- action: labeldrop\n  regex: replica\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name, labels string
		storages     func(t *testing.T) map[string]*local.Process
		want         map[string]string
	}{
		{
			name:   "replica label",
			labels: `{cluster: {name: cluster, value: bench}, replica: {name: replica, values: [a, b]}}`,
			storages: func(t *testing.T) map[string]*local.Process {
				return map[string]*local.Process{
					"prom": startStorage(t, storage.KindPrometheus, "prom"),
					"vm":   startStorage(t, storage.KindVictoriaMetrics, "vm"),
					// VictoriaMetrics as its docs set up an HA pair: drop the replica label on
					// ingestion, then deduplicate the identical series.
					"vmdedup": startStorageWith(t, storage.KindVictoriaMetrics, "vmdedup", []string{"-dedup.minScrapeInterval=5s", "-relabelConfig=" + dropReplica}),
				}
			},
			want: map[string]string{"prom": results.HAStoredBoth, "vm": results.HAStoredBoth, "vmdedup": results.HAStoredOne},
		},
		{
			name:   "no replica label",
			labels: `{cluster: {name: cluster, value: bench}}`,
			storages: func(t *testing.T) map[string]*local.Process {
				return map[string]*local.Process{
					"vm":      startStorage(t, storage.KindVictoriaMetrics, "vm"),
					"vmdedup": startStorageWith(t, storage.KindVictoriaMetrics, "vmdedup", []string{"-dedup.minScrapeInterval=5s"}),
				}
			},
			want: map[string]string{"vm": results.HAStoredBoth, "vmdedup": results.HAStoredOne},
		},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			parallel(t)
			storages := run.storages(t)
			cfg := fmt.Sprintf(`
duration: 20s
targetsCount: 4
scrapeInterval: 5s
scrapeConfigUpdatePercent: 0
queryInterval: 5s
series:
  haReplicas: 2
  haLabels: %s
remoteStorages:
`, run.labels)
			for name, l := range storages {
				cfg += fmt.Sprintf("  %[1]s: {writeURL: %[2]sapi/v1/write, readURL: %[2]s}\n", name, l.URL)
			}
			rr := runTsbench(t, 90*time.Second, cfg)
			if rr.code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
			}
			for name, want := range run.want {
				s := storageResult(t, rr.results, name)
				wr := s.Write
				// 4 targets × 2 replicas, each scraped at least 3 times in 20 s (the last scrapes
				// before the end may be left out, GeneratedBefore).
				per := int64(rr.results.Workload.SeriesPerTarget)
				if ok, diff := wr.Balanced(); !ok || wr.GeneratedSamples < 2*4*3*per || wr.Dropped() != 0 {
					t.Errorf("%s accounting: generated %d acked %d dropped %v, off by %d; want every copy (>= %d) acked", name, wr.GeneratedSamples, wr.AckedSamples, wr.DroppedSamples, diff, 2*4*3*per)
				}
				h := s.Verify.HA
				if h == nil || h.Stored != want || h.CheckedScrapes == 0 || h.Gaps == nil || *h.Gaps != 0 {
					t.Fatalf("%s verify.ha %+v, want stored %s and no gaps", name, h, want)
				}
				if want == results.HAStoredOne && (h.Winner == "" || *h.OneCopy != h.CheckedScrapes) {
					t.Errorf("%s verify.ha %+v: want a winner, one copy of every scrape", name, h)
				}
				if !strings.Contains(rr.stdout, "HA pair (2 replicas): stored "+want) {
					t.Errorf("%s: summary lacks the HA verdict:\n%s", name, rr.stdout)
				}
			}
		})
	}
}
