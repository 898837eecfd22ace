package fidelity

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMeasurePipeline measures a fake VictoriaMetrics and Prometheus: it waits for the merges
// to end, sums vm_rows of the storage parts, sizes the data dirs and the Prometheus snapshot,
// counts samples and series from the blocks' meta.json, and counts changed samples and
// staleness markers per series kind in the export of the sampled targets.
func TestMeasurePipeline(t *testing.T) {
	vmDir, promDir := t.TempDir(), t.TempDir()
	write := func(path string, size int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(vmDir, "data", "small", "part", "values.bin"), 500)
	write(filepath.Join(vmDir, "indexdb", "items.bin"), 300)
	merges := 2 // the first /metrics says merges are running, then none
	var flushes, match string
	vm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/internal/force_flush", "/internal/force_merge":
			flushes += r.URL.Path + " "
		case "/metrics":
			merges--
			fmt.Fprintf(w, "vm_active_force_merges %d\nvm_active_merges{type=\"storage/small\"} 0\n", max(merges, 0))
			fmt.Fprint(w, "vm_rows{type=\"storage/small\"} 600\nvm_rows{type=\"storage/big\"} 400\nvm_rows{type=\"indexdb/file\"} 50\n")
		case "/api/v1/export":
			match = r.URL.Query().Get("match[]")
			fmt.Fprintln(w, `{"metric":{"__name__":"node_cpu_seconds_total"},"values":[1,1,2,NaN,null],"timestamps":[1,2,3,4,5]}`)
			fmt.Fprintln(w, `{"metric":{"__name__":"go_goroutines"},"values":[5,5,5],"timestamps":[1,2,3]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer vm.Close()
	meta := `{"stats":{"numSamples":1000,"numSeries":52}}`
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/admin/tsdb/snapshot" || r.URL.Query().Get("skip_head") != "false" {
			http.NotFound(w, r)
			return
		}
		block := filepath.Join(promDir, "snapshots", "snap-1", "01BLOCK")
		write(filepath.Join(block, "chunks", "000001"), 1500)
		write(filepath.Join(block, "index"), 400)
		if err := os.WriteFile(filepath.Join(block, "meta.json"), []byte(meta), 0o644); err != nil {
			t.Error(err)
		}
		fmt.Fprint(w, `{"status":"success","data":{"name":"snap-1"}}`)
	}))
	defer prom.Close()

	got, err := measurePipeline(context.Background(), vm.Client(), pipeline{"real", vm.URL, vmDir, prom.URL, promDir}, 10, "host-0", time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	want := figures{
		seriesPerTarget: 5.2, vmSamples: 1000, promSamples: 1000,
		vmData: 500, vmTotal: 800, promChunks: 1500, promTotal: 1900 + float64(len(meta)),
		changed:  map[string][2]float64{"node_cpu": {3, 4}, "go_": {0, 2}},
		exported: 8, stale: 1,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(figures{})); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	if want := strings.Repeat("/internal/force_flush /internal/force_merge ", 2); flushes != want {
		t.Errorf("calls %q, want flush and merge twice: %q", flushes, want)
	}
	if match != `{instance=~"host-0"}` {
		t.Errorf("export match[] %q", match)
	}
}

// TestMeasurePipelineRefusedMetrics: a /metrics page VictoriaMetrics answers with an error
// fails the measurement, naming the status, rather than reading as no rows stored.
func TestMeasurePipelineRefusedMetrics(t *testing.T) {
	vm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		}
	}))
	defer vm.Close()
	_, err := measurePipeline(t.Context(), vm.Client(), pipeline{"real", vm.URL, t.TempDir(), vm.URL, t.TempDir()}, 10, "host-0", time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "HTTP 503: overloaded") {
		t.Errorf("got %v, want the /metrics page's HTTP 503", err)
	}
}

// TestMainUsage: no subcommand, or an unknown one, is a usage error (2); a non-loopback
// address is refused before anything is fetched (1).
func TestMainUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, "usage: fidelity cache|measure"},
		{[]string{"frob"}, 2, `unknown subcommand "frob"`},
		{[]string{"cache", "-upstream", "http://10.0.0.1:9100/metrics"}, 1, "only loopback addresses"},
		{[]string{"measure", "-pipeline", "real,http://10.0.0.1:8428,/d,http://127.0.0.1:9090,/p"}, 1, "only loopback addresses"},
		{[]string{"measure", "-targets", "5"}, 1, "at least two -pipeline"},
	} {
		var stderr strings.Builder
		if code := Main(context.Background(), tc.args, &strings.Builder{}, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.err) {
			t.Errorf("fidelity %q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.err)
		}
	}
}
