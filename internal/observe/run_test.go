package observe

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tsbench/tsbench/internal/storage"
)

// procRoot is a /proc root that can be moved from one fixed tree to the next between
// collections: a symlink in a temp dir.
func procRoot(t *testing.T) (root string, moveTo func(tree string)) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "proc")
	moveTo = func(tree string) {
		abs, err := filepath.Abs(filepath.Join("testdata", tree))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(root)
		if err := os.Symlink(abs, root); err != nil {
			t.Fatal(err)
		}
	}
	moveTo("proc-t0")
	return root, moveTo
}

// TestProcAndMetrics observes one Prometheus by /proc and by its /metrics: /proc gives CPU,
// RSS and disk IO, /metrics the samples ingested and (without a data dir) the disk bytes,
// and both sources' CPU and RSS stay available for a cross-check.
func TestProcAndMetrics(t *testing.T) {
	root, moveTo := procRoot(t)
	srv := stepped(t, "prometheus.prom", "prometheus-t1.prom")
	reg := prometheus.NewRegistry()
	o := New(Options{Writes: acked(50000), ProcRoot: root, Registerer: reg, Logger: discard()},
		[]Target{{Name: "prom", PID: pid, MetricsURLs: []string{srv.URL}}})
	o.collect(t.Context(), t0)
	moveTo("proc-t1")
	o.collect(t.Context(), t0.Add(10*time.Second))

	r := o.Resources("prom")
	if r.Source != "proc+metrics" {
		t.Errorf("source %q", r.Source)
	}
	for name, f := range map[string]struct {
		got  *float64
		want float64
	}{
		"cpuCoresMean":            {r.CPUCoresMean, 0.6},            // /proc: 600 ticks in 10 s
		"rssBytesMean":            {r.RSSBytesMean, 307200 * 1024},  // /proc: the 10 s interval's figure
		"rssBytesMax":             {r.RSSBytesMax, 307200 * 1024},   // /proc
		"diskReadBytesPerSecond":  {r.DiskReadBytesPerSecond, 4096}, // /proc: 40960 B in 10 s
		"diskWriteBytesPerSecond": {r.DiskWriteBytesPerSecond, 1048576},
		"diskBytesEnd":            {r.DiskBytesEnd, 25000}, // /metrics: 5000+17000+3000
		"diskBytesMax":            {r.DiskBytesMax, 25000},
		"diskBytesGrowth":         {r.DiskBytesGrowth, 10000}, // from 15000
		"ingestedSamples":         {r.IngestedSamples, 50000}, // /metrics, float and histogram: 150000 - 100000
		"bytesPerSample":          {r.BytesPerSample, 0.2},    // 10000 grown / 50000 acked
		"activeSeriesMax":         {r.ActiveSeriesMax, 2600},  // prometheus_tsdb_head_series
	} {
		if !near(f.got, f.want) {
			t.Errorf("%s = %v, want %v", name, deref(f.got), f.want)
		}
	}
	if c := r.Crosscheck; c == nil || !near(c.ProcCPUCoresMean, 0.6) || !near(c.MetricsCPUCoresMean, 0.5) ||
		!near(c.ProcRSSBytesMean, 307200*1024) || !near(c.MetricsRSSBytesMean, 419430400) {
		t.Errorf("crosscheck %+v", c)
	}
	if len(r.Timeline) != 2 || r.Timeline[0].CPUCores != nil || !near(r.Timeline[1].CPUCores, 0.6) || r.Timeline[1].Time != "2026-01-01T00:00:10Z" {
		t.Errorf("timeline %+v", r.Timeline)
	}
	if r.SnapshotBytes != nil || r.Reasons["snapshotBytes"] == "" {
		t.Errorf("snapshot %v without a reason", deref(r.SnapshotBytes))
	}
	want := map[string]float64{
		"tsbench_storage_cpu_cores": 0.6, "tsbench_storage_rss_bytes": 307200 * 1024, "tsbench_storage_disk_bytes": 25000,
		"tsbench_storage_disk_read_bytes_per_second": 4096, "tsbench_storage_disk_write_bytes_per_second": 1048576,
		"tsbench_storage_ingested_samples": 50000, "tsbench_storage_active_series": 2600,
		"tsbench_storage_bytes_per_sample": 0.2,
	}
	if diff := cmp.Diff(want, gathered(t, reg, "prom")); diff != "" {
		t.Errorf("own metrics (-want +got):\n%s", diff)
	}
}

// TestDataDirWinsForDisk: with a data dir, disk bytes are its size, not the storage's own
// metrics; a process that is gone leaves CPU and RSS unknown with the reason.
func TestDataDirWinsForDisk(t *testing.T) {
	dataDir := t.TempDir()
	write(t, filepath.Join(dataDir, "data", "part"), 777)
	root, _ := procRoot(t)
	srv := stepped(t, "victoriametrics.prom")
	reg := prometheus.NewRegistry()
	o := New(Options{ProcRoot: root, Registerer: reg, Logger: discard()},
		[]Target{{Name: "vm", PID: 99, DataDir: dataDir, MetricsURLs: []string{srv.URL}}})
	o.collect(t.Context(), t0)
	o.collect(t.Context(), t0.Add(10*time.Second))
	r := o.Resources("vm")
	if !near(r.DiskBytesEnd, 777) || !near(r.IngestedSamples, 0) {
		t.Errorf("disk %v ingested %v, want 777 from the data dir and 0 more rows from /metrics", deref(r.DiskBytesEnd), deref(r.IngestedSamples))
	}
	// /proc has no process 99, so CPU and RSS come from /metrics; disk IO only /proc gives.
	if !near(r.CPUCoresMean, 0) || !near(r.RSSBytesMax, 209715200) {
		t.Errorf("cpu %v rss %v, want the /metrics figures", deref(r.CPUCoresMean), deref(r.RSSBytesMax))
	}
	if got := r.Reasons["diskReadBytesPerSecond"]; got != "process 99 exited" {
		t.Errorf("disk read reason %q", got)
	}
	if got := r.Reasons["bytesPerSample"]; got != "no sample was acked" {
		t.Errorf("bytesPerSample reason %q", got)
	}
	got := gathered(t, reg, "vm")
	if _, ok := got["tsbench_storage_disk_read_bytes_per_second"]; ok {
		t.Error("an unknown figure has a series")
	}
}

func TestNoSource(t *testing.T) {
	o := New(Options{Writes: acked(10), Logger: discard()}, []Target{{Name: "blind"}})
	o.collect(t.Context(), t0)
	r := o.Resources("blind")
	if r.Source != "none" || r.CPUCoresMean != nil || r.Reasons["cpuCoresMean"] != "no pid or dataDir and no metricsURLs" {
		t.Errorf("source %q cpu %v reasons %v", r.Source, deref(r.CPUCoresMean), r.Reasons)
	}
	if r := o.Resources("unknown"); r == nil || !strings.Contains(r.Reasons["diskBytesEnd"], "not observed") {
		t.Errorf("an unknown storage: %+v", r)
	}
}

// TestRunSchedule: a sample at once, one per interval, one at the end, in no real time.
func TestRunSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dataDir := t.TempDir()
		write(t, filepath.Join(dataDir, "x"), 10)
		o := New(Options{Writes: acked(1), Interval: 10 * time.Second, ProcRoot: "testdata/proc-t0", Logger: discard()},
			[]Target{{Name: "local", PID: pid, DataDir: dataDir}})
		ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
		defer cancel()
		start := time.Now()
		if err := o.Run(ctx); err != nil {
			t.Fatal(err)
		}
		var times []string
		for _, p := range o.Resources("local").Timeline {
			times = append(times, p.Time)
		}
		var want []string
		for _, s := range []int{0, 10, 20, 25} {
			want = append(want, start.Add(time.Duration(s)*time.Second).UTC().Format(time.RFC3339Nano))
		}
		if diff := cmp.Diff(want, times); diff != "" {
			t.Errorf("sample times (-want +got):\n%s", diff)
		}
		if g := o.Generator(); len(g.Timeline) != 4 {
			t.Errorf("generator timeline %d points, want 4", len(g.Timeline))
		}
	})
}

// TestUnreachableLoggedOnce: the first failure of a source is logged, naming the storage and
// URL, and later ones are only recorded.
func TestUnreachableLoggedOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/metrics"
	srv.Close()
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	o := New(Options{Writes: acked(1), Logger: log}, []Target{{Name: "down", MetricsURLs: []string{url}}})
	for i := range 3 {
		o.collect(t.Context(), t0.Add(time.Duration(i)*time.Second))
	}
	out := buf.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "storage=down") || !strings.Contains(out, url) {
		t.Errorf("log, want one warning naming the storage and URL:\n%s", out)
	}
	if got := o.Resources("down").Reasons["ingestedSamples"]; !strings.HasPrefix(got, "GET "+url+": ") {
		t.Errorf("reason %q", got)
	}
}

// TestComponentKeysRedacted: a cluster's components are keyed by URL without the password.
func TestComponentKeysRedacted(t *testing.T) {
	a, b := stepped(t, "vminsert-t0.prom"), stepped(t, "vmstorage-t0.prom")
	withUser := strings.Replace(b.URL, "http://", "http://user:secret@", 1) + "?token=hunter2&job=x"
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "c", MetricsURLs: []string{a.URL, withUser}}})
	o.collect(t.Context(), t0)
	r := o.Resources("c")
	redacted := strings.Replace(b.URL, "http://", "http://user:xxxxx@", 1) + "?token=<secret>&job=x"
	if r.Components[a.URL] == nil || r.Components[redacted] == nil || len(r.Components) != 2 {
		t.Errorf("components %v, want %s and %s", keys(r.Components), a.URL, redacted)
	}
	// Only vmstorage gives disk bytes and only vminsert ingested samples: each is known (none
	// ingested yet: the count starts at the first observation).
	if !near(r.DiskBytesEnd, 500000) || !near(r.IngestedSamples, 0) || !near(r.RSSBytesMax, 400e6) {
		t.Errorf("disk %v ingested %v rss %v", deref(r.DiskBytesEnd), deref(r.IngestedSamples), deref(r.RSSBytesMax))
	}
}

// TestSnapshotKindGuessed: without a kind, the snapshot API follows the metric names seen.
func TestSnapshotKindGuessed(t *testing.T) {
	dataDir := t.TempDir()
	var calls []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		switch r.URL.Path {
		case "/metrics":
			b, _ := os.ReadFile("testdata/metrics/victoriametrics.prom")
			_, _ = w.Write(b)
		case "/snapshot/create":
			write(t, filepath.Join(dataDir, "snapshots", "s1", "f"), 42)
			_, _ = w.Write([]byte(`{"status":"ok","snapshot":"s1"}`))
		default:
			_, _ = w.Write([]byte(`{"status":"ok"}`))
		}
	}))
	defer srv.Close()
	client := &storage.Client{Name: "vm", HTTP: srv.Client()}
	o := New(Options{Writes: acked(21), Logger: discard()}, []Target{{Name: "vm", DataDir: dataDir, BaseURL: srv.URL + "/", MetricsURLs: []string{srv.URL + "/metrics"}, Client: client}})
	o.collect(t.Context(), t0)
	o.Snapshot(t.Context())
	if r := o.Resources("vm"); !near(r.SnapshotBytes, 42) || !near(r.SnapshotBytesPerSample, 2) {
		t.Errorf("snapshot %v (%q), per sample %v", deref(r.SnapshotBytes), r.Reasons["snapshotBytes"], deref(r.SnapshotBytesPerSample))
	}
	want := []string{"GET /metrics", "GET /snapshot/create", "GET /snapshot/delete?snapshot=s1"}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestSnapshotFailureIsAReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"status":"error","errorType":"unavailable","error":"admin APIs disabled"}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "p", Kind: storage.KindPrometheus, DataDir: t.TempDir(), BaseURL: srv.URL + "/"}})
	o.Snapshot(t.Context())
	r := o.Resources("p")
	if got := r.Reasons["snapshotBytes"]; r.SnapshotBytes != nil || !strings.Contains(got, "POST "+srv.URL+"/api/v1/admin/tsdb/snapshot: HTTP 503") {
		t.Errorf("snapshot %v reason %q", deref(r.SnapshotBytes), got)
	}
	if r.Reasons["snapshotBytesPerSample"] != r.Reasons["snapshotBytes"] {
		t.Errorf("per-sample reason %q", r.Reasons["snapshotBytesPerSample"])
	}
}

// gathered returns the value of every tsbench_storage_* gauge of one storage.
func gathered(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if hasLabel(m, "storage", name) {
				out[mf.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
