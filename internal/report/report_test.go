package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// update rewrites golden files and fixtures: UPDATE=1 go test ./...
var update = os.Getenv("UPDATE") != ""

// fixture is a two-storage run with every section and timelines: fixed numbers, no clock.
func fixture() *results.Run {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return start.Add(time.Duration(i) * 10 * time.Second) }
	// mkWrite's timeline adds up at every point: the drops come in evenly, and a backlog
	// builds and clears in a 4-interval cycle when the storage drops (it is struggling).
	mkWrite := func(rate, lag float64, dropped map[string]int64) *results.Write {
		w := &results.Write{
			GeneratedSamples: 5_400_000, DroppedSamples: dropped, RequestsByStatus: map[string]int64{"204": 1080},
			BytesSent: 9_100_000, TargetSamplesPerSecond: 30_000, Copies: 1, MaxLagSeconds: lag,
		}
		w.AckedSamples = w.GeneratedSamples - w.Dropped()
		w.AchievedSamplesPerSecond = float64(w.AckedSamples) / 180
		for i := 1; i <= 18; i++ {
			p := results.WritePoint{
				Time: at(i), Generated: int64(i) * 300_000, Dropped: w.Dropped() * int64(i) / 18,
				SamplesPerSecs: rate + float64(i%3)*100, LagSeconds: lag * float64(i%4) / 4,
			}
			if p.Dropped > 0 && i < 18 {
				p.Pending = int64(i%4) * 15_000
			}
			p.Acked = p.Generated - p.Dropped - p.Pending
			w.Timeline = append(w.Timeline, p)
		}
		return w
	}
	// mkQuery spreads the errors over every third interval.
	// cpuFactor places the "cpu" range query among the slowest or not.
	mkQuery := func(p50, p99, cpuFactor float64, errs map[string]int64) *results.Query {
		q := &results.Query{Executed: 720, Errors: errs, Warnings: 3, Missed: 2, LatencySeconds: results.Latency{P50: new(p50), P90: new(p99 / 2), P99: new(p99), Max: new(p99 * 1.5)}}
		q.OK = q.Executed - sumCounts(errs)
		lat := func(f float64) results.Latency {
			return results.Latency{P50: new(p50 * f / 4), P90: new(p99 * f / 2), P99: new(p99 * f), Max: new(p99 * f * 1.5)}
		}
		q.PerQuery = []results.QueryStat{
			{Name: "NodeFilesystemAlmostFull", Kind: "instant", Executed: 18, OK: 18, LatencySeconds: lat(0.8), ResultSeries: new(int64(3))},
			{Name: "NodeDiskWillFillIn24h", Kind: "instant", Executed: 18, OK: 18, LatencySeconds: lat(1), ResultSeries: new(int64(0))},
			{Name: "series {job=\"node_exporter\"}", Kind: "series", Executed: 6, OK: 6, LatencySeconds: lat(0.5), ResultSeries: new(int64(41950))},
			{Name: "cpu", Kind: "range", Executed: 12, OK: 12, Errors: errs, LatencySeconds: lat(cpuFactor), ResultSeries: new(int64(50))},
		}
		for i := 1; i <= 18; i++ {
			var e int64
			if i%3 == 0 {
				e = sumCounts(errs) / 6
			}
			q.Timeline = append(q.Timeline, results.QueryPoint{
				Time: at(i).Format(time.RFC3339Nano), P50: new(p50 * (1 + float64(i%2)/10)), P99: new(p99 * (1 + float64(i%3)/10)),
				Errors: e, Completed: 40,
			})
		}
		return q
	}
	mkRes := func(cpu, rss, disk float64) *results.Resources {
		r := &results.Resources{
			Source: "proc+metrics", CPUCoresMean: new(cpu), CPUCoresMax: new(cpu * 2), RSSBytesMean: new(rss),
			RSSBytesMax: new(rss * 1.2), DiskBytesEnd: new(disk), DiskBytesMax: new(disk), DiskReadBytesPerSecond: new(float64(0)),
			DiskWriteBytesPerSecond: new(disk / 180), IngestedSamples: new(float64(5_400_000)), BytesPerSample: new(disk / 5_400_000),
		}
		for i := 1; i <= 18; i++ {
			f := float64(i) / 18
			r.Timeline = append(r.Timeline, results.ResourcePoint{
				Time: at(i).Format(time.RFC3339Nano), CPUCores: new(cpu * (1 + float64(i%3)/5)),
				RSSBytes: new(rss * (0.8 + 0.2*f)), DiskBytes: new(disk * f), BytesPerSample: new(disk / 5_400_000 * (1.2 - 0.4*f)),
				AckedSamples:           int64(i) * 300_000,
				DiskReadBytesPerSecond: new(float64(0)), DiskWriteBytesPerSecond: new(disk / 180 * (1 + float64(i%2)/5)),
			})
		}
		return r
	}
	// mkFresh: every probe sees each sample after about base seconds, twice that on the
	// index, with a slow interval every sixth and one sample given up in the ninth.
	mkFresh := func(base float64, queriesPerSecond float64) *results.Freshness {
		probe := func(q string, f float64) *results.FreshnessProbe {
			pr := &results.FreshnessProbe{
				Query: q, Visible: 178, NeverVisible: 1, Queries: 180 + int64(f*100),
				Seconds: results.Latency{P50: new(base * f), P90: new(base * f * 2), P99: new(base * f * 5), Max: new(base * f * 8)},
			}
			for i := 1; i <= 18; i++ {
				pt := results.FreshnessPoint{Time: at(i).Format(time.RFC3339), Visible: 10, P50: new(base * f), Max: new(base * f * (1 + float64(i%6/5)*7))}
				if i == 9 {
					pt.NeverVisible = 1
				}
				pr.Timeline = append(pr.Timeline, pt)
			}
			return pr
		}
		return &results.Freshness{
			IntervalSeconds: 0.1, WriteIntervalSeconds: 1, Written: 179, Acked: 179, AckedSamples: 358, QueriesPerSecond: queriesPerSecond,
			Instant: probe(`{__name__="tsbench_canary"}`, 1), Range: probe(`{__name__="tsbench_canary"}[5m] every 15s`, 1.5),
			Series: probe(`{__name__="tsbench_canary_series"}`, 2),
		}
	}
	notCompared := []string{"NodeDiskWillFillIn24h (needs 6h0m0s of data)", "NodeCPUSaturatedForHours (needs 3h0m0s of data)"}
	prom := results.Storage{
		Name: "prometheus", Write: mkWrite(30_000, 0.4, map[string]int64{}), Query: mkQuery(0.004, 0.120, 0.3, map[string]int64{}),
		Resources: mkRes(0.21, 310<<20, 96<<20), Verify: &results.Verify{
			CheckedSamples: 10_800, CheckedStaleMarkers: 40, ReadBackVia: "queryAPI", Probes: probes(false),
			RuleDiffs:        []results.RuleDiff{{Rule: "NodeClockNotSynchronising", Detail: "vs victoriametrics: 2 series only in victoriametrics"}},
			RulesNotCompared: notCompared,
		},
	}
	prom.Freshness = mkFresh(0.05, 3)
	prom.Resources.SnapshotBytes = new(float64(11 << 20))
	prom.Resources.SnapshotBytesPerSample = new(float64(11<<20) / 5_400_000)
	vm := results.Storage{
		Name: "victoriametrics", Write: mkWrite(29_990, 0.2, map[string]int64{"http_4xx": 1200}),
		Query:     mkQuery(0.002, 0.045, 1.2, map[string]int64{"http_422": 12, "timeout": 6}),
		Resources: mkRes(0.08, 95<<20, 4<<20), Verify: &results.Verify{
			CheckedSamples: 10_800, UncheckedSamples: 120, ReadErrors: 1, Errors: []string{"read {job=\"node_exporter\"}[5m]: timeout"},
			ChangedValues: 6293, MaxRelativeError: 8e-14, NaNAltered: 12, CheckedStaleMarkers: 40, ReadBackVia: "queryAPI",
			Probes: probes(true), RulesNotCompared: notCompared,
		},
	}
	for i, rule := range []string{"NodeClockNotSynchronising", "NodeCPUHighUsage", "NodeDiskIOSaturation", "NodeFilesystemFilesFillingUp", "NodeLoad15High", "NodeMemoryHighUtilization", "NodeNetworkReceiveErrs"} {
		vm.Verify.RuleDiffs = append(vm.Verify.RuleDiffs, results.RuleDiff{Rule: rule, Detail: fmt.Sprintf("vs prometheus: %d series differ (max relative error 3e-%d)", i+1, 9+i)})
	}
	vm.Freshness = mkFresh(1, 20)
	vm.Resources.SnapshotBytes, vm.Resources.SnapshotBytesPerSample = nil, nil
	vm.Resources.Reasons = map[string]string{"snapshotBytes": "no data dir: the storage was not started by tsbench"}
	r := &results.Run{
		SchemaVersion: results.SchemaVersion, StartTime: start, EndTime: start.Add(3 * time.Minute),
		Workload:  results.Workload{Targets: 200, SeriesPerTarget: 839, ActiveSeries: 167_800, SeriesCreated: 3356, StaleMarkers: 3356, ScrapeIntervalSeconds: 10, Seed: 1},
		Storages:  []results.Storage{prom, vm},
		Generator: &results.Generator{CPUCoresMean: new(0.05), CPUCoresMax: new(0.11), RSSBytesMean: new(float64(60 << 20)), RSSBytesMax: new(float64(70 << 20))},
	}
	ts, err := threshold.Parse([]string{
		"query.p99 < 100ms", "write.droppedSamples == 0", "victoriametrics: verify.changedValues == 0",
		"resources.rssBytesMax<300MiB", "verify.differentProbes == 0", "write.ackedSamples >= 5400000",
	}, []string{"prometheus", "victoriametrics"})
	if err != nil {
		panic(err) // the fixture's own thresholds: a bug in this file
	}
	r.Thresholds = threshold.Evaluate(ts, r)
	return r
}

// probes are the PromQL probes as verify renders them: Prometheus' answers, or
// VictoriaMetrics' (differ) with its known departures.
func probes(differ bool) []results.Probe {
	const sel = `node_load1{instance="host-0",job="node_exporter"}`
	ps := []results.Probe{
		{Name: "time() is a scalar", Query: "time()", Expected: "scalar 1795435380.001", Got: "scalar 1795435380.001", Same: true},
		{Name: "sum(time()) is a type error", Query: "sum(time())", Expected: "error (query rejected)", Got: "error bad_data (status 400)", Same: true},
		{Name: "vector(0) - metric matches no labelled series", Query: "vector(0) - " + sel, Expected: "vector (empty)", Got: "vector (empty)", Same: true},
		{Name: "instant query in the newest minute", Query: sel, Expected: "vector " + sel + " 0.25@1795435380.001", Got: "vector " + sel + " 0.25@1795435380.001", Same: true},
		{Name: "NaN value is returned", Query: `node_hwmon_temp_celsius{instance="host-0"}`, Expected: `vector node_hwmon_temp_celsius{instance="host-0"} NaN@1795435379.001`, Got: `vector node_hwmon_temp_celsius{instance="host-0"} NaN@1795435379.001`, Same: true},
	}
	if differ {
		ps[1].Got, ps[1].Same = "vector {} 1795435380.001@1795435380.001", false
		ps[2].Got, ps[2].Same = `vector {instance="host-0",job="node_exporter"} -0.25@1795435380.001`, false
		ps[4].Got, ps[4].Same = "vector (empty)", false
	}
	return ps
}

// writeOnly is a run with only the write section, as with storages that have no readURL.
func writeOnly() *results.Run {
	r := fixture()
	for i := range r.Storages {
		r.Storages[i].Query, r.Storages[i].Resources, r.Storages[i].Verify, r.Storages[i].Freshness = nil, nil, nil, nil
	}
	r.Generator, r.Thresholds = nil, nil
	return r
}

// withoutQueryAPI is the full run with victoriametrics in InfluxDB 1.x's place: its readURL
// answered 404 to the query API check, so it had no read load, and its samples were read back
// through remote read.
func withoutQueryAPI() *results.Run {
	r := fixture()
	s := r.Storage("victoriametrics")
	s.Query, s.Freshness = nil, nil // no query API: no canary either
	s.QueryAPI = &results.QueryAPI{URL: "http://127.0.0.1:8086/?u=admin&p=<secret>", Answer: "http_404 (http 404): 404 page not found"}
	s.Verify = &results.Verify{
		ReadBackVia: "remoteRead", CheckedSamples: 10_800, NaNAltered: 12, CheckedStaleMarkers: 40, MissingStaleMarkers: 40,
	}
	r.Storage("prometheus").QueryAPI = &results.QueryAPI{URL: "http://127.0.0.1:9090/", Available: true}
	r.Thresholds = nil
	return r
}

// loadFixture reads testdata/NAME.results.json, writing it from build first under UPDATE=1.
func loadFixture(t *testing.T, name string, build func() *results.Run) *results.Run {
	t.Helper()
	path := filepath.Join("testdata", name+".results.json")
	if update {
		if _, err := build().WriteFile(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(build(), "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestSummaryGolden(t *testing.T) {
	for name, build := range map[string]func() *results.Run{"full": fixture, "write-only": writeOnly, "no-query-api": withoutQueryAPI} {
		t.Run(name, func(t *testing.T) {
			r := loadFixture(t, name, build)
			var b bytes.Buffer
			if err := WriteSummary(&b, r); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".summary", b.Bytes())
		})
	}
}

// summaryHasLines checks that the fixture's summary has, for each regular expression, a
// line it matches whole, and returns the summary.
func summaryHasLines(t *testing.T, wants ...string) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSummary(&b, fixture()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range wants {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(out) {
			t.Errorf("summary has no line %q:\n%s", want, out)
		}
	}
	return out
}

func TestSummaryMarksBestAndUnknown(t *testing.T) {
	summaryHasLines(t,
		`acked +5400000 +5398800$`,                                           // 0.02 % apart: within the noise, no best
		`latency p99 \(s\) +0\.120 +0\.045$`,                                 // vm failed 18 of 720 queries (> 1 %): not ranked on latency
		`latency p90 \(s\) +0\.060 +0\.022$`,                                 // p90 beside p50 and p99
		`cpu cores mean +0\.210 +0\.080 \*`,                                  // 0.38× [0.32–0.45]: beyond the noise
		`  dropped http_4xx +0 \* +1200`,                                     // drop reasons listed
		`  errors timeout +0 \* +6`,                                          // query errors by kind
		`bytes/sample \(snapshot\) +2\.136 +\?`,                              // vm's snapshot is unknown, not zero
		`  ✗ victoriametrics  write\.ackedSamples >= 5400000 \(is 5398800\)`, // an exact count, no exponent
		`  ✗ prometheus       query\.p99 < 100ms \(is 120ms\)`,
		`  ✗ prometheus       resources\.rssBytesMax<300MiB \(is 372\.0MiB\)`,
		`  ✓ prometheus       write\.droppedSamples == 0 \(is 0\)`,
	)
}

func TestSummaryProbesAndRuleDiffs(t *testing.T) {
	out := summaryHasLines(t,
		// The same text as expected is "="; a different answer counted as the same has no ✗.
		`  time\(\) is a scalar +scalar 1795435380\.001 += += *`,
		`  sum\(time\(\)\) is a type error +error \(query rejected\) +error bad_data \(status 400\) +vector \{\} 1795435380\.001@1795435380\.001 ✗`,
		`  NaN value is returned +vector node_hwmon_temp_celsius\{instance… += +vector \(empty\) ✗`,
		`  prometheus: 1`,
		`    NodeClockNotSynchronising: vs victoriametrics: 2 series only in victoriametrics`,
		`  victoriametrics: 7`,
		`    NodeLoad15High: vs prometheus: 5 series differ \(max relative error 3e-13\)`,
		`    \.\.\. and 2 more`,
	)
	if strings.Contains(out, "NodeMemoryHighUtilization") {
		t.Errorf("the 6th rule difference is listed, want at most %d per storage", maxRuleDiffs)
	}
}

func TestProbeRows(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "a", Verify: &results.Verify{Probes: []results.Probe{{Name: "p1", Expected: "x", Got: "x", Same: true}}}},
		{Name: "b"},
		{Name: "c", Verify: &results.Verify{Probes: []results.Probe{{Name: "p2", Expected: "y", Got: "z"}, {Name: "p1", Expected: "x", Got: "w"}}}},
	}}
	want := []ProbeRow{
		{Name: "p1", Expected: "x", Got: []string{"x", "?", "w"}, Differs: []bool{false, false, true}},
		{Name: "p2", Expected: "y", Got: []string{"?", "?", "z"}, Differs: []bool{false, false, true}},
	}
	if diff := cmp.Diff(want, ProbeRows(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSlowestSideBySide: one row per query in the union of each storage's slowest, with
// every storage's p99, slowest first; "?" where a storage did not run the query.
func TestSlowestSideBySide(t *testing.T) {
	stat := func(name string, p99 float64) results.QueryStat {
		return results.QueryStat{Name: name, Kind: "instant", LatencySeconds: results.Latency{P99: new(p99)}}
	}
	r := &results.Run{Storages: []results.Storage{
		{Name: "a", Query: &results.Query{PerQuery: []results.QueryStat{stat("q1", 0.9), stat("q2", 0.8), stat("q3", 0.7), stat("q4", 0.1)}}},
		{Name: "b", Query: &results.Query{PerQuery: []results.QueryStat{stat("q1", 0.1), stat("q2", 0.2), stat("q4", 2), stat("q5", 0.3)}}},
	}}
	var b strings.Builder
	writeSlowest(&b, r)
	want := `
slowest queries: p99 from the scheduled time, the 3 slowest of each storage
  kind     query       a       b
  instant  q4     0.100s  2.000s
  instant  q1     0.900s  0.100s
  instant  q2     0.800s  0.200s
  instant  q3     0.700s       ?
  instant  q5          ?  0.300s
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCompareGolden(t *testing.T) {
	old := loadFixture(t, "full", fixture)
	cur := loadFixture(t, "full", fixture)
	// The new run: Prometheus 30% slower at p99 (beyond the noise), VictoriaMetrics' ingestion
	// 0.1% lower (within it), and 100 more drops (an exact count: flagged).
	*cur.Storages[0].Query.LatencySeconds.P99 *= 1.3
	cur.Storages[1].Write.AchievedSamplesPerSecond *= 0.999
	cur.Storages[1].Write.DroppedSamples["http_4xx"] += 100
	c := Compare([]*results.Run{old}, cur)
	flags := map[string]bool{}
	for _, r := range c.Rows {
		flags[r.Storage+" "+r.Figure] = r.Flagged
	}
	for key, want := range map[string]bool{
		"prometheus query.p99":                           true,
		"victoriametrics write.achievedSamplesPerSecond": false,
		"victoriametrics write.droppedSamples":           true,
		"prometheus write.ackedSamples":                  false,
	} {
		if flags[key] != want {
			t.Errorf("%s flagged %v, want %v", key, flags[key], want)
		}
	}
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare", b.Bytes())
	var h bytes.Buffer
	if err := c.WriteHTML(&h); err != nil || !strings.Contains(h.String(), `class="flag"`) {
		t.Errorf("compare.html: %v", err)
	}
}

// TestCompareStorageInOneRun: a storage in one run only is listed, flagged, "?" on the
// side that lacks it.
func TestCompareStorageInOneRun(t *testing.T) {
	old := fixture()
	cur := fixture()
	cur.Storages = cur.Storages[:1] // victoriametrics left out of the new run
	old.Storages = old.Storages[1:] // prometheus new in it
	c := Compare([]*results.Run{old}, cur)
	seen := map[string]bool{}
	for _, r := range c.Rows {
		seen[r.Storage] = true
		if !r.Flagged || (r.Storage == "prometheus") != (r.Old == nil) || (r.Storage == "victoriametrics") != (r.New == nil) {
			t.Errorf("%s %s: old %v new %v flagged %v", r.Storage, r.Figure, r.Old, r.New, r.Flagged)
		}
	}
	if !seen["prometheus"] || !seen["victoriametrics"] {
		t.Errorf("storages compared: %v, want both", seen)
	}
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`victoriametrics +query\.p99 +0\.045 +\? +— .*!`, `prometheus +query\.p99 +\? +0\.12 +— .*!`} {
		if !regexp.MustCompile(want).MatchString(b.String()) {
			t.Errorf("compare lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSummaryHistory: a run with history shows the catch-up apart with its bound on order,
// the settings of the storages, and says why a storage refused history.
func TestSummaryHistory(t *testing.T) {
	r := fixture()
	r.Workload.HistorySeconds, r.Workload.HistorySkewSeconds = 3600, 60
	r.Storages[0].Settings = []string{"--storage.tsdb.retention.time=15d"}
	for i := range r.Storages {
		s := &r.Storages[i]
		s.Write.History = &results.WriteHistory{GeneratedSamples: 108_000_000, AckedSamples: 108_000_000, Seconds: 400 * float64(i+1), CaughtUp: true}
		s.Write.History.SamplesPerSecond = float64(s.Write.History.AckedSamples) / s.Write.History.Seconds
		s.Resources.History = &results.Resources{CPUCoresMean: new(1.5 / float64(i+1)), BytesPerSample: new(1.25 + float64(i))}
	}
	r.Storages[1].Write.DroppedSamples = map[string]int64{"http_400": 1200}
	var b strings.Builder
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"history: the workload's clock began 1h0m0s before the start; each storage caught up in time order (no sample more than 1m0s older than the newest sent before it)",
		"settings of the storages that change what tsbench measures: prometheus --storage.tsdb.retention.time=15d",
		"HISTORY (CATCH-UP)",
		"catch-up samples/s 270000.0 * 135000.0",
		"bytes/sample 1.250 * 2.250",
		"victoriametrics: 1200 samples refused (http_400) with history: a storage refuses samples older than",
		"whether it held data before the run is unknown (no disk figure)",
	} {
		if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), want) { // columns aligned by spaces
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSettingsWarnings: a storage's settings read from it are listed with those tsbench
// gave, after its version, and each warning that one hides data from the checks is in the
// summary and the HTML (issue 39).
func TestSettingsWarnings(t *testing.T) {
	r := fixture()
	r.Storages[0].Settings = []string{"--storage.tsdb.retention.time=15d"}
	r.Storages[0].Version = "2.42.0+ds-5+deb12u1 (Debian)"
	r.Storages[1].Settings = []string{"-dedup.minScrapeInterval=0s", "-retentionPeriod=1", "-search.latencyOffset=30s"}
	warning := "-search.latencyOffset=30s hides each series' newest 30s from queries"
	r.Storages[1].SettingsWarnings = []string{warning + ", longer than the 3s the read-back at the end waits"}
	var sum, page strings.Builder
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"settings of the storages that change what tsbench measures: prometheus version 2.42.0+ds-5+deb12u1 (Debian) --storage.tsdb.retention.time=15d victoriametrics -dedup.minScrapeInterval=0s -retentionPeriod=1 -search.latencyOffset=30s",
		"warning victoriametrics: " + warning,
	} {
		if !strings.Contains(strings.Join(strings.Fields(sum.String()), " "), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	for _, want := range []string{
		"Settings of victoriametrics that change what tsbench measures: <code>-dedup.minScrapeInterval=0s -retentionPeriod=1 -search.latencyOffset=30s</code>",
		`<p class="fail">Setting of victoriametrics hides data from the checks: ` + template.HTMLEscapeString(warning),
		"<p>Version of prometheus: 2.42.0&#43;ds-5&#43;deb12u1 (Debian)</p>",
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestRefusedHistoryNamesAnEarlierRunOnlyWhenHeld: the summary names an earlier run as the
// cause of refused history only when the storage held data when first observed; an empty
// storage's refusals are said to be newer samples reaching it (issue 36: an empty Prometheus
// was told it held an earlier run).
func TestRefusedHistoryNamesAnEarlierRunOnlyWhenHeld(t *testing.T) {
	for _, c := range []struct {
		name        string
		start       float64 // disk bytes when first observed
		want, never string
	}{
		{"empty", 20001, "it held no data before the run (20001 bytes on disk when first observed), so not an earlier run", "as when it holds an earlier run"},
		{"held", 52 << 20, "it held 52.0 MiB before the run, as when it holds an earlier run of the same workload", "held no data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &results.Run{Storages: []results.Storage{{
				Name:      "prometheus",
				Write:     &results.Write{DroppedSamples: map[string]int64{"http_400": 7}, History: &results.WriteHistory{CaughtUp: true}},
				Resources: &results.Resources{DiskBytesEnd: new(c.start + 5e6), DiskBytesGrowth: new(5e6)},
			}}}
			var b strings.Builder
			writeRefusedHistory(&b, r)
			if got := b.String(); !strings.Contains(got, "prometheus: 7 samples refused (http_400) with history: "+c.want) || strings.Contains(got, c.never) {
				t.Errorf("summary says:\n%s\nwant %q, never %q", got, c.want, c.never)
			}
		})
	}
}

// TestLatencyUnknownInSummary: a storage none of whose queries completed has no latency: the
// summary shows "?" and marks no best from it (issue 10).
func TestLatencyUnknownInSummary(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "idle", Query: &results.Query{Missed: 30, Errors: map[string]int64{}}},
		{Name: "prom", Query: &results.Query{Executed: 30, OK: 30, Errors: map[string]int64{}, LatencySeconds: results.Latency{
			P50: new(0.01), P90: new(0.02), P99: new(0.03), Max: new(0.04),
		}}},
	}}
	var b strings.Builder
	writeTable(&b, r)
	if !regexp.MustCompile(`(?m)^latency p99 \(s\) +\? +0\.030$`).MatchString(b.String()) {
		t.Errorf("summary table:\n%s\nwant p99 ? for idle, with no best mark", b.String())
	}
}

// TestSummaryReadOnlyStorage: the summary says which storage is only queried, and only that one.
func TestSummaryReadOnlyStorage(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "ro", Query: &results.Query{LatencySeconds: results.Latency{P99: new(0.2)}}},
		{Name: "vm", Write: &results.Write{DroppedSamples: map[string]int64{}}, Query: &results.Query{LatencySeconds: results.Latency{P99: new(0.1)}}},
	}}
	var b strings.Builder
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ro: no writes (no writeURL, or disableWrite): only queried, so it has no ingestion figures\n") {
		t.Errorf("summary does not say ro gets no writes:\n%s", b.String())
	}
	if strings.Contains(b.String(), "vm: no writes") {
		t.Errorf("summary says vm gets no writes:\n%s", b.String())
	}
}

// TestRuleDiffsSayHowManyCompared: a storage with no rule difference says of how many rules,
// so that "none" compared with nothing does not read as "all alike".
func TestRuleDiffsSayHowManyCompared(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "a", Verify: &results.Verify{RuleDiffs: []results.RuleDiff{}, RulesCompared: 12}},
		{Name: "b", Verify: &results.Verify{RuleDiffs: []results.RuleDiff{{Rule: "r", Detail: "vs a: 1 series only here"}}, RulesCompared: 12}},
	}}
	var b strings.Builder
	writeRuleDiffs(&b, r)
	if want := "  a: none of 12 compared\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant %q", b.String(), want)
	}
}
