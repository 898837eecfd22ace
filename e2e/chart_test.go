package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/storage"
)

// chartRules is a vmalert rule file in the shape of the prometheus-benchmark chart's
// (chart/files/alerts.yaml: group-level concurrency, node_exporter alerts), written for this
// test, with a second group at its own interval, with params and headers sent with its
// queries (VictoriaMetrics' nocache and extra_label, which Prometheus ignores) and a vmalert
// key tsbench does not apply.
const chartRules = `groups:
  - name: nodeexporter
    concurrency: 2
    interval: 4s
    rules:
      - alert: HostOutOfMemory
        expr: node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes * 100 < 10
        for: 2m
        labels:
          severity: warning
        annotations:
          summary: Host out of memory (instance {{ $labels.instance }})
      - alert: HostHighCpuLoad
        expr: 100 - (avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m])) * 100) > 80
        for: 0m
        labels:
          severity: warning
      - alert: HostNetworkReceiveErrors
        expr: rate(node_network_receive_errs_total[1m]) / rate(node_network_receive_packets_total[1m]) > 0.01
        for: 2m
      - alert: HostFilesystemReadOnly
        expr: node_filesystem_readonly{fstype!~"tmpfs|ramfs"} == 1
        for: 0m
  - name: nodeexporter-slow
    interval: 10s
    limit: 100
    params:
      nocache: ["1"]
      extra_label: ["instance=tsbench-none"]
    headers:
      - "X-Tsbench-Group: slow"
    rules:
      - alert: HostDiskWillFillIn24Hours
        expr: predict_linear(node_filesystem_avail_bytes{fstype!~"tmpfs"}[1m], 86400) < 0
        for: 2m
      - record: instance:node_load1:max
        expr: max by (instance) (node_load1)
`

// TestChartFiles runs the chart's files as its users bring them: a values file of the chart's
// shape with a storage only queried (writeURL "" beside a readURL, here VictoriaMetrics' own
// query API, as a vmselect beside the vminsert) and a vmalert rule file as queryRules, against
// the local VictoriaMetrics and Prometheus. Every rule runs without an error on every storage,
// each group at its own interval; the storage only queried has no write account and its
// read-back finds the data written through the other. A second run with that storage alone is
// the query load only.
func TestChartFiles(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	prom := startStorage(t, storage.KindPrometheus, "prom")
	rules := filepath.Join(testDir(t), "alerts.yaml")
	if err := os.WriteFile(rules, []byte(chartRules), 0o644); err != nil {
		t.Fatal(err)
	}
	const duration = 20 * time.Second
	cfg := fmt.Sprintf(`
vmtag: "v1.102.1"
disableMonitoring: true
duration: %s
targetsCount: 5
scrapeInterval: 5s
queryInterval: 5s
scrapeConfigUpdatePercent: 20
scrapeConfigUpdateInterval: 10s
writeConcurrency: 0
writeReplicas: 1
queryRules: %s
rangeQueries: []
indexLookupInterval: 0s
verifySamples: 2000
remoteStorages:
  vm:
    writeURL: "%sapi/v1/write"
    readURL: "%s"
    writeHeaders: ""
    readHeaders: ""
    vmagentExtraFlags: []
  prom:
    writeURL: "%sapi/v1/write"
    readURL: "%s"
  vm-select:
    writeURL: ""
    readURL: "%s"
    writeBearerToken: ""
    readBearerToken: ""
`, duration, rules, vm.URL, vm.URL, prom.URL, prom.URL, vm.URL)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit %d, results %v; stderr:\n%s", rr.code, rr.results != nil, rr.stderr)
	}
	for _, want := range []string{
		`group key limit (group \"nodeexporter-slow\") not applied`,
		`remoteStorages.vm-select.writeURL: empty: the storage is only queried`,
	} {
		if !strings.Contains(rr.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if strings.Contains(rr.stderr, "group key params") || strings.Contains(rr.stderr, "group key headers") {
		t.Errorf("stderr warns that params or headers are not applied:\n%s", rr.stderr)
	}
	if !strings.Contains(rr.stdout, "vm-select: no writes") {
		t.Errorf("summary does not say vm-select gets no writes")
	}

	groupInterval := map[string]time.Duration{"nodeexporter": 4 * time.Second, "nodeexporter-slow": 10 * time.Second}
	for _, name := range []string{"prom", "vm", "vm-select"} {
		s := storageResult(t, rr.results, name)
		if s.Query == nil || len(s.Query.PerQuery) != 6 {
			t.Fatalf("%s: query section %+v, want the 6 rules", name, s.Query)
		}
		if len(s.Query.Errors) != 0 {
			t.Errorf("%s: query errors %v", name, s.Query.Errors)
		}
		for _, pq := range s.Query.PerQuery {
			interval := groupInterval[pq.Group]
			if interval == 0 || pq.IntervalSeconds != interval.Seconds() {
				t.Errorf("%s %s: group %q interval %vs, want a group of the file at its interval", name, pq.Name, pq.Group, pq.IntervalSeconds)
				continue
			}
			// Evaluations are scheduled at start + offset + k·interval within the load: one
			// fewer than duration/interval at most, as the runner starts a moment after the load.
			n := pq.Executed + pq.Missed
			lo, hi := int64(math.Floor(duration.Seconds()/interval.Seconds()))-1, int64(math.Ceil(duration.Seconds()/interval.Seconds()))
			if n < lo || n > hi || pq.Missed > 1 {
				t.Errorf("%s %s: executed %d + missed %d, want %d..%d evaluations of the %v interval in %v, at most 1 missed",
					name, pq.Name, pq.Executed, pq.Missed, lo, hi, interval, duration)
			}
			if len(pq.Errors) != 0 || pq.OK != pq.Executed {
				t.Errorf("%s %s: ok %d of %d, errors %v: %s", name, pq.Name, pq.OK, pq.Executed, pq.Errors, pq.FirstError)
			}
			// The group's extra_label reached VictoriaMetrics, which filters on it (no
			// instance is tsbench-none), and not Prometheus, which ignores it.
			if pq.Name == "instance:node_load1:max" && pq.ResultSeries != nil {
				if n := *pq.ResultSeries; (name == "prom") != (n > 0) {
					t.Errorf("%s %s: %d series, want none on VictoriaMetrics (extra_label) and some on Prometheus", name, pq.Name, n)
				}
			} else if pq.Name == "instance:node_load1:max" {
				t.Errorf("%s %s: no successful evaluation", name, pq.Name)
			}
		}
		if name == "vm-select" {
			if s.Write != nil {
				t.Errorf("vm-select has a write account %+v, want none: it is only queried", *s.Write)
			}
			// It reads what tsbench wrote to vm: the read-back finds the data there.
			if v := s.Verify; v == nil || v.CheckedSamples == 0 || v.ReadErrors != 0 || v.MissingSamples > v.CheckedSamples/2 {
				t.Errorf("vm-select verify %+v: want samples checked and found", v)
			}
		} else if s.Write == nil || s.Write.AckedSamples == 0 {
			t.Errorf("%s: write %+v, want samples acked", name, s.Write)
		}
	}

	// With every storage only queried, as the chart deploys for query-only storages, the run
	// is the query load alone against what the storage holds: nothing generated, no read-back.
	rr = runTsbench(t, time.Minute, fmt.Sprintf(`
duration: 8s
queryRules: %s
rangeQueries: []
indexLookupInterval: 0s
remoteStorages:
  vm-select: {writeURL: "", readURL: "%s"}
`, rules, vm.URL))
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("query-only run: exit %d, results %v; stderr:\n%s", rr.code, rr.results != nil, rr.stderr)
	}
	s := storageResult(t, rr.results, "vm-select")
	if s.Write != nil || s.Verify != nil || rr.results.Workload.SeriesCreated != 0 {
		t.Errorf("query-only run: write %+v, verify %+v, series created %d; want none of them", s.Write, s.Verify, rr.results.Workload.SeriesCreated)
	}
	if s.Query == nil || s.Query.Executed == 0 || len(s.Query.Errors) != 0 {
		t.Errorf("query-only run: query %+v, want rules executed without errors", s.Query)
	}
	if !strings.Contains(rr.stderr, "the run is a query load only") {
		t.Errorf("query-only run: stderr does not say so:\n%s", rr.stderr)
	}
}
