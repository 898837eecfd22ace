package storagetest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
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

// indexAnswer is an index endpoint's answer, its data kept as JSON.
type indexAnswer struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Data      json.RawMessage `json:"data"`
	Warnings  []string        `json:"warnings"`
}

// ask sends form to base+path by GET (in the query string) or POST (as a form) and decodes the
// answer.
func ask(t *testing.T, base, method, path string, form url.Values) (int, indexAnswer) {
	t.Helper()
	u, body := base+path, io.Reader(nil)
	if method == http.MethodGet {
		u += "?" + form.Encode()
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
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
	if resp.StatusCode != http.StatusMethodNotAllowed {
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s %s: %v in %q", method, path, err, b)
		}
	}
	return resp.StatusCode, a
}

// TestReceiverIndex writes three series, two at 1 s and one at 100 s, and asks the index for
// them as Prometheus' HTTP API is asked: /api/v1/series finds them by any of several match[]
// within start and end, each once and sorted, cut to limit with a warning; /api/v1/labels and
// /api/v1/label/<name>/values list names and values the same way (the head answers for all its
// series when the range overlaps it, as in Prometheus: only a range past its data is empty);
// bad input is 400 bad_data.
func TestReceiverIndex(t *testing.T) {
	t.Parallel()
	r := start(t, Options{})
	series := func(t int64, ls ...string) prompb.TimeSeries {
		s := prompb.TimeSeries{Samples: []prompb.Sample{{Value: 1, Timestamp: t}}}
		for i := 0; i < len(ls); i += 2 {
			s.Labels = append(s.Labels, prompb.Label{Name: ls[i], Value: ls[i+1]})
		}
		return s
	}
	wr := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		series(1000, "__name__", "up", "instance", "x", "job", "a"),
		series(1000, "__name__", "up", "instance", "y", "job", "b"),
		series(100_000, "__name__", "other", "job", "a", "zone", "z"),
	}}
	b, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if resp := post(t, r.URL+WritePath, "application/x-protobuf", b); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("write: %s", resp.Status)
	}
	const (
		upA   = `{"__name__":"up","instance":"x","job":"a"}`
		upB   = `{"__name__":"up","instance":"y","job":"b"}`
		other = `{"__name__":"other","job":"a","zone":"z"}`
	)
	for _, c := range []struct {
		name, method, path string
		form               url.Values
		data               string
		warnings           []string
	}{
		{"series by name", "GET", "/api/v1/series", url.Values{"match[]": {"up"}}, "[" + upA + "," + upB + "]", nil},
		{"series by two selectors posted", "POST", "/api/v1/series", url.Values{"match[]": {`up{job="a"}`, "other"}}, "[" + other + "," + upA + "]", nil},
		{"series matched twice once", "GET", "/api/v1/series", url.Values{"match[]": {"up", `{job="a"}`}}, "[" + other + "," + upA + "," + upB + "]", nil},
		{"series in the range", "GET", "/api/v1/series", url.Values{"match[]": {`{job="a"}`}, "start": {"50"}, "end": {"200"}}, "[" + other + "]", nil},
		{"series before the range", "POST", "/api/v1/series", url.Values{"match[]": {`{job="a"}`}, "start": {"0"}, "end": {"1970-01-01T00:00:02Z"}}, "[" + upA + "]", nil},
		{"series none", "GET", "/api/v1/series", url.Values{"match[]": {"up"}, "start": {"101"}}, "[]", nil},
		{"series limit", "GET", "/api/v1/series", url.Values{"match[]": {`{job=~"a|b"}`}, "limit": {"2"}}, "[" + other + "," + upA + "]", []string{"results truncated due to limit"}},
		{"labels of all", "GET", "/api/v1/labels", nil, `["__name__","instance","job","zone"]`, nil},
		{"labels matched", "POST", "/api/v1/labels", url.Values{"match[]": {"up"}}, `["__name__","instance","job"]`, nil},
		{"labels of two selectors", "POST", "/api/v1/labels", url.Values{"match[]": {`up{job="b"}`, "other"}}, `["__name__","instance","job","zone"]`, nil},
		{"labels after the range", "GET", "/api/v1/labels", url.Values{"start": {"101"}}, `[]`, nil},
		{"labels matched after the range", "POST", "/api/v1/labels", url.Values{"match[]": {"up"}, "start": {"101"}}, `[]`, nil},
		{"values", "GET", "/api/v1/label/job/values", nil, `["a","b"]`, nil},
		{"values escaped name", "GET", "/api/v1/label/U__job/values", nil, `["a","b"]`, nil},
		{"values matched", "GET", "/api/v1/label/instance/values", url.Values{"match[]": {`up{job="b"}`, "other"}}, `["y"]`, nil},
		{"values before the range", "GET", "/api/v1/label/job/values", url.Values{"end": {"0.5"}}, `[]`, nil},
		{"values limit", "GET", "/api/v1/label/__name__/values", url.Values{"limit": {"1"}}, `["other"]`, []string{"results truncated due to limit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, a := ask(t, r.URL, c.method, c.path, c.form)
			if status != http.StatusOK || a.Status != "success" {
				t.Fatalf("status %d %+v", status, a)
			}
			if diff := cmp.Diff(c.data, string(a.Data)); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.warnings, a.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
	for _, c := range []struct {
		name, method, path string
		form               url.Values
		err                string
	}{
		{"series without match", "GET", "/api/v1/series", nil, "no match[] parameter provided"},
		{"series bad selector", "POST", "/api/v1/series", url.Values{"match[]": {"up", `up{job=`}}, `invalid parameter "match[]"`},
		{"series empty selector", "GET", "/api/v1/series", url.Values{"match[]": {`{job=~".*"}`}}, "match[] must contain at least one non-empty matcher"},
		{"series bad start", "GET", "/api/v1/series", url.Values{"match[]": {"up"}, "start": {"yesterday"}}, `invalid parameter "start"`},
		{"series bad limit", "GET", "/api/v1/series", url.Values{"match[]": {"up"}, "limit": {"-1"}}, `invalid parameter "limit": limit must be non-negative`},
		{"labels bad end", "POST", "/api/v1/labels", url.Values{"end": {"x"}}, `invalid parameter "end"`},
		{"labels bad selector", "GET", "/api/v1/labels", url.Values{"match[]": {`{job="a"`}}, `invalid parameter "match[]"`},
		{"values bad selector", "GET", "/api/v1/label/job/values", url.Values{"match[]": {`up{job!~"("}`}}, `invalid parameter "match[]"`},
		{"values bad start", "GET", "/api/v1/label/job/values", url.Values{"start": {"1e400"}}, `invalid parameter "start"`},
		{"values bad name", "GET", "/api/v1/label/%FF/values", nil, "invalid label name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, a := ask(t, r.URL, c.method, c.path, c.form)
			if status != http.StatusBadRequest || a.Status != "error" || a.ErrorType != "bad_data" || !strings.Contains(a.Error, c.err) {
				t.Errorf("status %d %+v, want 400 bad_data %q", status, a, c.err)
			}
		})
	}
	// As Prometheus' router: a label's values are asked by GET only.
	if status, _ := ask(t, r.URL, http.MethodPost, "/api/v1/label/job/values", nil); status != http.StatusMethodNotAllowed {
		t.Errorf("POST label values: status %d, want 405", status)
	}
}
