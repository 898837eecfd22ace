package liar

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// post sends body, snappy-compressed, to url as contentType and drains the answer.
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

// indexAnswer is an index endpoint's answer, its data kept as JSON.
type indexAnswer struct {
	Status string          `json:"status"`
	Data   json.RawMessage `json:"data"`
}

// ask sends form to base+path as a POST form and decodes the answer.
func ask(t *testing.T, base, path string, form url.Values) (int, indexAnswer) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var a indexAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("POST %s: %v in %q", path, err, b)
	}
	return resp.StatusCode, a
}
