package storage

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestVictoriaMetricsRetention: a local VictoriaMetrics keeps its own default, 31 days, up
// to the history it covers, and the history plus a day beyond.
func TestVictoriaMetricsRetention(t *testing.T) {
	f := Kind(KindVictoriaMetrics).Family()
	for _, tc := range []struct {
		history time.Duration
		want    string
	}{
		{0, "-retentionPeriod=31d"},
		{6 * time.Hour, "-retentionPeriod=31d"},
		{40 * 24 * time.Hour, "-retentionPeriod=41d"},
	} {
		if settings := f.Local.Settings(f.RetentionFor(tc.history)); !slices.Contains(settings, tc.want) {
			t.Errorf("history %s: settings %q, want %s", tc.history, settings, tc.want)
		}
	}
}

// TestVictoriaMetricsMetrics reads disk, ingestion and series from VictoriaMetrics' pages:
// the disk without the in-memory parts and unknown without a part on disk; what came by
// remote write, or every type when none did (a vminsert of another protocol).
func TestVictoriaMetricsMetrics(t *testing.T) {
	f := Kind(KindVictoriaMetrics).Family()
	p := page(t, `vm_data_size_bytes{type="indexdb/file"} 100
vm_data_size_bytes{type="indexdb/inmemory"} 1000
vm_data_size_bytes{type="storage/small"} 20
vm_data_size_bytes{type="storage/big"} 3
vm_rows_inserted_total{type="promremotewrite"} 50
vm_rows_inserted_total{type="graphite"} 7
vm_cache_entries{type="storage/hour_metric_ids"} 839
vm_cache_entries{type="storage/tsid"} 1000
`)
	if v, why, ok := f.Disk(p); v != 123 || why != "" || !ok {
		t.Errorf("disk %v %q %v, want 123 bytes on disk", v, why, ok)
	}
	if v, ok := p.Select(f.Ingested[0]); v != 50 || !ok {
		t.Errorf("ingested %v %v, want the 50 of promremotewrite", v, ok)
	}
	if v, ok := p.Select(*f.Series); v != 839 || !ok {
		t.Errorf("series %v %v, want 839", v, ok)
	}
	other := page(t, "vm_data_size_bytes{type=\"storage/small\"} 20\nvm_rows_inserted_total{type=\"graphite\"} 7\n")
	if _, why, ok := f.Disk(other); !ok || !strings.Contains(why, `no type="indexdb/file", type="storage/big"`) {
		t.Errorf("disk without two parts: %q %v, want them named", why, ok)
	}
	if v, ok := other.Select(f.Ingested[0]); v != 7 || !ok {
		t.Errorf("ingested %v %v without remote write, want every type's 7", v, ok)
	}
}

// TestVictoriaMetricsSnapshot makes a snapshot through its API and deletes it through it.
func TestVictoriaMetricsSnapshot(t *testing.T) {
	var calls []string
	call := func(_ context.Context, method, path string, into any) error {
		calls = append(calls, method+" "+path)
		if b, ok := into.(*struct{ Status, Snapshot, Msg string }); ok {
			b.Status, b.Snapshot = "ok", "20260101-1"
		}
		return nil
	}
	s := Kind(KindVictoriaMetrics).Family().Snapshot
	name, err := s.Create(t.Context(), call)
	if err != nil || name != "20260101-1" {
		t.Fatalf("snapshot %q %v", name, err)
	}
	if err := s.Delete(t.Context(), call, name, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	want := []string{http.MethodGet + " snapshot/create", http.MethodGet + " snapshot/delete?snapshot=20260101-1"}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
