package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// update rewrites golden files and fixtures: UPDATE=1 go test ./...
var update = os.Getenv("UPDATE") != ""

// fixture is a two-storage run with every section and timelines: fixed numbers, no clock.
func fixture() *Results {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return start.Add(time.Duration(i) * 10 * time.Second) }
	mkWrite := func(rate, lag float64, dropped map[string]int64) *Write {
		w := &Write{
			GeneratedSamples: 5_400_000, DroppedSamples: dropped, RequestsByStatus: map[string]int64{"204": 1080},
			BytesSent: 9_100_000, TargetSamplesPerSecond: 30_000, Copies: 1, MaxLagSeconds: lag,
		}
		w.AckedSamples = w.GeneratedSamples - w.Dropped()
		w.AchievedSamplesPerSecond = float64(w.AckedSamples) / 180
		for i := 1; i <= 18; i++ {
			w.Timeline = append(w.Timeline, WritePoint{
				Time: at(i), Generated: int64(i) * 300_000, Acked: int64(i) * 300_000,
				SamplesPerSecs: rate + float64(i%3)*100, LagSeconds: lag * float64(i%4) / 4,
			})
		}
		return w
	}
	mkQuery := func(p50, p99 float64, errs map[string]int64) *Query {
		q := &Query{Executed: 720, Errors: errs, Missed: 2, LatencySeconds: Latency{P50: p50, P90: p99 / 2, P99: p99, Max: p99 * 1.5}}
		q.OK = q.Executed - sumCounts(errs)
		q.PerQuery = []QueryStat{
			{Name: "NodeFilesystemAlmostFull", Kind: "instant", Executed: 18, OK: 18, LatencySeconds: Latency{P50: p50, P99: p99 * 0.8}, ResultSeries: 3},
			{Name: "NodeDiskWillFillIn24h", Kind: "instant", Executed: 18, OK: 18, LatencySeconds: Latency{P50: p50 * 3, P99: p99}, ResultSeries: 0},
			{Name: "series {job=\"node_exporter\"}", Kind: "series", Executed: 6, OK: 6, LatencySeconds: Latency{P50: p50 * 2, P99: p99 * 0.5}, ResultSeries: 41950},
			{Name: "cpu", Kind: "range", Executed: 12, OK: 12, Errors: errs, LatencySeconds: Latency{P50: p50, P99: p99 * 0.3}, ResultSeries: 50},
		}
		for i := 1; i <= 18; i++ {
			q.Timeline = append(q.Timeline, QueryPoint{Time: at(i).Format(time.RFC3339Nano), P50: p50 * (1 + float64(i%2)/10), P99: p99 * (1 + float64(i%3)/10)})
		}
		return q
	}
	mkRes := func(cpu, rss, disk float64) *Resources {
		r := &Resources{
			Source: "proc+metrics", CPUCoresMean: new(cpu), CPUCoresMax: new(cpu * 2), RSSBytesMean: new(rss),
			RSSBytesMax: new(rss * 1.2), DiskBytesEnd: new(disk), DiskBytesMax: new(disk), DiskReadBytesPerSecond: new(float64(0)),
			DiskWriteBytesPerSecond: new(disk / 180), IngestedSamples: new(float64(5_400_000)), BytesPerSample: new(disk / 5_400_000),
		}
		for i := 1; i <= 18; i++ {
			f := float64(i) / 18
			r.Timeline = append(r.Timeline, ResourcePoint{
				Time: at(i).Format(time.RFC3339Nano), CPUCores: new(cpu * (1 + float64(i%3)/5)),
				RSSBytes: new(rss * (0.8 + 0.2*f)), DiskBytes: new(disk * f), BytesPerSample: new(disk / 5_400_000),
			})
		}
		return r
	}
	prom := Storage{
		Name: "prometheus", Write: mkWrite(30_000, 0.4, map[string]int64{}), Query: mkQuery(0.004, 0.120, map[string]int64{}),
		Resources: mkRes(0.21, 310<<20, 96<<20), Verify: &Verify{CheckedSamples: 10_800, Probes: []Probe{{Name: "time() is a scalar", Same: true}}},
	}
	prom.Resources.SnapshotBytes = new(float64(11 << 20))
	prom.Resources.SnapshotBytesPerSample = new(float64(11<<20) / 5_400_000)
	vm := Storage{
		Name: "victoriametrics", Write: mkWrite(29_990, 0.2, map[string]int64{"http_4xx": 1200}), Query: mkQuery(0.002, 0.045, map[string]int64{"http_422": 12}),
		Resources: mkRes(0.08, 95<<20, 4<<20), Verify: &Verify{
			CheckedSamples: 10_800, ChangedValues: 6293, MaxRelativeError: 8e-14, NaNAltered: 12,
			Probes: []Probe{{Name: "time() is a scalar", Same: false}},
		},
	}
	vm.Resources.SnapshotBytes, vm.Resources.SnapshotBytesPerSample = nil, nil
	vm.Resources.Reasons = map[string]string{"snapshotBytes": "no data dir: the storage was not started by tsbench"}
	r := &Results{
		SchemaVersion: SchemaVersion, StartTime: start, EndTime: start.Add(3 * time.Minute),
		Workload:  Workload{Targets: 200, SeriesPerTarget: 839, ActiveSeries: 167_800, SeriesCreated: 3356, StaleMarkers: 3356, ScrapeIntervalSeconds: 10, Seed: 1},
		Storages:  []Storage{prom, vm},
		Generator: &Generator{CPUCoresMean: new(0.05), CPUCoresMax: new(0.11), RSSBytesMean: new(float64(60 << 20)), RSSBytesMax: new(float64(70 << 20))},
	}
	ts, _ := ParseThresholds([]string{"query.p99 < 100ms", "write.droppedSamples == 0", "victoriametrics: verify.changedValues == 0"}, []string{"prometheus", "victoriametrics"})
	r.Thresholds = EvaluateThresholds(ts, r)
	return r
}

// writeOnly is a run with only the write section, as with storages that have no readURL.
func writeOnly() *Results {
	r := fixture()
	for i := range r.Storages {
		r.Storages[i].Query, r.Storages[i].Resources, r.Storages[i].Verify = nil, nil, nil
	}
	r.Generator, r.Thresholds = nil, nil
	return r
}

// loadFixture reads testdata/NAME.results.json, writing it from build first under UPDATE=1.
func loadFixture(t *testing.T, name string, build func() *Results) *Results {
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
	r, err := ReadFile(path)
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
	for name, build := range map[string]func() *Results{"full": fixture, "write-only": writeOnly} {
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

func TestSummaryMarksBestAndUnknown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSummary(&b, fixture()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"5400000", "5398800", // exact counts
		"0.045 *",          // vm's p99 is the best
		"dropped http_4xx", // drop reasons listed
		"?",                // vm's snapshot is unknown, not zero
		"✗ victoriametrics  verify.changedValues == 0 (is 6293)",
		"✓ prometheus       write.droppedSamples == 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestCompareGolden(t *testing.T) {
	old := loadFixture(t, "full", fixture)
	cur := loadFixture(t, "full", fixture)
	// The new run: Prometheus 30% slower at p99 (beyond the noise), VictoriaMetrics' ingestion
	// 0.1% lower (within it), and 100 more drops (an exact count: flagged).
	cur.Storages[0].Query.LatencySeconds.P99 *= 1.3
	cur.Storages[1].Write.AchievedSamplesPerSecond *= 0.999
	cur.Storages[1].Write.DroppedSamples["http_4xx"] += 100
	c := Compare(old, cur)
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
