package reproduce

import (
	"math"
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestSizingAgreesWithTheChart: the sizing 100m-samples prints for 100 M samples/s is the
// Helm chart's: the shards of examples/helm-100m.yaml, the chart's cpuHeadroom, and its CPU
// request formula over the chart's samplesPerCore giving the same request per shard.
func TestSizingAgreesWithTheChart(t *testing.T) {
	values := func(path string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	chart, ex := values("../../deploy/helm/tsbench/values.yaml"), values("../../examples/helm-100m.yaml")
	perCore, headroom := float64(chart["samplesPerCore"].(int)), chart["cpuHeadroom"].(int)
	shards, targets := ex["shards"].(int), ex["targetsCount"].(int)
	z := Size(100e6, 1e9, perCore, 400)
	if z.Shards != shards || CPUHeadroom != headroom {
		t.Errorf("sizing: %d shards with headroom %d; the chart's 100 M example: %d shards, cpuHeadroom %d", z.Shards, CPUHeadroom, shards, headroom)
	}
	// The chart's request for the example's own rate per shard: 1192000 × 839 / 10 / 40.
	rate := float64(targets) * 839 / 10 / float64(shards)
	if want := int(math.Ceil(1000 * rate * float64(headroom) / perCore)); z.CPURequestMillis != want {
		t.Errorf("sizing: %dm requested per shard; the chart requests %dm", z.CPURequestMillis, want)
	}
	if z.Cores != 100e6/perCore || z.RAMBytes != 400e9 {
		t.Errorf("sizing %+v: want %g cores and 400 GB", z, 100e6/perCore)
	}
}
