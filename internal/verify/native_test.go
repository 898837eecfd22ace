package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// TestCompareNatives: a histogram returned as sent is kept, one with another bucket count
// changed, one not returned missing; bucket series made from the histograms (vmrange, or le
// where no classic bucket was sent) count as float points, classic buckets sent do not.
func TestCompareNatives(t *testing.T) {
	ls := []workload.Label{{Name: "__name__", Value: "req_seconds"}, {Name: "instance", Value: "h:9100"}, {Name: "job", Value: "node"}}
	h := workload.Histogram{Schema: 0, ZeroThreshold: 0x1p-128, Count: 10, Sum: 2.5, Offset: -1, Buckets: []uint64{4, 0, 6}}
	rd := nativeRead{want: map[string]map[int64]workload.Histogram{keyOf(ls): {1000: h, 2000: h, 3000: h}}}
	metric := func(extra ...string) map[string]string {
		m := map[string]string{"__name__": "req_seconds", "instance": "h:9100", "job": "node", "url_replica": "0"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	sent := query.HistogramPoint{T: 1000, Count: 10, Sum: 2.5, Buckets: []query.Bucket{
		{Boundaries: 0, Lower: 0.25, Upper: 0.5, Count: 4}, {Boundaries: 0, Lower: 1, Upper: 2, Count: 6},
	}}
	changed := sent
	changed.T, changed.Buckets = 2000, []query.Bucket{sent.Buckets[0], {Boundaries: 0, Lower: 1, Upper: 2, Count: 5}}
	res := &results.NativeHistograms{}
	compareNatives(rd, []query.HistogramSeries{
		{Metric: metric(), Histograms: []query.HistogramPoint{sent, changed}},
		{Metric: metric("quantile", "0.5"), Floats: 3}, // a summary's series of the same name
	}, res)
	bucketName := func(extra ...string) map[string]string {
		m := metric(extra...)
		m["__name__"] = "req_seconds_bucket"
		return m
	}
	countConverted(rd, []query.HistogramSeries{
		{Metric: bucketName("vmrange", "1.000e+00...2.000e+00"), Floats: 3},
		{Metric: bucketName("le", "0.5"), Floats: 3},
	}, res)
	want := &results.NativeHistograms{
		CheckedSeries: 1, CheckedHistograms: 3, Kept: 1, Changed: 1, Missing: 1, FloatPoints: 6,
		Examples: []string{`{__name__="req_seconds",instance="h:9100",job="node"} at 2000: sent count=10 sum=2.5 buckets=[0:0.25..0.5=4 0:1..2=6], got count=10 sum=2.5 buckets=[0:0.25..0.5=4 0:1..2=5]`},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if v := res.NativeVerdict(); v != "changed" {
		t.Errorf("verdict %s, want changed", v)
	}
	rd.bucketsSent = true // classic buckets sent beside: an le series is one of them
	res = &results.NativeHistograms{}
	countConverted(rd, []query.HistogramSeries{{Metric: bucketName("le", "0.5"), Floats: 3}}, res)
	if res.FloatPoints != 0 {
		t.Errorf("classic buckets counted as converted: %+v", res)
	}
}

func TestNativeVerdicts(t *testing.T) {
	for want, n := range map[string]results.NativeHistograms{
		"kept":      {CheckedHistograms: 2, Kept: 2},
		"partial":   {CheckedHistograms: 2, Kept: 1, Missing: 1},
		"converted": {CheckedHistograms: 2, Missing: 2, FloatPoints: 30},
		"dropped":   {CheckedHistograms: 2, Missing: 2},
		"refused":   {CheckedHistograms: 2, Missing: 2, FailedRequests: 3},
		"error":     {Errors: []string{"x"}},
	} {
		if got := n.NativeVerdict(); got != want {
			t.Errorf("%+v: verdict %s, want %s", n, got, want)
		}
	}
}
