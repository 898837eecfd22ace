package promreceiver

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/prompb"
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
