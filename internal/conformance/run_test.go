package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// Prometheus' own receiver and engine pass every eval of operators.test, its 72 over native
// histograms included, and of trig_functions.test, but for the block a proxy in front of it refuses: trig_functions.test's
// (its series are named trig; operators.test's trigx and trigy pass). Its evals fail as "data
// rejected" with the answer quoted (18: the file's last eval, pi(), reads no data), and
// everything else goes on. (The whole suite runs in e2e/TestConformanceReference.)
func TestRunAgainstReceiver(t *testing.T) {
	all, err := Builtin() // before the receiver parses anything: Builtin sets the parser's features
	if err != nil {
		t.Fatal(err)
	}
	s := &Suite{}
	for _, f := range all.Files {
		if f.Name == "operators.test" || f.Name == "trig_functions.test" {
			s.Files = append(s.Files, f)
		}
	}
	rcv := startReceiver(t)
	target, err := url.Parse(rcv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == storagetest.WritePath {
			body, _ := io.ReadAll(r.Body)
			raw, err := s2.Decode(nil, body)
			if err == nil && bytes.Contains(raw, []byte("\x12\x04trig")) { // a label value "trig"
				http.Error(w, "series trig not welcome here", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	st := config.Storage{WriteURL: srv.URL + storagetest.WritePath, ReadURL: srv.URL + "/"}
	out, err := Run(t.Context(), s, "reference", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if out.Total() != 213+19 || out.Passed != 213+1 || out.Failed != 18 || out.NotApplicable != 0 {
		t.Errorf("passed %d, failed %d, n/a %d: want 214, 18 (trig_functions.test) and 0", out.Passed, out.Failed, out.NotApplicable)
	}
	if diff := cmp.Diff(map[string]int{results.KindDataRejected: 18}, out.Kinds); diff != "" {
		t.Errorf("failure kinds (-want +got):\n%s", diff)
	}
	for _, f := range out.Failures {
		if f.File != "trig_functions.test" || !strings.Contains(f.Got, "answered 400: series trig not welcome here") {
			t.Errorf("failure %+v: want trig_functions.test's, quoting the answer", f)
		}
	}
	if len(out.RejectedBlocks) != 1 || out.RejectedBlocks[0].File != "trig_functions.test" {
		t.Errorf("rejected blocks %+v, want trig_functions.test's", out.RejectedBlocks)
	}
	for _, f := range out.Files {
		if f.File == "trig_functions.test" && (f.Failed != 18 || f.Passed != 1) {
			t.Errorf("trig_functions.test: %+v", f)
		}
	}
}

// A storage that never shows the samples it acknowledged cannot be tested: Run says so.
func TestRunDataNeverVisible(t *testing.T) {
	s, err := ParseFile("x.test", "load 1m\n  a 1 2 3\n\neval instant at 1m a\n  a 2\n")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/write" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	t.Cleanup(srv.Close)
	st := config.Storage{WriteURL: srv.URL + "/api/v1/write", ReadURL: srv.URL + "/"}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err = Run(ctx, &Suite{Files: []*File{s}}, "blackhole", st, time.Now(), slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), `the samples written are not visible to {__name__="a"}`) {
		t.Errorf("error %v, want the samples not visible", err)
	}
}

// An eval a storage rejects is a failure of kind "rejected" with the storage's error; when the
// eval needs a feature flag, the expectation names it, so that a storage without the flag
// shows as such.
func TestRunRejectedNamesTheFeature(t *testing.T) {
	f, err := ParseFile("x.test", "eval instant at 0 sort_by_label(vector(1), \"x\")\n  {} 1\n\neval instant at 0 vector(1)\n  {} 1\n\neval_fail instant at 0 1 + \"a\"\n")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:1: parse error: unknown function with name \"sort_by_label\""}`)
	}))
	t.Cleanup(srv.Close)
	st := config.Storage{WriteURL: srv.URL + "/api/v1/write", ReadURL: srv.URL + "/"}
	out, err := Run(t.Context(), &Suite{Files: []*File{f}}, "old", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	want := []results.ConformanceFailure{
		{
			File: "x.test", Line: 1, Expr: `sort_by_label(vector(1), "x")`, Kind: results.KindRejected,
			Expected: "{} 1 (needs --enable-feature=promql-experimental-functions)",
			Got:      `1:1: parse error: unknown function with name "sort_by_label"`,
		},
		{
			File: "x.test", Line: 4, Expr: `vector(1)`, Kind: results.KindRejected, Expected: "{} 1",
			Got: `1:1: parse error: unknown function with name "sort_by_label"`,
		},
	}
	if diff := cmp.Diff(want, out.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if out.Passed != 1 {
		t.Errorf("passed %d: want the eval_fail, answered with the engine's error", out.Passed)
	}
}

// An eval that expects an error is not passed by a storage that does not answer.
func TestRunNoAnswerIsNoError(t *testing.T) {
	f, err := ParseFile("x.test", "eval_fail instant at 0 1 + \"a\"\n")
	if err != nil {
		t.Fatal(err)
	}
	st := config.Storage{WriteURL: "http://127.0.0.1:1/api/v1/write", ReadURL: "http://127.0.0.1:1/"}
	out, err := Run(t.Context(), &Suite{Files: []*File{f}}, "dead", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if out.Passed != 0 || out.Failed != 1 || out.Failures[0].Kind != results.KindRejected {
		t.Errorf("passed %d, failed %d (%+v): want the eval failed, rejected", out.Passed, out.Failed, out.Failures)
	}
}

// A storage that refuses native histograms and one that acknowledges and drops them
// (VictoriaMetrics 1.79) get the same figures: operators.test's 141 float evals pass on both;
// of its 72 that read native histograms, 3 are answered right without them (line 292,
// `{job="app-server"} == 80`, whose histogram series compares to nothing anyway, and the two
// `and on() (vector(-1) == 1)`, which are empty), and 69 fail, as "data rejected" for the
// first and "data dropped after ack" for the second, in the pass rate; nothing is "not
// applicable". (Before, the dropper had the 72 not applicable and a pass rate of 141/141,
// the refuser 141/213.) The per-feature figures say where: every float eval passes.
func TestRunWithoutNativeHistograms(t *testing.T) {
	s := builtinFiles(t, "operators.test")
	for _, refuse := range []bool{true, false} {
		srv := httptest.NewServer(writeProxy(t, startReceiver(t).URL, func(req *prompb.WriteRequest) error {
			n := 0
			for i := range req.Timeseries {
				n += len(req.Timeseries[i].Histograms)
				req.Timeseries[i].Histograms = nil
			}
			if n > 0 && refuse {
				return errors.New("no histograms here")
			}
			return nil
		}))
		t.Cleanup(srv.Close)
		st := config.Storage{WriteURL: srv.URL + storagetest.WritePath, ReadURL: srv.URL + "/"}
		out, err := Run(t.Context(), s, "nonative", st, time.Now(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		kind := results.KindDataDropped
		if refuse {
			kind = results.KindDataRejected
			if len(out.RejectedBlocks) == 0 || !strings.Contains(out.RejectedBlocks[0].Answer, "native histograms: remote write answered 400: no histograms here") {
				t.Errorf("refused: blocks %+v", out.RejectedBlocks)
			}
		}
		if diff := cmp.Diff(map[string]int{kind: 69}, out.Kinds); diff != "" {
			t.Errorf("refuse %v: failures by kind (-want +got):\n%s", refuse, diff)
		}
		if out.Passed != 144 || out.Failed != 69 || out.NotApplicable != 0 || len(out.NotApplicableReasons) != 0 {
			t.Errorf("refuse %v: passed %d, failed %d, n/a %d (%v); want 144, 69, 0", refuse, out.Passed, out.Failed, out.NotApplicable, out.NotApplicableReasons)
		}
		want := []results.ConformanceCount{
			{Name: results.FeatureFloats, Passed: 141},
			{Name: results.FeatureNative, Passed: 3, Failed: 69},
			{Name: results.FeatureExperimental},
		}
		if diff := cmp.Diff(want, out.Features); diff != "" {
			t.Errorf("refuse %v: per feature (-want +got):\n%s", refuse, diff)
		}
	}
}

// A storage that adds a label to every series it stores (Thanos receive's
// tenant_id="default-tenant") answers operators.test as the reference does once the label is
// taken off its answers: the label is found in its answer to the written data, named once,
// and the 98 evals whose answer held it are counted. One eval fails, rightly: with the label
// added, `http_requests_total AND IGNORING (group, instance, job) vector(1)` matches nothing
// (vector(1) has no tenant_id), an answer the added label changes, not only its labels.
func TestRunAddedLabel(t *testing.T) {
	s := builtinFiles(t, "operators.test")
	srv := httptest.NewServer(writeProxy(t, startReceiver(t).URL, func(req *prompb.WriteRequest) error {
		for i := range req.Timeseries {
			ts := &req.Timeseries[i]
			ts.Labels = append(ts.Labels, prompb.Label{Name: "tenant_id", Value: "default-tenant"})
			slices.SortFunc(ts.Labels, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
		}
		return nil
	}))
	t.Cleanup(srv.Close)
	st := config.Storage{WriteURL: srv.URL + storagetest.WritePath, ReadURL: srv.URL + "/"}
	out, err := Run(t.Context(), s, "tenant", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out.Failures {
		if f.Line != 243 {
			t.Errorf("%s:%d %s: %s\n  expected %s\n  got      %s", f.File, f.Line, f.Expr, f.Kind, f.Expected, f.Got)
		}
	}
	if out.Passed != 212 || out.Failed != 1 || out.NotApplicable != 0 {
		t.Errorf("passed %d, failed %d, n/a %d: want 212 passed, 1 failed", out.Passed, out.Failed, out.NotApplicable)
	}
	if diff := cmp.Diff(map[string]string{"tenant_id": "default-tenant"}, out.AddedLabels); diff != "" {
		t.Errorf("added labels (-want +got):\n%s", diff)
	}
	if out.PassedWithAddedLabels != 98 {
		t.Errorf("%d passed with the added label taken off, want 98 (those that aggregate it away are not counted)", out.PassedWithAddedLabels)
	}
}

// A storage that shows native histograms a while after the floats written with them is
// waited for: operators.test passes whole on one whose answers hold no native histogram
// until two seconds after the last were acknowledged. (Before, it was asked once and its 72
// native histogram evals were not applicable.)
func TestRunHistogramsVisibleLater(t *testing.T) {
	s := builtinFiles(t, "operators.test")
	var (
		mu   sync.Mutex // guards last
		last time.Time  // when native histograms were last written
	)
	proxy := writeProxy(t, startReceiver(t).URL, func(req *prompb.WriteRequest) error {
		if slices.ContainsFunc(req.Timeseries, func(ts prompb.TimeSeries) bool { return len(ts.Histograms) > 0 }) {
			mu.Lock()
			defer mu.Unlock()
			last = time.Now()
		}
		return nil
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hide := time.Since(last) < 2*time.Second
		mu.Unlock()
		if r.URL.Path == storagetest.WritePath || !hide {
			proxy.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		var answer struct {
			Status string `json:"status"`
			Data   struct {
				ResultType string           `json:"resultType"`
				Result     []map[string]any `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || answer.Status != "success" {
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		answer.Data.Result = slices.DeleteFunc(answer.Data.Result, func(s map[string]any) bool {
			delete(s, "histogram")
			delete(s, "histograms")
			return s["value"] == nil && s["values"] == nil
		})
		if err := json.NewEncoder(w).Encode(answer); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	st := config.Storage{WriteURL: srv.URL + storagetest.WritePath, ReadURL: srv.URL + "/"}
	out, err := Run(t.Context(), s, "later", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if out.Passed != 213 || out.Failed != 0 || out.NotApplicable != 0 {
		t.Errorf("passed %d, failed %d (%v), n/a %d (%v): want all 213 passed", out.Passed, out.Failed, out.Kinds, out.NotApplicable, out.NotApplicableReasons)
	}
}

// builtinFiles is the embedded suite with the named files only.
func builtinFiles(t *testing.T, names ...string) *Suite {
	t.Helper()
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s := &Suite{}
	for _, f := range all.Files {
		if slices.Contains(names, f.Name) {
			s.Files = append(s.Files, f)
		}
	}
	return s
}

// writeProxy proxies to a receiver, passing remote write 1.0 requests on as change leaves
// them, or refusing them with its error (400).
func writeProxy(t *testing.T, to string, change func(*prompb.WriteRequest) error) http.Handler {
	target, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == storagetest.WritePath {
			body, _ := io.ReadAll(r.Body)
			raw, err := s2.Decode(nil, body)
			var req prompb.WriteRequest
			if err == nil {
				err = req.Unmarshal(raw)
			}
			if err == nil {
				err = change(&req)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			raw, err = req.Marshal()
			if err != nil {
				t.Error(err)
			}
			body = s2.EncodeSnappy(nil, raw)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		proxy.ServeHTTP(w, r)
	})
}

// startReceiver starts Prometheus' own receiver and engine, as the runner's (delayed name
// removal on), closed when the test ends.
func startReceiver(t *testing.T) *storagetest.Receiver {
	t.Helper()
	return storagetest.StartT(t, storagetest.Options{DelayedNameRemoval: true})
}
