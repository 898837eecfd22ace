package remotewrite

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/workload"
)

func TestEncodeDecodesWithPrompb(t *testing.T) {
	var e encoder
	in := []struct {
		labels []workload.Label
		t      int64
		v      float64
	}{
		{[]workload.Label{{Name: "__name__", Value: "node_cpu_seconds_total"}, {Name: "cpu", Value: "0"}, {Name: "instance", Value: "host-000001:9100"}}, 1_700_000_000_123, 12345.67},
		{[]workload.Label{{Name: "__name__", Value: "up"}}, 1, -0.5},
		{[]workload.Label{{Name: "__name__", Value: "big"}, {Name: "le", Value: "+Inf"}}, math.MaxInt64, math.Inf(1)},
		{[]workload.Label{{Name: "__name__", Value: "stale"}}, 2, workload.StaleNaN()},
	}
	for _, s := range in {
		e.Append(s.labels, s.t, s.v)
	}
	compressed := snappy.Encode(nil, e.buf)
	raw, err := snappy.Decode(nil, compressed) // the block format, not the framed stream
	if err != nil {
		t.Fatal(err)
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	if len(req.Timeseries) != len(in) || e.samples != len(in) || e.oldest != 1 {
		t.Fatalf("%d series decoded, %d counted, oldest %d", len(req.Timeseries), e.samples, e.oldest)
	}
	for i, ts := range req.Timeseries {
		var want []prompb.Label
		for _, l := range in[i].labels {
			want = append(want, prompb.Label{Name: l.Name, Value: l.Value})
		}
		if diff := cmp.Diff(want, ts.Labels); diff != "" {
			t.Errorf("series %d labels (-want +got):\n%s", i, diff)
		}
		if len(ts.Samples) != 1 || ts.Samples[0].Timestamp != in[i].t || math.Float64bits(ts.Samples[0].Value) != math.Float64bits(in[i].v) {
			t.Errorf("series %d samples %+v, want t=%d v=%v (bit for bit)", i, ts.Samples, in[i].t, in[i].v)
		}
	}
}

func TestEncodeRefusesInvalidLabels(t *testing.T) {
	bad := [][]workload.Label{
		{{Name: "job", Value: "x"}}, // no __name__
		{{Name: "__name__", Value: "1up"}},
		{{Name: "__name__", Value: "a"}, {Name: "b-c", Value: "x"}},
		{{Name: "__name__", Value: "a"}, {Name: "b", Value: ""}},
		{{Name: "__name__", Value: "a"}, {Name: "z", Value: "1"}, {Name: "b", Value: "2"}},
		{{Name: "__name__", Value: "a"}, {Name: "b", Value: "1"}, {Name: "b", Value: "2"}},
	}
	var e encoder
	for _, ls := range bad {
		e.Append(ls, 1, 1)
	}
	e.Append([]workload.Label{{Name: "__name__", Value: "ok:rate5m"}, {Name: "_x", Value: "y"}}, 1, 1)
	if e.invalid != len(bad) || e.samples != 1 {
		t.Errorf("invalid %d samples %d, want %d and 1", e.invalid, e.samples, len(bad))
	}
}

func TestEncodeDoesNotAllocate(t *testing.T) {
	var e encoder
	labels := []workload.Label{{Name: "__name__", Value: "node_load1"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}}
	e.Append(labels, 1, 1)
	allocs := testing.AllocsPerRun(1000, func() {
		if e.samples > 500 {
			e.reset()
		}
		e.Append(labels, 1_700_000_000_000, 0.42)
	})
	if allocs > 0 {
		t.Errorf("Append allocates %.2f times per sample", allocs)
	}
}
