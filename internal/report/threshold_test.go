package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseThresholdsGood(t *testing.T) {
	got, err := ParseThresholds([]string{
		"query.p99 < 2s",
		"write.droppedSamples == 0",
		"vm: verify.changedValues == 0",
		"resources.rssBytesMax <= 1.5GiB",
		"write.achievedSamplesPerSecond >= 1e5",
		"query.p50 != 250ms",
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
	}
	for expr, want := range tests {
		t.Run(expr, func(t *testing.T) {
			_, err := ParseThresholds([]string{expr}, []string{"prom", "vm"})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want %q", err, want)
			}
		})
	}
	_, err := ParseThresholds([]string{"query.p99 < 1s", "bad", "query.nope > 1"}, nil)
	if err == nil || !strings.Contains(err.Error(), "thresholds[1]") || !strings.Contains(err.Error(), "thresholds[2]") {
		t.Errorf("every bad threshold must be named: %v", err)
	}
}

func TestEvaluateThresholds(t *testing.T) {
	r := &Results{Storages: []Storage{
		{Name: "prom", Write: &Write{DroppedSamples: map[string]int64{}}, Query: &Query{LatencySeconds: Latency{P99: 0.5}}},
		{Name: "vm", Write: &Write{DroppedSamples: map[string]int64{"queue_full": 3, "http_4xx": 1}}},
	}}
	ts, err := ParseThresholds([]string{"query.p99 < 1s", "write.droppedSamples == 0", "vm: write.droppedSamples <= 4"}, []string{"prom", "vm"})
	if err != nil {
		t.Fatal(err)
	}
	got := EvaluateThresholds(ts, r)
	want := []ThresholdResult{
		{Expr: "query.p99 < 1s", Storage: "prom", Value: new(0.5), OK: true},
		{Expr: "query.p99 < 1s", Storage: "vm", Reason: "query.p99 is unknown for vm"},
		{Expr: "write.droppedSamples == 0", Storage: "prom", Value: new(float64(0)), OK: true},
		{Expr: "write.droppedSamples == 0", Storage: "vm", Value: new(float64(4))},
		{Expr: "vm: write.droppedSamples <= 4", Storage: "vm", Value: new(float64(4)), OK: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
