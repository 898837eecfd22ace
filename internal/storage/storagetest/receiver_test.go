package storagetest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

func start(t *testing.T, opts Options) *Receiver {
	t.Helper()
	r, err := Start(t.TempDir(), slog.New(slog.DiscardHandler), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

func post(t *testing.T, url, contentType string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(snappy.Encode(nil, body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Content-Encoding", "snappy")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

const v2Type = "application/x-protobuf;proto=io.prometheus.write.v2.Request"

// v2Request is two samples of one counter with metadata.
func v2Request(t *testing.T) []byte {
	t.Helper()
	req := writev2.Request{
		Symbols: []string{"", "__name__", "x_total", "job", "j", "help text"},
		Timeseries: []writev2.TimeSeries{{
			LabelsRefs: []uint32{1, 2, 3, 4},
			Samples:    []writev2.Sample{{Value: 1, Timestamp: 1000}, {Value: 2, Timestamp: 2000}},
			Metadata:   writev2.Metadata{Type: writev2.Metadata_METRIC_TYPE_COUNTER, HelpRef: 5},
		}},
	}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReceiverStoresV1AndV2AndCounts(t *testing.T) {
	t.Parallel()
	r := start(t, Options{})
	v1 := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "__name__", Value: "up"}, {Name: "job", Value: "j"}},
		Samples: []prompb.Sample{{Value: 1, Timestamp: 1000}},
	}}}
	b, err := v1.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if resp := post(t, r.URL+WritePath, "application/x-protobuf", b); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("1.0 write: %s", resp.Status)
	}
	resp := post(t, r.URL+WritePath, v2Type, v2Request(t))
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "2" {
		t.Fatalf("2.0 write: %s, headers %v", resp.Status, resp.Header)
	}
	n, err := r.Appended()
	if err != nil || n != 3 {
		t.Errorf("Appended() = %d, %v; want 3", n, err)
	}
	got, err := r.Series(0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Sample{
		`{__name__="up", job="j"}`:      {{1000, 1}},
		`{__name__="x_total", job="j"}`: {{1000, 1}, {2000, 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}

	// The PromQL API answers as Prometheus does.
	qr, err := http.Get(r.URL + "/api/v1/query?query=x_total[5s]&time=2.5")
	if err != nil {
		t.Fatal(err)
	}
	defer qr.Body.Close()
	var body struct {
		Status string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Values [][2]any
			}
		}
	}
	if err := json.NewDecoder(qr.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Status != "success" || body.Data.ResultType != "matrix" || len(body.Data.Result) != 1 ||
		len(body.Data.Result[0].Values) != 2 || body.Data.Result[0].Values[1][1] != "2" {
		t.Errorf("query answer %+v", body)
	}
}

func TestReceiverV1OnlyRefuses2(t *testing.T) {
	t.Parallel()
	r := start(t, Options{V1Only: true})
	if resp := post(t, r.URL+WritePath, v2Type, v2Request(t)); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("2.0 write to a 1.0-only receiver: %s, want 415", resp.Status)
	}
}
