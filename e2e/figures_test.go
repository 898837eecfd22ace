package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/storage"
)

// TestDiskFiguresNeverMadeUp is issue 10's first check, against the real Prometheus 2.42 of
// Debian: observed through its /metrics alone it exposes only its blocks' size
// (prometheus_tsdb_storage_blocks_bytes 0) while its WAL holds the data, so its disk and
// bytes per sample are unknown with a reason that names the missing gauges and dataDir,
// never 0; the same Prometheus observed with its dataDir gets positive figures.
func TestDiskFiguresNeverMadeUp(t *testing.T) {
	parallel(t)
	requireBinaries(t, "prometheus")
	blind := startStorage(t, storage.KindPrometheus, "blind")
	withDir := startStorage(t, storage.KindPrometheus, "withdir")
	cfg := fmt.Sprintf(`
duration: 30s
targetsCount: 30
scrapeInterval: 5s
remoteStorages:
  blind: {writeURL: %sapi/v1/write, metricsURLs: [%smetrics]}
  withdir: {writeURL: %sapi/v1/write, metricsURLs: [%smetrics], dataDir: %s}
`, blind.URL, blind.URL, withDir.URL, withDir.URL, withDir.DataDir)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}

	s := storageResult(t, rr.results, "blind")
	if s.Write == nil || s.Write.AckedSamples == 0 {
		t.Fatalf("write %+v: want samples acked", s.Write)
	}
	r := s.Resources
	if r == nil || r.Source != "metrics" {
		t.Fatalf("resources %+v: want observed through metrics", r)
	}
	for field, v := range map[string]*float64{
		"diskBytesEnd": r.DiskBytesEnd, "diskBytesMax": r.DiskBytesMax, "diskBytesGrowth": r.DiskBytesGrowth,
		"bytesPerSample": r.BytesPerSample,
	} {
		why := r.Reasons[field]
		if v != nil {
			t.Errorf("%s = %v, want null: Prometheus 2.42 does not expose the size of its WAL and head chunks", field, *v)
		}
		for _, want := range []string{"prometheus_tsdb_wal_storage_size_bytes", "set dataDir", "2.43 or newer"} {
			if !strings.Contains(why, want) {
				t.Errorf("%s reason %q, want it to say %q", field, why, want)
			}
		}
	}
	for _, p := range r.Timeline {
		if p.DiskBytes != nil || p.BytesPerSample != nil {
			t.Errorf("timeline %s: disk known %t, bytes per sample known %t, want null", p.Time, p.DiskBytes != nil, p.BytesPerSample != nil)
		}
	}
	// What it does expose is still there.
	if r.CPUCoresMean == nil || r.RSSBytesMax == nil || r.IngestedSamples == nil || *r.IngestedSamples <= 0 {
		t.Errorf("cpu %v rss %v ingested %v: want the figures its /metrics gives", r.CPUCoresMean, r.RSSBytesMax, r.IngestedSamples)
	}

	d := storageResult(t, rr.results, "withdir").Resources
	if d == nil || d.DiskBytesEnd == nil || *d.DiskBytesEnd <= 0 || d.DiskBytesGrowth == nil || *d.DiskBytesGrowth <= 0 ||
		d.BytesPerSample == nil || *d.BytesPerSample <= 0 {
		t.Fatalf("with dataDir: %+v, want positive disk and bytes per sample", d)
	}
	t.Logf("with dataDir: %.0f bytes on disk, %.0f grown, %.3f bytes per sample", *d.DiskBytesEnd, *d.DiskBytesGrowth, *d.BytesPerSample)

	// The summary shows the unknown as "?", not 0.
	row := regexp.MustCompile(`(?m)^bytes/sample \(live\)\s+(\S+)\s+(\S+)`).FindStringSubmatch(rr.stdout)
	if row == nil || row[1] != "?" || row[2] == "?" {
		t.Errorf("summary row bytes/sample %q: want ? for blind and a figure for withdir", row)
	}
}
