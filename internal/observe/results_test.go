package observe

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tsbench/tsbench/internal/storage"
)

// scripted serves bodies in turn, the last one again after the end; an empty body is an
// HTTP 503, a failed scrape.
func scripted(t *testing.T, bodies ...string) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		body := bodies[min(int(n.Add(1)-1), len(bodies)-1)]
		if body == "" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// page is a /metrics body with a CPU counter and an RSS gauge.
func page(cpuSeconds, rss float64) string {
	return fmt.Sprintf("process_cpu_seconds_total %g\nprocess_resident_memory_bytes %g\n", cpuSeconds, rss)
}

// collectAt collects once at each offset from t0, in seconds.
func collectAt(t *testing.T, o *Observer, secs ...float64) {
	t.Helper()
	for _, s := range secs {
		o.collect(t.Context(), t0.Add(time.Duration(s*float64(time.Second))))
	}
}

// TestClusterComponentFailureIsUnknown: three components each using CPU; vmselect's second
// scrape fails, so at the third its rate is unknown for one interval. The cluster's CPU is
// then unknown with vmselect's reason, not the other two's 0.4 cores.
func TestClusterComponentFailureIsUnknown(t *testing.T) {
	insert := scripted(t, page(10, 1e6), page(11, 1e6), page(12, 1e6), page(13, 1e6)) // 0.1 cores
	sel := scripted(t, page(20, 1e6), "", page(24, 1e6), page(26, 1e6))               // 0.2 cores, down at the 2nd
	store := scripted(t, page(30, 1e6), page(33, 1e6), page(36, 1e6), page(39, 1e6))  // 0.3 cores
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "c", MetricsURLs: []string{insert.URL, sel.URL, store.URL}}})
	collectAt(t, o, 0, 10, 20, 30)
	r := o.Resources("c")
	for i, p := range r.Timeline[:3] {
		if p.CPUCores != nil {
			t.Errorf("cluster CPU at scrape %d = %v, want unknown: a sum without vmselect is no figure", i+1, *p.CPUCores)
		}
	}
	if !near(r.Timeline[3].CPUCores, 0.6) {
		t.Errorf("cluster CPU at scrape 4 = %v, want 0.6", deref(r.Timeline[3].CPUCores))
	}
	if r.Timeline[2].RSSBytes == nil || *r.Timeline[2].RSSBytes != 3e6 {
		t.Errorf("RSS at the third scrape %v, want 3e6: every component gives it", deref(r.Timeline[2].RSSBytes))
	}
	// The only interval with every component's rate is the last one.
	if !near(r.CPUCoresMean, 0.6) {
		t.Errorf("cpuCoresMean %v, want 0.6", deref(r.CPUCoresMean))
	}
	o.mu.Lock()
	third := o.targets[0].hist.recent[1] // of 4, the 2nd to the 4th are kept whole (keepRecent)
	o.mu.Unlock()
	if why := third.missing[figCPU]; !strings.Contains(why, "after a failed observation") || !strings.Contains(why, sel.URL) {
		t.Errorf("reason for the third scrape's CPU %q, want the failed scrape of %s", why, sel.URL)
	}
}

// TestSummaryOverTheLoadWindow: CPU is 1 core for 20 s, 2 cores for the interval that
// crosses the load's end at 25 s, then 4 cores while tsbench reads back. The mean weighs
// the 5 s of that interval inside the load: (10×1 + 10×1 + 5×2) / 25 = 1.2 cores.
func TestSummaryOverTheLoadWindow(t *testing.T) {
	srv := scripted(t, page(0, 100), page(10, 100), page(20, 300), page(40, 200), page(80, 900))
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "s", MetricsURLs: []string{srv.URL}}})
	collectAt(t, o, 0, 10, 20)
	o.LoadEnded(t0.Add(25 * time.Second))
	collectAt(t, o, 30, 40)
	r := o.Resources("s")
	for name, f := range map[string]struct {
		got  *float64
		want float64
	}{
		"cpuCoresMean": {r.CPUCoresMean, 1.2}, // 2.0 unweighted over every interval
		"cpuCoresMax":  {r.CPUCoresMax, 2},    // 4 with the read-back
		"rssBytesMean": {r.RSSBytesMean, (10*100 + 10*300 + 5*200) / 25.0},
		"rssBytesMax":  {r.RSSBytesMax, 300}, // 900 with the read-back
	} {
		if !near(f.got, f.want) {
			t.Errorf("%s = %v, want %v", name, deref(f.got), f.want)
		}
	}
	if len(r.Timeline) != 5 || !near(r.Timeline[4].CPUCores, 4) {
		t.Errorf("timeline %d points, last CPU %v: want every observation", len(r.Timeline), deref(r.Timeline[len(r.Timeline)-1].CPUCores))
	}
}

// TestShortLastIntervalWeighsItsLength: a last interval of 1 s at 5 cores weighs 1/21 of
// the mean, not a third.
func TestShortLastIntervalWeighsItsLength(t *testing.T) {
	srv := scripted(t, page(0, 1), page(10, 1), page(20, 1), page(25, 1))
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "s", MetricsURLs: []string{srv.URL}}})
	collectAt(t, o, 0, 10, 20, 21)
	if r := o.Resources("s"); !near(r.CPUCoresMean, 25.0/21) {
		t.Errorf("cpuCoresMean %v, want 25/21 = %v (unweighted: 7/3)", deref(r.CPUCoresMean), 25.0/21)
	}
}

// TestDiskGrowth: a storage that held 2 MiB before the run and took 1000 bytes more for 100
// acked samples grew by 1000 bytes, but its bytes per sample is unknown (issue 35: the merges
// of the old data move the growth either way, as far as below zero), never (2 MiB + 1000) /
// 100 = 20981.76; its snapshot holds the old data too, which the snapshot figure's reason
// says. The live metric, a timeline figure, still shows the growth over the acked.
func TestDiskGrowth(t *testing.T) {
	dataDir := t.TempDir()
	write(t, filepath.Join(dataDir, "old"), 2<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/snapshot/create" {
			write(t, filepath.Join(dataDir, "snapshots", "s1", "all"), 2<<20+1000)
			_, _ = w.Write([]byte(`{"status":"ok","snapshot":"s1"}`))
			return
		}
		_ = os.RemoveAll(filepath.Join(dataDir, "snapshots"))
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	writes := &fakeWrites{}
	o := New(Options{Logger: discard(), Registerer: reg, Writes: writes},
		[]Target{{Name: "s", Kind: storage.KindVictoriaMetrics, DataDir: dataDir, BaseURL: srv.URL + "/"}})
	o.collect(t.Context(), t0)
	write(t, filepath.Join(dataDir, "new"), 1000)
	writes.acked.Store(100)
	o.collect(t.Context(), t0.Add(10*time.Second))
	o.Snapshot(t.Context())
	r := o.Resources("s")
	if !near(r.DiskBytesEnd, 2<<20+1000) || !near(r.DiskBytesGrowth, 1000) || r.BytesPerSample != nil ||
		!strings.Contains(r.Reasons["bytesPerSample"], "held 2097152 bytes before the run") {
		t.Errorf("disk end %v growth %v per sample %v (%q), want %d, 1000, unknown as the storage held data before",
			deref(r.DiskBytesEnd), deref(r.DiskBytesGrowth), deref(r.BytesPerSample), r.Reasons["bytesPerSample"], 2<<20+1000)
	}
	if !near(r.SnapshotBytesPerSample, (2<<20+1000)/100.0) || !strings.Contains(r.Reasons["snapshotBytesPerSample"], "held 2097152 bytes") {
		t.Errorf("snapshot per sample %v, reason %q: want all data over the acked, with a caveat", deref(r.SnapshotBytesPerSample), r.Reasons["snapshotBytesPerSample"])
	}
	if got := gathered(t, reg, "s")["tsbench_storage_bytes_per_sample"]; got != 10 {
		t.Errorf("tsbench_storage_bytes_per_sample = %v, want 10 as in results.json", got)
	}
}

// acked is a write account that has acked n samples.
func acked(n int64) *fakeWrites {
	w := &fakeWrites{}
	w.acked.Store(n)
	return w
}

// TestBytesPerSampleAckedAtEachObservation: each point's bytes per sample is the disk growth
// since the first observation over what was acked when it was made, read from the writer
// then (the one way the write account reaches observe); tsbench's own gauge shows the same,
// and has no series while the figure is unknown.
func TestBytesPerSampleAckedAtEachObservation(t *testing.T) {
	disk := func(n int) string {
		return fmt.Sprintf("vm_data_size_bytes{type=\"indexdb/file\"} 0\nvm_data_size_bytes{type=\"storage/big\"} 0\nvm_data_size_bytes{type=\"storage/small\"} %d\n", n)
	}
	srv := scripted(t, disk(100), disk(1000), disk(3000), "") // the last scrape fails: disk unknown
	reg := prometheus.NewRegistry()
	writes := &fakeWrites{}
	o := New(Options{Logger: discard(), Registerer: reg, Writes: writes}, []Target{{Name: "s", MetricsURLs: []string{srv.URL}}})
	var got, gauge []any
	for i, acked := range []int64{0, 100, 300, 600} {
		writes.acked.Store(acked)
		collectAt(t, o, float64(10*i))
		v, ok := gathered(t, reg, "s")["tsbench_storage_bytes_per_sample"]
		gauge = append(gauge, map[bool]any{true: v, false: nil}[ok])
	}
	r := o.Resources("s")
	for _, p := range r.Timeline {
		got = append(got, deref(p.BytesPerSample))
	}
	want := []any{nil, 9.0, 2900.0 / 300, nil} // growth since the first point's 100 bytes
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bytes per sample over time (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, gauge); diff != "" {
		t.Errorf("tsbench_storage_bytes_per_sample over time (-want +got):\n%s", diff)
	}
	// The end of the run has no disk figure: the summary takes none from an earlier point.
	if r.DiskBytesEnd != nil || r.BytesPerSample != nil || !strings.Contains(r.Reasons["bytesPerSample"], "the last observation gave none: GET ") {
		t.Errorf("disk end %v, bytes per sample %v (%q): want unknown, the last observation failed",
			deref(r.DiskBytesEnd), deref(r.BytesPerSample), r.Reasons["bytesPerSample"])
	}
}

// fakeWrites stands for the remote-write Writer's acked count.
type fakeWrites struct{ acked atomic.Int64 }

func (f *fakeWrites) Acked(string) int64 { return f.acked.Load() }

// TestIngestedCountsThisRun: the storage had counted 120000 rows before the run; it ingests
// 10000, restarts (its counter falls to 5000), and ingests 5000 more: 15000 in this run.
func TestIngestedCountsThisRun(t *testing.T) {
	rows := func(n int) string { return fmt.Sprintf("vm_rows_inserted_total{type=\"promremotewrite\"} %d\n", n) }
	srv := scripted(t, rows(120000), rows(130000), rows(5000), rows(10000))
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "vm", MetricsURLs: []string{srv.URL}}})
	collectAt(t, o, 0, 10, 20, 30)
	r := o.Resources("vm")
	var got []any
	for _, p := range r.Timeline {
		got = append(got, deref(p.IngestedSamples))
	}
	if fmt.Sprint(got) != fmt.Sprint([]any{0.0, 10000.0, 15000.0, 20000.0}) {
		t.Errorf("ingested over time %v, want [0 10000 15000 20000]", got)
	}
	if !near(r.IngestedSamples, 20000) {
		t.Errorf("ingestedSamples %v, want 20000 (the counter's own value is 10000)", deref(r.IngestedSamples))
	}
}

// TestMimirCluster: a distributor counts each sample once, the ingesters once per replica;
// the cluster's ingestion is the distributor's. The ingesters' local blocks are not all the
// cluster keeps on disk: the disk is unknown, and so is bytes per sample.
func TestMimirCluster(t *testing.T) {
	dist, ing := metricsFile(t, "mimir-distributor.prom"), metricsFile(t, "mimir-ingester.prom")
	more := func(body, metric string, from, to int) string {
		return strings.Replace(body, fmt.Sprintf("%s{user=\"anonymous\"} %d", metric, from), fmt.Sprintf("%s{user=\"anonymous\"} %d", metric, to), 1)
	}
	urls := []string{
		scripted(t, dist, more(dist, "cortex_distributor_received_samples_total", 60000, 70000)).URL,
		scripted(t, ing, more(ing, "cortex_ingester_ingested_samples_total", 180000, 195000)).URL,
		scripted(t, ing, more(ing, "cortex_ingester_ingested_samples_total", 180000, 195000)).URL,
	}
	o := New(Options{Writes: acked(10000), Logger: discard()}, []Target{{Name: "mimir", MetricsURLs: urls}})
	collectAt(t, o, 0, 10)
	r := o.Resources("mimir")
	if !near(r.IngestedSamples, 10000) {
		t.Errorf("ingestedSamples %v, want the distributor's 10000, not the two ingesters' 2×15000", deref(r.IngestedSamples))
	}
	for field, v := range map[string]*float64{"diskBytesEnd": r.DiskBytesEnd, "diskBytesGrowth": r.DiskBytesGrowth, "bytesPerSample": r.BytesPerSample} {
		if why := r.Reasons[field]; v != nil || !strings.Contains(why, "local blocks only") || !strings.Contains(why, "set dataDir") {
			t.Errorf("%s %v (%q): want unknown, the ingesters' blocks are not all of the disk", field, deref(v), why)
		}
	}
	if r.ActiveSeriesMax != nil || r.Reasons["activeSeriesMax"] == "" {
		t.Errorf("active series %v: want unknown with a reason", deref(r.ActiveSeriesMax))
	}
	// One page with both (Mimir as a single process): the distributor's count.
	s := fromFamilies(families(t, dist+"cortex_ingester_ingested_samples_total 180000\n"))
	if !near(s.Ingested, 60000) {
		t.Errorf("single-process Mimir ingested %v, want 60000", deref(s.Ingested))
	}
}

// TestTimelineKeepsSubSeconds: timeline times are not cut to whole seconds.
func TestTimelineKeepsSubSeconds(t *testing.T) {
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "blind"}})
	o.collect(t.Context(), t0.Add(10500*time.Millisecond))
	if got := o.Resources("blind").Timeline[0].Time; got != "2026-01-01T00:00:10.5Z" {
		t.Errorf("time %q, want 2026-01-01T00:00:10.5Z", got)
	}
	if got := o.Generator().Timeline[0].Time; got != "2026-01-01T00:00:10.5Z" {
		t.Errorf("generator time %q", got)
	}
}

// TestGeneratorReasons: tsbench's own figures, unknown, say why.
func TestGeneratorReasons(t *testing.T) {
	o := New(Options{Logger: discard(), ProcRoot: t.TempDir()}, nil) // no self in this /proc
	o.collect(t.Context(), t0)
	o.collect(t.Context(), t0.Add(time.Second))
	g := o.Generator()
	if g.CPUCoresMean != nil || !strings.Contains(g.Reasons["cpuCoresMean"], "self does not exist") || g.Reasons["rssBytesMax"] == "" {
		t.Errorf("generator cpu %v reasons %v: want unknown with reasons", deref(g.CPUCoresMean), g.Reasons)
	}
}

func families(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// TestIngestedCounterAppearingLater: Prometheus exposes its appended-samples counter only
// after the first append, so a page read before the load lacks it; when it appears, all of
// it was ingested since (a freshly started Prometheus lost its first interval otherwise).
func TestIngestedCounterAppearingLater(t *testing.T) {
	appended := func(n int) string {
		return fmt.Sprintf("process_cpu_seconds_total 1\nprometheus_tsdb_head_samples_appended_total{type=\"float\"} %d\n", n)
	}
	srv := scripted(t, "process_cpu_seconds_total 1\n", appended(161791), appended(329591))
	o := New(Options{Writes: acked(1), Logger: discard()}, []Target{{Name: "prom", MetricsURLs: []string{srv.URL}}})
	collectAt(t, o, 0, 10, 20)
	if r := o.Resources("prom"); !near(r.IngestedSamples, 329591) {
		t.Errorf("ingestedSamples %v, want 329591: the counter was absent, not unknown, before", deref(r.IngestedSamples))
	}
}

// Bytes per sample from disk growth is no figure where the growth is not this run's samples
// (issue 35: a VictoriaMetrics that held data read −2.769 after a merge).
func TestGrowthOnly(t *testing.T) {
	for _, c := range []struct {
		name           string
		growth, before float64
		known          bool
		why            string
	}{
		{"fresh storage", 1 << 22, 1 << 10, true, ""},
		{"disk shrank", -92942, 1 << 24, false, "the disk shrank by 92942 bytes"},
		{"held more before", 1 << 20, 1 << 24, false, "held 16777216 bytes before the run"},
		{"held less than the run added", 1 << 26, 1 << 21, true, ""},
	} {
		v, why := growthOnly(new(c.growth/1000), "", &c.growth, &c.before)
		if (v != nil) != c.known || !strings.Contains(why, c.why) {
			t.Errorf("%s: figure %v, why %q: want known %v, why containing %q", c.name, v, why, c.known, c.why)
		}
	}
}
