package threshold

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

func TestParseThresholdsGood(t *testing.T) {
	got, err := Parse([]string{
		"query.p99 < 2s",
		"write.droppedSamples == 0",
		"vm: verify.changedValues == 0",
		"resources.rssBytesMax <= 1.5GiB",
		"write.achievedSamplesPerSecond >= 1e5",
		"query.p50 != 250ms",
		"query.p99<2s",
		"vm:verify.readErrors==0",
		"write.lagSeconds >=1.5s",
		"verify.ruleDiffs<= 3",
	}, []string{"prom", "vm"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Threshold{
		{Expr: "query.p99 < 2s", Figure: "query.p99", Op: "<", Value: 2},
		{Expr: "write.droppedSamples == 0", Figure: "write.droppedSamples", Op: "==", Value: 0},
		{Expr: "vm: verify.changedValues == 0", Storage: "vm", Figure: "verify.changedValues", Op: "==", Value: 0},
		{Expr: "resources.rssBytesMax <= 1.5GiB", Figure: "resources.rssBytesMax", Op: "<=", Value: 1.5 * (1 << 30)},
		{Expr: "write.achievedSamplesPerSecond >= 1e5", Figure: "write.achievedSamplesPerSecond", Op: ">=", Value: 1e5},
		{Expr: "query.p50 != 250ms", Figure: "query.p50", Op: "!=", Value: 0.25},
		{Expr: "query.p99<2s", Figure: "query.p99", Op: "<", Value: 2},
		{Expr: "vm:verify.readErrors==0", Storage: "vm", Figure: "verify.readErrors", Op: "==", Value: 0},
		{Expr: "write.lagSeconds >=1.5s", Figure: "write.lagSeconds", Op: ">=", Value: 1.5},
		{Expr: "verify.ruleDiffs<= 3", Figure: "verify.ruleDiffs", Op: "<=", Value: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseThresholdsBad(t *testing.T) {
	tests := map[string]string{
		"query.p98 < 2s":          `thresholds[0]: "query.p98 < 2s": unknown figure "query.p98"`,
		"mimir: query.p99 < 2s":   `thresholds[0]: "mimir: query.p99 < 2s": unknown storage "mimir"`,
		"query.p99 =< 2s":         `unknown operator "=<"`,
		"query.p99 < two seconds": `want [storage:] figure op value`,
		"query.p99 < fast":        `value "fast" is not a number`,
		"write.droppedSamples":    `want [storage:] figure op value`,
		"query.p99<=>2s":          `unknown operator "<=>"`,
		"query.p99 2s":            `want [storage:] figure op value`,
		"query.p99<":              `want [storage:] figure op value`,
		"<2s":                     `want [storage:] figure op value`,
		"query.p99<2 s":           `want [storage:] figure op value`,
		"query.p98<2s":            `unknown figure "query.p98"`,
	}
	for expr, want := range tests {
		t.Run(expr, func(t *testing.T) {
			_, err := Parse([]string{expr}, []string{"prom", "vm"})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want %q", err, want)
			}
		})
	}
	_, err := Parse([]string{"query.p99 < 1s", "bad", "query.nope > 1"}, nil)
	if err == nil || !strings.Contains(err.Error(), "thresholds[1]") || !strings.Contains(err.Error(), "thresholds[2]") {
		t.Errorf("every bad threshold must be named: %v", err)
	}
}

func TestEvaluateThresholds(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "prom", Write: &results.Write{DroppedSamples: map[string]int64{}}, Query: &results.Query{LatencySeconds: results.Latency{P99: new(0.5)}}},
		{Name: "vm", Write: &results.Write{DroppedSamples: map[string]int64{"queue_full": 3, "http_4xx": 1}}},
	}}
	ts, err := Parse([]string{"query.p99 < 1s", "write.droppedSamples == 0", "vm: write.droppedSamples <= 4"}, []string{"prom", "vm"})
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(ts, r)
	want := []results.ThresholdResult{
		{Expr: "query.p99 < 1s", Storage: "prom", Figure: "query.p99", Value: new(0.5), OK: true},
		{Expr: "query.p99 < 1s", Storage: "vm", Figure: "query.p99", Reason: "query.p99 is unknown for vm"},
		{Expr: "write.droppedSamples == 0", Storage: "prom", Figure: "write.droppedSamples", Value: new(float64(0)), OK: true},
		{Expr: "write.droppedSamples == 0", Storage: "vm", Figure: "write.droppedSamples", Value: new(float64(4))},
		{Expr: "vm: write.droppedSamples <= 4", Storage: "vm", Figure: "write.droppedSamples", Value: new(float64(4)), OK: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestLatencyUnknownWhenNothingCompleted: a storage none of whose queries completed has no
// latency; "query.p99 < 1s" fails for it with the reason, where a p99 of 0 passed (issue 10).
func TestLatencyUnknownWhenNothingCompleted(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "idle", Query: &results.Query{Missed: 30, Errors: map[string]int64{}}},
		{Name: "prom", Query: &results.Query{Executed: 30, OK: 30, Errors: map[string]int64{}, LatencySeconds: results.Latency{
			P50: new(0.01), P90: new(0.02), P99: new(0.03), Max: new(0.04),
		}}},
	}}
	ts, err := Parse([]string{"query.p99 < 1s"}, []string{"idle", "prom"})
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(ts, r)
	if got[0].OK || got[0].Value != nil || got[0].Reason != "query.p99 is unknown for idle" || !got[1].OK {
		t.Errorf("thresholds %+v: want idle failed as unknown, prom passed", got)
	}
}

// TestCountsAmongNothingCheckedUnknown: a read-back that checked no sample (every read
// failed) has no missing, changed, ... count: "verify.missingSamples == 0" fails for it as
// unknown instead of passing; staleness is unknown when no marker was checked. The counts
// of the attempt itself stay known.
func TestCountsAmongNothingCheckedUnknown(t *testing.T) {
	figures := Figures()
	failed := &results.Storage{Verify: &results.Verify{ReadErrors: 12, UncheckedSamples: 600}}
	for _, name := range []string{
		"verify.missingSamples", "verify.duplicateSamples", "verify.unexpectedSamples", "verify.changedValues",
		"verify.maxRelativeError", "verify.nanAltered", "verify.shiftedTimestamps", "verify.stalenessIgnored",
	} {
		if v := figures[name](failed); v != nil {
			t.Errorf("%s = %v with nothing checked, want unknown", name, *v)
		}
	}
	for name, want := range map[string]float64{"verify.checkedSamples": 0, "verify.readErrors": 12, "verify.uncheckedSamples": 600} {
		if v := figures[name](failed); v == nil || *v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	noChurn := &results.Storage{Verify: &results.Verify{CheckedSamples: 500}}
	if v := figures["verify.stalenessIgnored"](noChurn); v != nil {
		t.Errorf("stalenessIgnored %v with no marker checked, want unknown", *v)
	}
	if v := figures["verify.missingSamples"](noChurn); v == nil || *v != 0 {
		t.Errorf("missingSamples %v of 500 checked, want 0", v)
	}
}

// TestFiguresRead: every figure added for thresholds reads its field of the results.
func TestFiguresRead(t *testing.T) {
	s := &results.Storage{
		Write: &results.Write{LagSeconds: 1.5, TargetSamplesPerSecond: 30_000, BytesSent: 9_100_000},
		Query: &results.Query{Warnings: 7, OK: 700},
		Resources: &results.Resources{
			DiskBytesMax: new(float64(5 << 20)), DiskReadBytesPerSecond: new(1024.0), DiskWriteBytesPerSecond: new(2048.0),
			SnapshotBytes: new(float64(3 << 20)), IngestedSamples: new(5e6),
		},
		Verify: &results.Verify{
			ReadErrors: 2, UncheckedSamples: 240, CheckedStaleMarkers: 40,
			Probes:    []results.Probe{{Same: true}, {Same: false}, {Same: false}},
			RuleDiffs: []results.RuleDiff{{Rule: "a"}, {Rule: "b"}, {Rule: "c"}, {Rule: "d"}},
		},
	}
	want := map[string]float64{
		"write.lagSeconds": 1.5, "write.targetSamplesPerSecond": 30_000, "write.bytesSent": 9_100_000,
		"query.warnings": 7, "query.ok": 700,
		"resources.diskBytesMax": 5 << 20, "resources.diskReadBytesPerSecond": 1024, "resources.diskWriteBytesPerSecond": 2048,
		"resources.snapshotBytes": 3 << 20, "resources.ingestedSamples": 5e6,
		"verify.readErrors": 2, "verify.uncheckedSamples": 240, "verify.checkedStaleMarkers": 40,
		"verify.differentProbes": 2, "verify.ruleDiffs": 4,
	}
	figures := Figures()
	for name, w := range want {
		f, ok := figures[name]
		if !ok {
			t.Errorf("figure %s is missing", name)
			continue
		}
		if got := f(s); got == nil || *got != w {
			t.Errorf("%s = %v, want %v", name, got, w)
		}
	}
}

func TestFormatFigure(t *testing.T) {
	tests := []struct {
		figure string
		v      float64
		want   string
	}{
		{"write.ackedSamples", 5_398_800, "5398800"},
		{"verify.checkedSamples", 123_456_789_012, "123456789012"},
		{"query.p99", 0.12, "120ms"},
		{"query.p50", 0.0044, "4.4ms"},
		{"write.maxLagSeconds", 75.5, "1m15.5s"},
		{"resources.rssBytesMax", 390_070_272, "372.0MiB"},
		{"resources.diskBytesEnd", 512, "512B"},
		{"resources.snapshotBytes", 3 << 40, "3.0TiB"},
		{"resources.diskWriteBytesPerSecond", 559_240.53, "546.1KiB/s"},
		{"write.achievedSamplesPerSecond", 29_993.333, "29993.3"},
		{"write.achievedSamplesPerSecond", 1_234_567.89, "1234567.9"},
		{"resources.cpuCoresMean", 0.21, "0.21"},
		{"verify.maxRelativeError", 8e-14, "8e-14"},
		{"no.such.figure", 5_400_000, "5400000"},
	}
	for _, tt := range tests {
		if got := FormatFigure(tt.figure, tt.v); got != tt.want {
			t.Errorf("FormatFigure(%s, %v) = %q, want %q", tt.figure, tt.v, got, tt.want)
		}
	}
}

// A storage only queried (no write account) is not checked by a write threshold on every
// storage, and one naming it fails with the reason, never as an unknown figure.
func TestThresholdsSkipReadOnlyStorage(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "ro", Query: &results.Query{LatencySeconds: results.Latency{P99: new(0.2)}}},
		{Name: "vm", Write: &results.Write{DroppedSamples: map[string]int64{}}, Query: &results.Query{LatencySeconds: results.Latency{P99: new(0.1)}}},
	}}
	ts, err := Parse([]string{"write.droppedSamples == 0", "query.p99 < 1s", "ro: write.ackedSamples > 0"}, []string{"ro", "vm"})
	if err != nil {
		t.Fatal(err)
	}
	want := []results.ThresholdResult{
		{Expr: "write.droppedSamples == 0", Storage: "vm", Figure: "write.droppedSamples", Value: new(float64(0)), OK: true},
		{Expr: "query.p99 < 1s", Storage: "ro", Figure: "query.p99", Value: new(0.2), OK: true},
		{Expr: "query.p99 < 1s", Storage: "vm", Figure: "query.p99", Value: new(0.1), OK: true},
		{Expr: "ro: write.ackedSamples > 0", Storage: "ro", Figure: "write.ackedSamples", Reason: "ro gets no writes: it is only queried (no writeURL, or disableWrite)"},
	}
	if diff := cmp.Diff(want, Evaluate(ts, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
