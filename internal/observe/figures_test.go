package observe

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestDiskOnlyWhenEveryPartIsCounted: a storage's own size metrics give its disk only when
// they count every part it keeps on disk (issue 10). A page with some of the parts gives no
// figure and says which are missing and how to get one; a page with none (a component that
// keeps nothing on disk) is absent, left out of a cluster's sum.
func TestDiskOnlyWhenEveryPartIsCounted(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       float64 // when known
		why        []string
		absent     bool
	}{
		{name: "Prometheus 2.43+: blocks, WAL and head chunks", file: "prometheus.prom", want: 15000},
		{
			// What the Debian prometheus 2.42 exposes: the blocks' size (0 before the first
			// compaction), no WAL or head-chunk gauge while its WAL holds the data.
			name: "Prometheus 2.42: blocks only", file: "prometheus-2.42.prom",
			why: []string{"prometheus_tsdb_wal_storage_size_bytes, prometheus_tsdb_head_chunks_storage_size_bytes not exposed", "set dataDir", "2.43 or newer"},
		},
		{name: "Prometheus with the out-of-order WBL", file: "prometheus-wbl.prom", want: 15000 + 400},
		{name: "VictoriaMetrics 1.79 type names", file: "victoriametrics-1.79.prom", want: 77394 + 70940},
		{name: "VictoriaMetrics: /inmemory parts are RAM", file: "victoriametrics.prom", want: 31000},
		{
			name: "VictoriaMetrics without a part", file: "victoriametrics-partial.prom",
			why: []string{`vm_data_size_bytes has no type="storage/big"`, "set dataDir"},
		},
		{
			name: "Mimir ingester: local blocks only", file: "mimir-ingester.prom",
			why: []string{"local blocks only", "object storage", "set dataDir"},
		},
		{
			name: "no size metric: a distributor, or a kind tsbench does not know", file: "mimir-distributor.prom",
			why: []string{"no known storage size metric", "set dataDir"}, absent: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fromFamilies(families(t, metricsFile(t, tc.file)))
			if tc.why == nil {
				if !near(s.DiskBytes, tc.want) || s.Missing[figDisk] != "" {
					t.Errorf("disk %v (%q), want %v", deref(s.DiskBytes), s.Missing[figDisk], tc.want)
				}
				return
			}
			if s.DiskBytes != nil {
				t.Errorf("disk %v, want unknown", *s.DiskBytes)
			}
			for _, w := range tc.why {
				if !strings.Contains(s.Missing[figDisk], w) {
					t.Errorf("reason %q, want it to say %q", s.Missing[figDisk], w)
				}
			}
			if s.Absent[figDisk] != tc.absent {
				t.Errorf("absent %v, want %v", s.Absent[figDisk], tc.absent)
			}
		})
	}
}

// TestPrometheus242MetricsOnly: observed through its /metrics alone, the Prometheus 2.42 of
// issue 10 (30 targets, 1.2 MB of WAL, prometheus_tsdb_storage_blocks_bytes 0) gets no disk
// figure and no bytes per sample, each with the reason, not 0; tsbench's own /metrics has
// no series for either.
func TestPrometheus242MetricsOnly(t *testing.T) {
	srv := stepped(t, "prometheus-2.42.prom")
	reg := prometheus.NewRegistry()
	o := New(Options{Logger: discard(), Registerer: reg, Writes: acked(100680)}, []Target{{Name: "prom", MetricsURLs: []string{srv.URL}}})
	collectAt(t, o, 0, 10, 30)
	r := o.Resources("prom")
	for field, v := range map[string]*float64{
		"diskBytesEnd": r.DiskBytesEnd, "diskBytesMax": r.DiskBytesMax, "diskBytesGrowth": r.DiskBytesGrowth, "bytesPerSample": r.BytesPerSample,
	} {
		if why := r.Reasons[field]; v != nil || !strings.Contains(why, "WAL and head chunks are not counted") {
			t.Errorf("%s = %v (%q), want unknown with the parts not counted", field, deref(v), why)
		}
	}
	for _, p := range r.Timeline {
		if p.DiskBytes != nil || p.BytesPerSample != nil {
			t.Errorf("timeline point %s: disk %v, bytes per sample %v, want unknown", p.Time, deref(p.DiskBytes), deref(p.BytesPerSample))
		}
	}
	got := gathered(t, reg, "prom")
	for _, name := range []string{"tsbench_storage_disk_bytes", "tsbench_storage_bytes_per_sample"} {
		if v, ok := got[name]; ok {
			t.Errorf("%s = %v: an unknown figure has a series", name, v)
		}
	}
	if _, ok := got["tsbench_storage_cpu_cores"]; !ok {
		t.Error("tsbench_storage_cpu_cores has no series: the known figures must stay")
	}
}

// TestClusterSumNeedsEveryProcess: a component without process_cpu_seconds_total is a
// process whose CPU is not counted, so the cluster's CPU is unknown (not the others' sum);
// a component without a size metric keeps nothing on disk and is left out of the disk.
func TestClusterSumNeedsEveryProcess(t *testing.T) {
	insert := scripted(t, "process_resident_memory_bytes 1e6\n") // no CPU counter
	store := stepped(t, "vmstorage-t0.prom", "vmstorage-t1.prom")
	o := New(Options{Logger: discard()}, []Target{{Name: "c", MetricsURLs: []string{insert.URL, store.URL}}})
	collectAt(t, o, 0, 10)
	r := o.Resources("c")
	if r.CPUCoresMean != nil || !strings.Contains(r.Reasons["cpuCoresMean"], "process_cpu_seconds_total not exposed") {
		t.Errorf("cluster CPU %v (%q), want unknown: vminsert's is not counted", deref(r.CPUCoresMean), r.Reasons["cpuCoresMean"])
	}
	if !near(r.DiskBytesEnd, 700000) {
		t.Errorf("cluster disk %v, want vmstorage's 700000", deref(r.DiskBytesEnd))
	}
}

// TestGrowthNeedsTheFirstObservation: the disk growth is from the first observation, before
// the load. When that one has no disk figure (the storage was not up yet) the growth, and
// bytes per sample with it, are unknown: a later base would leave out what the load wrote
// before it.
func TestGrowthNeedsTheFirstObservation(t *testing.T) {
	vm := func(small int) string {
		return "vm_data_size_bytes{type=\"indexdb/file\"} 0\nvm_data_size_bytes{type=\"storage/big\"} 0\n" +
			"vm_data_size_bytes{type=\"storage/small\"} " + strconv.Itoa(small) + "\n"
	}
	srv := scripted(t, "", vm(5000), vm(9000)) // down at the first observation
	o := New(Options{Logger: discard(), Writes: acked(400)}, []Target{{Name: "vm", MetricsURLs: []string{srv.URL}}})
	collectAt(t, o, 0, 10, 20)
	r := o.Resources("vm")
	if !near(r.DiskBytesEnd, 9000) {
		t.Errorf("disk end %v, want 9000", deref(r.DiskBytesEnd))
	}
	for field, v := range map[string]*float64{"diskBytesGrowth": r.DiskBytesGrowth, "bytesPerSample": r.BytesPerSample} {
		if why := r.Reasons[field]; v != nil || !strings.Contains(why, "the first observation gave none: GET ") || !strings.Contains(why, "before the load is unknown") {
			t.Errorf("%s = %v (%q), want unknown: no base before the load", field, deref(v), why)
		}
	}
}

// TestEndFiguresAreTheLastObservation: the ingested count and the disk at the end are the
// last observation's; when it failed they are unknown, not an earlier, smaller figure.
func TestEndFiguresAreTheLastObservation(t *testing.T) {
	rows := func(n int) string {
		return "vm_rows_inserted_total{type=\"promremotewrite\"} " + strconv.Itoa(n) + "\n"
	}
	srv := scripted(t, rows(0), rows(1000), "")
	o := New(Options{Logger: discard(), Writes: acked(2000)}, []Target{{Name: "vm", MetricsURLs: []string{srv.URL}}})
	collectAt(t, o, 0, 10, 20)
	r := o.Resources("vm")
	if why := r.Reasons["ingestedSamples"]; r.IngestedSamples != nil || !strings.Contains(why, "the last observation gave none: GET ") {
		t.Errorf("ingestedSamples %v (%q), want unknown: the last scrape failed", deref(r.IngestedSamples), why)
	}
}

// TestRatesOverAnEmptyWindow: a rate needs two observations; with one, CPU and disk IO are
// unknown with a reason, in results.json and on tsbench's /metrics.
func TestRatesOverAnEmptyWindow(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := New(Options{Logger: discard(), Registerer: reg, ProcRoot: "testdata/proc-t0"}, []Target{{Name: "local", PID: pid}})
	o.collect(t.Context(), t0)
	o.LoadEnded(t0.Add(time.Second))
	r := o.Resources("local")
	for field, v := range map[string]*float64{"cpuCoresMean": r.CPUCoresMean, "diskReadBytesPerSecond": r.DiskReadBytesPerSecond} {
		if v != nil || !strings.Contains(r.Reasons[field], "two observations") {
			t.Errorf("%s = %v (%q), want unknown: one observation has no rate", field, deref(v), r.Reasons[field])
		}
	}
	if !near(r.RSSBytesMax, 204800*1024) {
		t.Errorf("rssBytesMax %v: one observation gives RSS", deref(r.RSSBytesMax))
	}
	if v, ok := gathered(t, reg, "local")["tsbench_storage_cpu_cores"]; ok {
		t.Errorf("tsbench_storage_cpu_cores = %v after one observation, want no series", v)
	}
}
