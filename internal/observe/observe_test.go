package observe

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tsbench/tsbench/internal/storage"
)

const pid = 4242

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// stepped serves testdata/metrics files in turn, as scripted.
func stepped(t *testing.T, files ...string) *httptest.Server {
	t.Helper()
	bodies := make([]string, len(files))
	for i, f := range files {
		bodies[i] = metricsFile(t, f)
	}
	return scripted(t, bodies...)
}

// metricsFile is the /metrics page in testdata/metrics/name.
func metricsFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "metrics", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// procAt is a proc source over one of the fixed /proc trees.
type procAt struct{ roots []string }

func (p *procAt) Collect(ctx context.Context, now time.Time) (Sample, error) {
	root := p.roots[0]
	if len(p.roots) > 1 {
		p.roots = p.roots[1:]
	}
	return procSource{root: root, pid: pid}.Collect(ctx, now)
}

func near(a *float64, want float64) bool {
	return a != nil && math.Abs(*a-want) <= 1e-9*math.Max(1, math.Abs(want))
}

func TestProcSourceFigures(t *testing.T) {
	s, err := procSource{root: "testdata/proc-t0", pid: pid}.Collect(t.Context(), t0)
	if err != nil {
		t.Fatal(err)
	}
	// stat: utime 1200 + stime 300 ticks at 100 Hz; status: VmRSS 204800 kB; io: read/write_bytes.
	if !near(s.CPUSeconds, 15) || !near(s.RSSBytes, 204800*1024) || !near(s.ReadBytes, 4096) || !near(s.WriteBytes, 1048576) {
		t.Errorf("sample %+v", s)
	}
	tr := newTracker("vm", "/proc", &procAt{roots: []string{"testdata/proc-t0", "testdata/proc-t1"}}, discard())
	first := tr.observe(t.Context(), t0, time.Time{})
	if first.cpu != nil || first.missing[figCPU] == "" {
		t.Errorf("first observation has a CPU rate %v: it needs two", first.cpu)
	}
	r := tr.observe(t.Context(), t0.Add(10*time.Second), time.Time{})
	// (1700+400 - 1500) ticks = 6 s of CPU in 10 s; 40960 B read and 10 MiB written in 10 s.
	if !near(r.cpu, 0.6) || !near(r.rss, 307200*1024) || !near(r.read, 4096) || !near(r.write, 1048576) {
		t.Errorf("rates cpu %v rss %v read %v write %v", deref(r.cpu), deref(r.rss), deref(r.read), deref(r.write))
	}
}

// TestPIDReused: between the second and third observation the process restarted (its start
// time, field 22 of stat, went from 5000 to 9000 ticks) and its counters, from zero, are
// already above the old ones: 2400 ticks are 2.4 cores over 10 s, not (2400-2100)/1000 = 0.3.
func TestPIDReused(t *testing.T) {
	tr := newTracker("vm", "/proc", &procAt{roots: []string{"testdata/proc-t0", "testdata/proc-t1", "testdata/proc-t2"}}, discard())
	tr.observe(t.Context(), t0, time.Time{})
	tr.observe(t.Context(), t0.Add(10*time.Second), time.Time{})
	r := tr.observe(t.Context(), t0.Add(20*time.Second), time.Time{})
	if !near(r.cpu, 2.4) || !near(r.read, 5000) || !near(r.write, 1200000) {
		t.Errorf("after a restart: cpu %v read %v write %v, want 2.4, 5000, 1200000 (counted from zero)", deref(r.cpu), deref(r.read), deref(r.write))
	}
}

// TestMetricsRestartByStartTime: a /metrics page's process_start_time_seconds changes too.
func TestMetricsRestartByStartTime(t *testing.T) {
	body := func(start, cpu int) string {
		return fmt.Sprintf("process_start_time_seconds %d\nprocess_cpu_seconds_total %d\n", start, cpu)
	}
	srv := scripted(t, body(100, 10), body(200, 15))
	tr := newTracker("s", srv.URL, metricsSource{url: srv.URL, client: srv.Client()}, discard())
	tr.observe(t.Context(), t0, time.Time{})
	if r := tr.observe(t.Context(), t0.Add(10*time.Second), time.Time{}); !near(r.cpu, 1.5) {
		t.Errorf("cpu %v, want 1.5: 15 s since the restart, not 5 s more", deref(r.cpu))
	}
	// A restart during a failed scrape: the rows counted since it are all new.
	rows := func(start, n int) string {
		return fmt.Sprintf("process_start_time_seconds %d\nvm_rows_inserted_total %d\n", start, n)
	}
	srv = scripted(t, rows(100, 1000), "", rows(200, 3000))
	tr = newTracker("s", srv.URL, metricsSource{url: srv.URL, client: srv.Client()}, discard())
	for i := range 3 {
		r := tr.observe(t.Context(), t0.Add(time.Duration(i)*10*time.Second), time.Time{})
		if i == 2 && !near(r.ingested, 3000) {
			t.Errorf("ingested %v, want 3000 rows since the restart, not 2000 more", deref(r.ingested))
		}
	}
}

func TestProcessGone(t *testing.T) {
	s, err := procSource{root: "testdata/proc-t0", pid: 1}.Collect(t.Context(), t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, fig := range []string{figCPU, figRSS, figRead, figWrite} {
		if got := s.Missing[fig]; got != "process 1 exited" {
			t.Errorf("%s reason %q, want %q", fig, got, "process 1 exited")
		}
	}
}

func TestMetricsFigures(t *testing.T) {
	for _, tc := range []struct {
		file                                  string
		cpu, rss, disk, ingestedTotal, series float64
	}{
		// The /inmemory parts (200 + 500 B) are in RAM: not disk. Series: hour_metric_ids.
		{"victoriametrics.prom", 15, 209715200, 31000, 120000, 3000},
		// Prometheus' disk is its blocks, WAL and head chunks; samples of every type count.
		{"prometheus.prom", 7.5, 419430400, 15000, 100000, 2500},
	} {
		t.Run(tc.file, func(t *testing.T) {
			srv := stepped(t, tc.file)
			s, err := metricsSource{url: srv.URL, client: srv.Client()}.Collect(t.Context(), t0)
			if err != nil {
				t.Fatal(err)
			}
			if !near(s.CPUSeconds, tc.cpu) || !near(s.RSSBytes, tc.rss) || !near(s.DiskBytes, tc.disk) || !near(s.Ingested, tc.ingestedTotal) || !near(s.ActiveSeries, tc.series) {
				t.Errorf("cpu %v rss %v disk %v ingested %v series %v", deref(s.CPUSeconds), deref(s.RSSBytes), deref(s.DiskBytes), deref(s.Ingested), deref(s.ActiveSeries))
			}
			if s.ReadBytes != nil || s.Missing[figRead] == "" {
				t.Error("disk IO from /metrics: want unknown with a reason")
			}
		})
	}
}

// TestClusterSummedWithReset observes a three-component VictoriaMetrics cluster twice;
// vmstorage restarts in between, so its CPU counter goes from 30 down to 3.
func TestClusterSummedWithReset(t *testing.T) {
	urls := []string{
		stepped(t, "vminsert-t0.prom", "vminsert-t1.prom").URL,
		stepped(t, "vmselect-t0.prom", "vmselect-t1.prom").URL,
		stepped(t, "vmstorage-t0.prom", "vmstorage-t1.prom").URL,
	}
	reg := prometheus.NewRegistry()
	o := New(Options{Writes: acked(40000), Registerer: reg, Logger: discard()}, []Target{{Name: "cluster", MetricsURLs: urls}})
	o.collect(t.Context(), t0)
	o.collect(t.Context(), t0.Add(10*time.Second))
	r := o.Resources("cluster")
	// CPU over 10 s: vminsert 2 s, vmselect 1 s, vmstorage 3 s counted from its restart.
	want := map[string]struct {
		got  *float64
		want float64
	}{
		"cpuCoresMean": {r.CPUCoresMean, 0.6},
		"rssBytesMax":  {r.RSSBytesMax, 100e6 + 50e6 + 300e6}, // the first observation's sum
		// The first observation closes no interval: the mean weighs the 10 s the second closes.
		"rssBytesMean":    {r.RSSBytesMean, 420e6},
		"diskBytesEnd":    {r.DiskBytesEnd, 700000},
		"diskBytesMax":    {r.DiskBytesMax, 700000},
		"diskBytesGrowth": {r.DiskBytesGrowth, 200000},
		// Rows since the first observation: only vminsert counts them, 90000 - 50000.
		"ingestedSamples": {r.IngestedSamples, 40000},
		"bytesPerSample":  {r.BytesPerSample, 200000.0 / 40000}, // growth, not all 700000 bytes
	}
	for name, f := range want {
		if !near(f.got, f.want) {
			t.Errorf("%s = %v, want %v", name, deref(f.got), f.want)
		}
	}
	if r.Source != "metrics" || len(r.Components) != 3 {
		t.Errorf("source %q with %d components, want metrics with 3", r.Source, len(r.Components))
	}
	if c := r.Components[urls[2]]; c == nil || !near(c.CPUCoresMean, 0.3) {
		t.Errorf("vmstorage component %+v: want 0.3 cores after its reset", c)
	}
	if r.DiskReadBytesPerSecond != nil || r.Reasons["diskReadBytesPerSecond"] == "" {
		t.Errorf("disk IO %v reason %q: want unknown with a reason", r.DiskReadBytesPerSecond, r.Reasons["diskReadBytesPerSecond"])
	}
	if got := gaugeValue(t, o.m.storage[figCPU].WithLabelValues("cluster")); !near(&got, 0.6) {
		t.Errorf("tsbench_storage_cpu_cores{storage=cluster} = %v, want 0.6", got)
	}
}

func TestUnreachableMetricsIsUnknown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/metrics"
	srv.Close() // connections are refused from now on
	o := New(Options{Writes: acked(1000), Logger: discard()}, []Target{{Name: "down", MetricsURLs: []string{url}}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := o.Run(ctx); err != nil { // collects twice and returns: the run goes on
		t.Fatal(err)
	}
	r := o.Resources("down")
	for name, v := range map[string]*float64{"cpuCoresMean": r.CPUCoresMean, "rssBytesMax": r.RSSBytesMax, "diskBytesEnd": r.DiskBytesEnd, "bytesPerSample": r.BytesPerSample} {
		if v != nil {
			t.Errorf("%s = %v, want unknown", name, *v)
		}
		if !strings.Contains(r.Reasons[name], url) {
			t.Errorf("%s reason %q, want one naming %s", name, r.Reasons[name], url)
		}
	}
	if len(r.Timeline) != 2 || r.Timeline[0].CPUCores != nil {
		t.Errorf("timeline %+v: want two points of unknowns", r.Timeline)
	}
}

func TestGeneratorIsObserved(t *testing.T) {
	o := New(Options{Logger: discard()}, nil)
	o.collect(t.Context(), time.Now())
	busy(20 * time.Millisecond)
	o.collect(t.Context(), time.Now().Add(time.Second))
	g := o.Generator()
	if g.CPUCoresMean == nil || g.RSSBytesMax == nil || *g.RSSBytesMax <= 0 || len(g.Timeline) != 2 {
		t.Errorf("generator %+v: want its own CPU and RSS", g)
	}
}

func busy(d time.Duration) {
	end := time.Now().Add(d)
	for {
		if !time.Now().Before(end) {
			return
		}
	}
}

func TestDirBytesCountsLinksOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "data", "part", "values.bin"), 1000)
	write(t, filepath.Join(dir, "data", "part", "index.bin"), 24)
	if err := os.Link(filepath.Join(dir, "data", "part", "values.bin"), filepath.Join(dir, "data", "values-link.bin")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	write(t, filepath.Join(outside, "parts", "x.bin"), 500)
	if err := os.Symlink(filepath.Join(outside, "parts"), filepath.Join(dir, "data", "linked")); err != nil {
		t.Fatal(err)
	}
	got, err := dirBytes(dir)
	if err != nil || got != 1524 {
		t.Errorf("dirBytes = %v, %v; want 1524 (the hard link once, the symlinked dir followed)", got, err)
	}
}

func write(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshots fakes the snapshot APIs of VictoriaMetrics and Prometheus over a data dir,
// with the readURL given with and without its trailing slash.
func TestSnapshots(t *testing.T) {
	for _, c := range []struct {
		kind  storage.Kind
		slash string
	}{
		{storage.KindVictoriaMetrics, "/"}, {storage.KindPrometheus, "/"}, {storage.KindPrometheus, ""},
	} {
		kind := c.kind
		t.Run(string(kind)+"_slash_"+strconv.FormatBool(c.slash != ""), func(t *testing.T) {
			dataDir := t.TempDir()
			write(t, filepath.Join(dataDir, "live", "chunk"), 4000)
			snap := filepath.Join(dataDir, "snapshots", "20260101-1")
			var deleted atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/snapshot/create", "/api/v1/admin/tsdb/snapshot":
					write(t, filepath.Join(snap, "own"), 100)
					if err := os.Link(filepath.Join(dataDir, "live", "chunk"), filepath.Join(snap, "chunk")); err != nil {
						t.Error(err)
					}
					if err := os.Symlink(filepath.Join(snap, "own"), filepath.Join(snap, "own-link")); err != nil {
						t.Error(err)
					}
					if kind == storage.KindVictoriaMetrics {
						_, _ = w.Write([]byte(`{"status":"ok","snapshot":"20260101-1"}`))
					} else {
						_, _ = w.Write([]byte(`{"status":"success","data":{"name":"20260101-1"}}`))
					}
				case "/snapshot/delete":
					deleted.Store(r.URL.Query().Get("snapshot") == "20260101-1")
					_ = os.RemoveAll(snap)
					_, _ = w.Write([]byte(`{"status":"ok"}`))
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			o := New(Options{Writes: acked(410), Logger: discard()}, []Target{{Name: "s", Kind: kind, DataDir: dataDir, BaseURL: srv.URL + c.slash}})
			o.Snapshot(t.Context())
			r := o.Resources("s")
			if !near(r.SnapshotBytes, 4100) || !near(r.SnapshotBytesPerSample, 10) {
				t.Errorf("snapshot %v bytes, %v per sample (reason %q); want 4100 and 10", deref(r.SnapshotBytes), deref(r.SnapshotBytesPerSample), r.Reasons["snapshotBytes"])
			}
			if _, err := os.Stat(snap); !os.IsNotExist(err) {
				t.Errorf("snapshot dir still there: %v", err)
			}
			if kind == storage.KindVictoriaMetrics && !deleted.Load() {
				t.Error("snapshot/delete was not called with the snapshot's name")
			}
		})
	}
}

func TestSnapshotNeedsDataDir(t *testing.T) {
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "remote", Kind: storage.KindPrometheus, BaseURL: "http://127.0.0.1:1/"}})
	o.Snapshot(t.Context())
	r := o.Resources("remote")
	if r.SnapshotBytes != nil || !strings.Contains(r.Reasons["snapshotBytes"], "dataDir") {
		t.Errorf("snapshot %v reason %q", r.SnapshotBytes, r.Reasons["snapshotBytes"])
	}
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
