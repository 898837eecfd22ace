package remotewrite

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/tsbench/tsbench/internal/workload"
)

// nativeCases are histograms at the edges of the encoding: negative and zero offsets and
// schemas, an empty span, zero counts, a staleness marker, time 0.
var nativeCases = []struct {
	name string
	t    int64
	h    workload.Histogram
}{
	{"typical", 1_700_000_000_123, workload.Histogram{Schema: -1, ZeroThreshold: 0x1p-128, Count: 4041, Sum: 912.5, Offset: -2, Buckets: []uint64{1010, 1516, 1313, 202}}},
	{"zero bucket, fine schema", 5, workload.Histogram{Schema: 8, ZeroThreshold: 1e-128, ZeroCount: 3, Count: 10, Sum: 1e-9, Offset: 1, Buckets: []uint64{7, 0}}},
	{"decreasing buckets", 1, workload.Histogram{Schema: 0, Count: 6, Sum: -0.5, Offset: 300, Buckets: []uint64{5, 1}}},
	{"no observation", 0, workload.Histogram{Schema: 3, ZeroThreshold: 0x1p-128, Offset: -7, Buckets: []uint64{0, 0}}},
	{"empty span", 42, workload.Histogram{Schema: -4, Count: 0}},
	{"stale", 1_700_000_000_000, workload.Histogram{Sum: workload.StaleNaN()}},
}

var nativeLabels = []workload.Label{{Name: "__name__", Value: "req_seconds"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}}

// promHistogram is h as Prometheus' own type, one span and count deltas.
func promHistogram(h *workload.Histogram) *histogram.Histogram {
	ph := &histogram.Histogram{Schema: h.Schema, ZeroThreshold: h.ZeroThreshold, ZeroCount: h.ZeroCount, Count: h.Count, Sum: h.Sum}
	if len(h.Buckets) > 0 {
		ph.PositiveSpans = []histogram.Span{{Offset: h.Offset, Length: uint32(len(h.Buckets))}}
		prev := int64(0)
		for _, c := range h.Buckets {
			ph.PositiveBuckets = append(ph.PositiveBuckets, int64(c)-prev)
			prev = int64(c)
		}
	}
	return ph
}

// TestEncodeHistogramEqualsPrompb: 1.0 bytes are those of prompb's Marshal of Prometheus'
// own conversion (prompb.FromIntHistogram), byte for byte.
func TestEncodeHistogramEqualsPrompb(t *testing.T) {
	for _, tc := range nativeCases {
		t.Run(tc.name, func(t *testing.T) {
			var e encoderV1
			e.AppendHistogram(nativeLabels, tc.t, &tc.h)
			e.Append(nativeLabels, tc.t, 1) // a float after it, in the same request
			var ls []prompb.Label
			for _, l := range nativeLabels {
				ls = append(ls, prompb.Label{Name: l.Name, Value: l.Value})
			}
			want := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
				{Labels: ls, Histograms: []prompb.Histogram{prompb.FromIntHistogram(tc.t, promHistogram(&tc.h))}},
				{Labels: ls, Samples: []prompb.Sample{{Value: 1, Timestamp: tc.t}}},
			}}
			wantBytes, err := want.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(e.buf, wantBytes) || e.samples != 2 {
				t.Fatalf("%d samples, bytes:\n got %x\nwant %x", e.samples, e.buf, wantBytes)
			}
		})
	}
}

// TestEncodeV2HistogramEqualsWritev2: the 2.0 request decodes with writev2 to Prometheus'
// own conversion (writev2.FromIntHistogram) with the family's metadata, and writev2
// marshals what it decoded to the same bytes.
func TestEncodeV2HistogramEqualsWritev2(t *testing.T) {
	meta := metadata{"req_seconds_count": {typ: typeHistogram, help: "Request latency.", unit: "seconds"}}
	for _, tc := range nativeCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEncoderV2(meta, nil)
			e.AppendHistogram(nativeLabels, tc.t, &tc.h)
			body := e.body()
			var req writev2.Request
			if err := req.Unmarshal(body); err != nil {
				t.Fatal(err)
			}
			if len(req.Timeseries) != 1 || e.samples != 1 {
				t.Fatalf("%d series, %d samples", len(req.Timeseries), e.samples)
			}
			ts := req.Timeseries[0]
			if diff := cmp.Diff([]writev2.Histogram{writev2.FromIntHistogram(tc.t, promHistogram(&tc.h))}, ts.Histograms,
				cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })); diff != "" {
				t.Errorf("histograms (-want +got):\n%s", diff)
			}
			if ts.Metadata.Type != writev2.Metadata_METRIC_TYPE_HISTOGRAM || req.Symbols[ts.Metadata.HelpRef] != "Request latency." || req.Symbols[ts.Metadata.UnitRef] != "seconds" {
				t.Errorf("metadata %+v", ts.Metadata)
			}
			again, err := req.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, body) {
				t.Errorf("writev2 marshals it to other bytes:\n got %x\nwant %x", body, again)
			}
		})
	}
}

// TestEncodeOTLPExponentialHistogram: the OTLP request decodes with pmetricotlp to an
// exponential histogram with OTLP's bucket offset (Prometheus' less one).
func TestEncodeOTLPExponentialHistogram(t *testing.T) {
	meta := metadata{"req_seconds_count": {typ: typeHistogram, help: "Request latency.", unit: "s"}}
	for _, tc := range nativeCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEncoderOTLP(meta)
			e.AppendHistogram(nativeLabels, tc.t, &tc.h)
			e.Append([]workload.Label{{Name: "__name__", Value: "up"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}}, tc.t, 1)
			req := pmetricotlp.NewExportRequest()
			if err := req.UnmarshalProto(e.body()); err != nil {
				t.Fatal(err)
			}
			ms := req.Metrics().ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
			if ms.Len() != 2 || e.samples != 2 || e.points != 2 {
				t.Fatalf("%d metrics, %d samples, %d points", ms.Len(), e.samples, e.points)
			}
			m := ms.At(0)
			if m.Type() != pmetric.MetricTypeExponentialHistogram || m.Name() != "req_seconds" || m.Description() != "Request latency." || m.Unit() != "s" ||
				m.ExponentialHistogram().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
				t.Fatalf("metric %s %s %q %q", m.Type(), m.Name(), m.Description(), m.Unit())
			}
			p := m.ExponentialHistogram().DataPoints().At(0)
			type point struct {
				T, Count, ZeroCount uint64
				Sum, ZeroThreshold  float64
				HasSum, Stale       bool
				Scale, Offset       int32
				Counts              []uint64
				Attrs               map[string]any
			}
			got := point{
				uint64(p.Timestamp()), p.Count(), p.ZeroCount(), p.Sum(), p.ZeroThreshold(), p.HasSum(), p.Flags().NoRecordedValue(),
				p.Scale(), p.Positive().Offset(), p.Positive().BucketCounts().AsRaw(), p.Attributes().AsRaw(),
			}
			want := point{
				uint64(tc.t) * 1e6, tc.h.Count, tc.h.ZeroCount, tc.h.Sum, tc.h.ZeroThreshold, !tc.h.Stale(), tc.h.Stale(),
				tc.h.Schema, tc.h.Offset - 1, tc.h.Buckets,
				map[string]any{},
			}
			if tc.h.Stale() {
				want.Sum = 0
			}
			if len(tc.h.Buckets) == 0 {
				want.Offset, want.Counts = 0, nil
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })); diff != "" {
				t.Errorf("point (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEncodeHistogramDoesNotAllocate: no encoder allocates per histogram once grown.
func TestEncodeHistogramDoesNotAllocate(t *testing.T) {
	h := &nativeCases[0].h
	var e1 encoderV1
	e2 := newEncoderV2(metadata{}, nil)
	e3 := newEncoderOTLP(metadata{})
	for name, app := range map[string]interface {
		AppendHistogram([]workload.Label, int64, *workload.Histogram)
	}{"1.0": &e1, "2.0": e2, "otlp": e3} {
		reset := map[string]func(){"1.0": e1.reset, "2.0": e2.reset, "otlp": e3.reset}[name]
		for range 600 {
			app.AppendHistogram(nativeLabels, 1, h)
		}
		reset()
		n := 0
		allocs := testing.AllocsPerRun(1000, func() {
			if n++; n%500 == 0 {
				reset()
			}
			app.AppendHistogram(nativeLabels, 1_700_000_000_000, h)
		})
		if allocs > 0 {
			t.Errorf("%s: AppendHistogram allocates %.2f times per histogram", name, allocs)
		}
	}
}
