package storagetest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// /api/v1/metadata serves the metadata remote write 2.0 appended, by family; 1.0's metadata
// field is ignored by Prometheus' handler, so it never shows.
func TestReceiverServesMetadataOf2Only(t *testing.T) {
	t.Parallel()
	r := start(t, Options{})
	v1 := prompb.WriteRequest{Metadata: []prompb.MetricMetadata{{Type: prompb.MetricMetadata_GAUGE, MetricFamilyName: "g", Help: "G."}}}
	b, err := v1.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if resp := post(t, r.URL+WritePath, "application/x-protobuf", b); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("1.0 metadata write: %s", resp.Status)
	}
	if resp := post(t, r.URL+WritePath, v2Type, v2Request(t)); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("2.0 write: %s", resp.Status)
	}
	resp, err := http.Get(r.URL + "/api/v1/metadata")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   map[string][]map[string]string
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	want := map[string][]map[string]string{"x_total": {{"type": "counter", "help": "help text", "unit": ""}}}
	if diff := cmp.Diff(want, body.Data); diff != "" || body.Status != "success" {
		t.Errorf("status %s, metadata (-want +got):\n%s", body.Status, diff)
	}
}

// With CreatedZeroIngestion, a 2.0 sample's start timestamp becomes a zero sample only when
// the head takes it: at most half a block (1 h) before the newest sample. Further back, as
// tsbench's simulated process starts always are, it is out of bounds and dropped.
func TestReceiverCreatedZeroSampleWithinAnHour(t *testing.T) {
	t.Parallel()
	r := start(t, Options{CreatedZeroIngestion: true})
	const ts = 10_000_000
	req := writev2.Request{
		Symbols: []string{"", "__name__", "near_total", "far_total"},
		Timeseries: []writev2.TimeSeries{
			{LabelsRefs: []uint32{1, 2}, Samples: []writev2.Sample{{Value: 1, Timestamp: ts, StartTimestamp: ts - 3_000_000}}},
			{LabelsRefs: []uint32{1, 3}, Samples: []writev2.Sample{{Value: 1, Timestamp: ts, StartTimestamp: ts - 4_000_000}}},
		},
	}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if resp := post(t, r.URL+WritePath, v2Type, b); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("2.0 write: %s", resp.Status)
	}
	got, err := r.Series(0, ts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Sample{
		`{__name__="near_total"}`: {{ts - 3_000_000, 0}, {ts, 1}},
		`{__name__="far_total"}`:  {{ts, 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}
