package remotewrite

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/tsbench/tsbench/internal/workload"
)

// createdMeta types one series of each kind.
var createdMeta = metadata{
	"c_total": {typ: typeCounter}, "g": {typ: typeGauge},
	"s": {typ: typeSummary, family: "s", role: roleQuantile}, "s_count": {typ: typeSummary, family: "s", role: roleCount},
	"s_sum": {typ: typeSummary, family: "s", role: roleSum}, "h_count": {typ: typeHistogram},
}

// labelsOf is a series of the name on instance; extra labels must sort after job.
func labelsOf(name, instance string, extra ...workload.Label) []workload.Label {
	return append([]workload.Label{{Name: "__name__", Value: name}, {Name: "instance", Value: instance}, {Name: "job", Value: "node"}}, extra...)
}

// TestEncodeV2StartTimestamps: counters, summaries and native histograms carry the target's
// process start, gauges none; writev2 decodes them and marshals the request to the same bytes.
func TestEncodeV2StartTimestamps(t *testing.T) {
	const created = 1_699_000_000_000
	e := newEncoderV2(createdMeta, nil)
	e.SetCreated(created)
	e.Append(labelsOf("c_total", "a"), 2000, 5)
	e.Append(labelsOf("g", "a"), 2000, 1)
	e.Append(labelsOf("s", "a", workload.Label{Name: "quantile", Value: "0.5"}), 2000, 0.1)
	e.AppendHistogram(labelsOf("h", "a"), 2000, &nativeCases[0].h)
	body := e.body()
	var req writev2.Request
	if err := req.Unmarshal(body); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, ts := range req.Timeseries {
		for _, s := range ts.Samples {
			got = append(got, s.StartTimestamp)
		}
		for _, h := range ts.Histograms {
			got = append(got, h.StartTimestamp)
		}
	}
	if diff := cmp.Diff([]int64{created, 0, created, created}, got); diff != "" {
		t.Errorf("start timestamps (-want +got):\n%s", diff)
	}
	again, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, body) {
		t.Errorf("writev2 marshals it to other bytes:\n got %x\nwant %x", body, again)
	}
}

// TestEncodeOTLPStartTimes: sums, summaries and exponential histograms carry their target's
// process start as start_time_unix_nano, gauges none; a summary point closed after the next
// target began keeps its own target's.
func TestEncodeOTLPStartTimes(t *testing.T) {
	const a, b = 1_699_000_000_000, 1_698_000_000_000
	e := newEncoderOTLP(createdMeta)
	e.SetCreated(a)
	e.Append(labelsOf("c_total", "a"), 2000, 5)
	e.Append(labelsOf("g", "a"), 2000, 1)
	e.AppendHistogram(labelsOf("h", "a"), 2000, &nativeCases[0].h)
	e.Append(labelsOf("s_count", "a"), 2000, 3)
	e.Append(labelsOf("s_sum", "a"), 2000, 0.3)
	e.SetCreated(b) // the next target: the summary point of "a" is still open
	e.Append(labelsOf("c_total", "b"), 2000, 7)
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(e.body()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rm := range req.Metrics().ResourceMetrics().All() {
		for _, m := range rm.ScopeMetrics().At(0).Metrics().All() {
			var start uint64
			switch m.Name() {
			case "c_total":
				start = uint64(m.Sum().DataPoints().At(0).StartTimestamp())
			case "g":
				start = uint64(m.Gauge().DataPoints().At(0).StartTimestamp())
			case "s":
				start = uint64(m.Summary().DataPoints().At(0).StartTimestamp())
			case "h":
				start = uint64(m.ExponentialHistogram().DataPoints().At(0).StartTimestamp())
			}
			got = append(got, m.Name()+"="+fmtFloat(float64(start)/1e6))
		}
	}
	want := []string{"c_total=" + fmtFloat(a), "g=0", "h=" + fmtFloat(a), "s=" + fmtFloat(a), "c_total=" + fmtFloat(b)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("start times (-want +got):\n%s", diff)
	}
}
