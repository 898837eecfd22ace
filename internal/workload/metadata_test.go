package workload

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFillMetadata: each series gets its family's help and unit (the # UNIT line, else the
// base unit its name ends with); names, labels, types and shapes stay as they were, and a
// series the exporter no longer has keeps none.
func TestFillMetadata(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 1
# HELP go_gc_duration_seconds A summary of GC pauses.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0.5"} 0
go_gc_duration_seconds_sum 1
go_gc_duration_seconds_count 2
# HELP node_load1 1m load average.
# TYPE node_load1 gauge
node_load1 0.5
`)
	}))
	t.Cleanup(srv.Close)
	shape := Shape{Kind: Counter, Rate: 1}
	p := &Profile{Source: "test", Series: []Series{
		{Name: "node_cpu_seconds_total", Labels: []Label{{"cpu", "0"}, {"mode", "idle"}}, Type: "counter", Shape: shape},
		{Name: "go_gc_duration_seconds_count", Type: "summary", Shape: shape},
		{Name: "node_load1", Type: "gauge", Shape: Shape{Kind: Constant, Value: 1}},
		{Name: "gone_total", Type: "counter", Shape: shape},
	}}
	n, err := FillMetadata(t.Context(), srv.Client(), srv.URL, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Series{
		{Name: "node_cpu_seconds_total", Labels: []Label{{"cpu", "0"}, {"mode", "idle"}}, Type: "counter", Shape: shape, Help: "Seconds the CPUs spent in each mode.", Unit: "seconds"},
		{Name: "go_gc_duration_seconds_count", Type: "summary", Shape: shape, Help: "A summary of GC pauses.", Unit: "seconds"},
		{Name: "node_load1", Type: "gauge", Shape: Shape{Kind: Constant, Value: 1}, Help: "1m load average."},
		{Name: "gone_total", Type: "counter", Shape: shape},
	}
	if diff := cmp.Diff(want, p.Series); diff != "" || n != 3 {
		t.Errorf("filled %d, want 3; series (-want +got):\n%s", n, diff)
	}
	if _, err := FillMetadata(t.Context(), srv.Client(), srv.URL, p); err != nil || p.Source != "test"+metadataNote {
		t.Errorf("source after two fills %q (%v): want the note once", p.Source, err)
	}
}
