package remotewrite

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/tsbench/tsbench/internal/workload"
)

var (
	counterLabels = []workload.Label{{Name: "__name__", Value: "requests_total"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}}
	testExemplars = []workload.Exemplar{
		{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Value: 3, T: 1_700_000_000_123},
		{TraceID: "00f067aa0ba902b700f067aa0ba902b7", Value: 0, T: 0}, // zero fields left out
	}
)

// TestEncodeExemplarEqualsPrompb: a counter's and a native histogram's exemplar, through
// Append, AppendSeries and AppendHistogram, give prompb's bytes; a sample after them has none.
func TestEncodeExemplarEqualsPrompb(t *testing.T) {
	var ls []prompb.Label
	for _, l := range counterLabels {
		ls = append(ls, prompb.Label{Name: l.Name, Value: l.Value})
	}
	h := &nativeCases[0].h
	for _, ex := range testExemplars {
		pex := []prompb.Exemplar{{Labels: []prompb.Label{{Name: "trace_id", Value: ex.TraceID}}, Value: ex.Value, Timestamp: ex.T}}
		want := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
			{Labels: ls, Samples: []prompb.Sample{{Value: 7, Timestamp: 1000}}, Exemplars: pex},
			{Labels: ls, Exemplars: pex, Histograms: []prompb.Histogram{prompb.FromIntHistogram(1000, promHistogram(h))}},
			{Labels: ls, Samples: []prompb.Sample{{Value: 8, Timestamp: 2000}}},
		}}
		wantBytes, err := want.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var slow encoderV1
		slow.SetExemplar(&ex)
		slow.Append(counterLabels, 1000, 7)
		slow.SetExemplar(&ex)
		slow.AppendHistogram(counterLabels, 1000, h)
		slow.Append(counterLabels, 2000, 8)
		if !bytes.Equal(slow.buf, wantBytes) {
			t.Fatalf("Append: bytes\n got %x\nwant %x", slow.buf, wantBytes)
		}
		fast := encoderV1{tpl: newTemplates(fakeSeries{series: [][]workload.Label{counterLabels}})}
		fast.StartTarget(nil)
		fast.SetExemplar(&ex)
		fast.AppendSeries(0, 1000, 7)
		fast.SetExemplar(&ex)
		fast.AppendHistogram(counterLabels, 1000, h)
		fast.AppendSeries(0, 2000, 8)
		if !bytes.Equal(fast.buf, wantBytes) {
			t.Fatalf("AppendSeries: bytes\n got %x\nwant %x", fast.buf, wantBytes)
		}
	}
}

// TestEncodeV2Exemplar: the exemplars decode with writev2 on their series, and writev2
// marshals the request to the same bytes.
func TestEncodeV2Exemplar(t *testing.T) {
	for _, ex := range testExemplars {
		// With metadata on every series: writev2 writes an empty one, the encoder none.
		e := newEncoderV2(metadata{"requests_total": {typ: typeCounter}}, nil)
		e.SetExemplar(&ex)
		e.Append(counterLabels, 1000, 7)
		e.SetExemplar(&ex)
		e.AppendHistogram(counterLabels, 1000, &nativeCases[0].h)
		e.Append(counterLabels, 2000, 8)
		body := e.body()
		var req writev2.Request
		if err := req.Unmarshal(body); err != nil {
			t.Fatal(err)
		}
		var got [][]string
		for _, ts := range req.Timeseries {
			var exs []string
			for _, x := range ts.Exemplars {
				exs = append(exs, req.Symbols[x.LabelsRefs[0]]+"="+req.Symbols[x.LabelsRefs[1]], fmtFloat(x.Value), fmtFloat(float64(x.Timestamp)))
			}
			got = append(got, exs)
		}
		one := []string{"trace_id=" + ex.TraceID, fmtFloat(ex.Value), fmtFloat(float64(ex.T))}
		if diff := cmp.Diff([][]string{one, one, nil}, got); diff != "" {
			t.Errorf("exemplars (-want +got):\n%s", diff)
		}
		again, err := req.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, body) {
			t.Errorf("writev2 marshals it to other bytes:\n got %x\nwant %x", body, again)
		}
	}
}

// TestEncodeOTLPExemplar: a counter point and an exponential histogram point carry the
// exemplar (16-byte trace id, value, time); the next point none.
func TestEncodeOTLPExemplar(t *testing.T) {
	ex := testExemplars[0]
	e := newEncoderOTLP(metadata{"requests_total": {typ: typeCounter}})
	e.SetExemplar(&ex)
	e.Append(counterLabels, 1000, 7)
	e.Append(counterLabels, 2000, 8)
	e.SetExemplar(&ex)
	e.AppendHistogram(counterLabels, 1000, &nativeCases[0].h)
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(e.body()); err != nil {
		t.Fatal(err)
	}
	ms := req.Metrics().ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	describe := func(exs pmetric.ExemplarSlice) []string {
		var out []string
		for _, x := range exs.All() {
			id := x.TraceID()
			out = append(out, hex.EncodeToString(id[:]), fmtFloat(x.DoubleValue()), fmtFloat(float64(x.Timestamp())))
		}
		return out
	}
	sum := ms.At(0).Sum().DataPoints()
	got := [][]string{
		describe(sum.At(0).Exemplars()), describe(sum.At(1).Exemplars()),
		describe(ms.At(1).ExponentialHistogram().DataPoints().At(0).Exemplars()),
	}
	one := []string{ex.TraceID, "3", fmtFloat(float64(ex.T) * 1e6)}
	if diff := cmp.Diff([][]string{one, nil, one}, got); diff != "" {
		t.Errorf("exemplars (-want +got):\n%s", diff)
	}
}

// TestEncodeExemplarDoesNotAllocate: an exemplar costs no allocation in any encoder.
func TestEncodeExemplarDoesNotAllocate(t *testing.T) {
	ex := &testExemplars[0]
	var e1 encoderV1
	e2 := newEncoderV2(metadata{}, nil)
	e3 := newEncoderOTLP(metadata{"requests_total": {typ: typeCounter}})
	type enc interface {
		workload.Appender
		workload.ExemplarAppender
	}
	for name, app := range map[string]enc{"1.0": &e1, "2.0": e2, "otlp": e3} {
		reset := map[string]func(){"1.0": e1.reset, "2.0": e2.reset, "otlp": e3.reset}[name]
		for range 600 {
			app.SetExemplar(ex)
			app.Append(counterLabels, 1, 1)
		}
		reset()
		n := 0
		allocs := testing.AllocsPerRun(1000, func() {
			if n++; n%500 == 0 {
				reset()
			}
			app.SetExemplar(ex)
			app.Append(counterLabels, 1_700_000_000_000, 2)
		})
		if allocs > 0 {
			t.Errorf("%s: Append with an exemplar allocates %.2f times", name, allocs)
		}
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
