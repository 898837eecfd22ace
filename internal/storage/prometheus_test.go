package storage

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPrometheusLocal: a local Prometheus keeps its own default, 15 days, up to the history
// it covers, and the history plus a day beyond; it stores native histograms and exemplars
// only with the features that enable them.
func TestPrometheusLocal(t *testing.T) {
	f := Kind(KindPrometheus).Family()
	for _, tc := range []struct {
		history time.Duration
		want    string
	}{
		{0, "--storage.tsdb.retention.time=15d"},
		{14 * 24 * time.Hour, "--storage.tsdb.retention.time=15d"},
		{20*24*time.Hour + time.Hour, "--storage.tsdb.retention.time=22d"},
	} {
		if settings := f.Local.Settings(f.RetentionFor(tc.history)); !slices.Contains(settings, tc.want) {
			t.Errorf("history %s: settings %q, want %s", tc.history, settings, tc.want)
		}
	}
	for _, tc := range []struct {
		native, exemplars bool
		want              []string
	}{
		{false, false, nil},
		{true, false, []string{"--enable-feature=native-histograms"}},
		{true, true, []string{"--enable-feature=native-histograms,exemplar-storage"}},
	} {
		if diff := cmp.Diff(tc.want, f.Local.SampleTypes(tc.native, tc.exemplars)); diff != "" {
			t.Errorf("native %v, exemplars %v (-want +got):\n%s", tc.native, tc.exemplars, diff)
		}
	}
}

// TestPrometheusMetrics reads disk, ingestion and series from Prometheus' page: the disk is
// its blocks, WAL and head chunks (and the WBL when it has one), unknown from a Prometheus
// before 2.43, which gives only its blocks.
func TestPrometheusMetrics(t *testing.T) {
	f := Kind(KindPrometheus).Family()
	p := page(t, `prometheus_tsdb_storage_blocks_bytes 100
prometheus_tsdb_wal_storage_size_bytes 20
prometheus_tsdb_head_chunks_storage_size_bytes 3
prometheus_tsdb_head_samples_appended_total{type="float"} 40
prometheus_tsdb_head_samples_appended_total{type="histogram"} 2
prometheus_tsdb_head_series 839
`)
	if v, why, ok := f.Disk(p); v != 123 || why != "" || !ok {
		t.Errorf("disk %v %q %v, want 123", v, why, ok)
	}
	if v, ok := p.Select(f.Ingested[0]); v != 42 || !ok {
		t.Errorf("ingested %v %v, want every type's 42", v, ok)
	}
	if v, ok := p.Select(*f.Series); v != 839 || !ok {
		t.Errorf("series %v %v, want 839", v, ok)
	}
	old := page(t, "prometheus_tsdb_storage_blocks_bytes 0\n")
	if _, why, ok := f.Disk(old); !ok || !strings.Contains(why, "prometheus_tsdb_wal_storage_size_bytes, prometheus_tsdb_head_chunks_storage_size_bytes not exposed") {
		t.Errorf("Prometheus 2.42's disk: %q %v, want the parts not exposed named", why, ok)
	}
}

// TestPrometheusSnapshot makes a snapshot through the admin API, and says how to enable it
// when it is not.
func TestPrometheusSnapshot(t *testing.T) {
	s := Kind(KindPrometheus).Family().Snapshot
	for _, status := range []string{"success", "error"} {
		var calls []string
		name, err := s.Create(t.Context(), func(_ context.Context, method, path string, into any) error {
			calls = append(calls, method+" "+path)
			b := into.(*struct {
				Status string
				Error  string
				Data   struct{ Name string }
			})
			b.Status, b.Data.Name = status, "20260101T000000Z-1"
			return nil
		})
		if diff := cmp.Diff([]string{http.MethodPost + " api/v1/admin/tsdb/snapshot"}, calls); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		if status == "success" && (err != nil || name != "20260101T000000Z-1") {
			t.Errorf("snapshot %q %v", name, err)
		}
		if status != "success" && (err == nil || !strings.Contains(err.Error(), "--web.enable-admin-api")) {
			t.Errorf("error %v, want it to name --web.enable-admin-api", err)
		}
	}
	dir := filepath.Join(t.TempDir(), "snapshots", "20260101T000000Z-1")
	if err := os.MkdirAll(filepath.Join(dir, "01ABC"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), nil, "20260101T000000Z-1", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("snapshot dir left behind (Prometheus has no API to delete it): %v", err)
	}
}
