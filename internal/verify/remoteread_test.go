package verify

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// fakeRemoteRead serves Prometheus remote read (SAMPLES) over a fake storage's samples, as
// InfluxDB 1.x and Prometheus do: one query a request, equality matchers, raw samples in
// [start, end], staleness markers as stored.
type fakeRemoteRead struct {
	t *testing.T
	p *fakeProm
}

func (f *fakeRemoteRead) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, want := range map[string]string{"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf", "X-Prometheus-Remote-Read-Version": "0.1.0"} {
		if got := r.Header.Get(k); got != want {
			f.t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	body, _ := io.ReadAll(r.Body)
	data, err := snappy.Decode(nil, body)
	var req prompb.ReadRequest
	if err == nil {
		err = req.Unmarshal(data)
	}
	if err != nil || len(req.Queries) != 1 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	q := req.Queries[0]
	var sel []label
	for _, m := range q.Matchers {
		if m.Type != prompb.LabelMatcher_EQ {
			f.t.Errorf("matcher %v, want equality", m)
		}
		sel = append(sel, label{Name: m.Name, Value: m.Value})
	}
	res := &prompb.QueryResult{}
	for _, key := range f.p.match(sel) {
		ts := &prompb.TimeSeries{}
		for _, l := range f.p.labels[key] {
			ts.Labels = append(ts.Labels, prompb.Label{Name: l.Name, Value: l.Value})
		}
		for _, s := range f.p.series[key] {
			if s.t >= q.StartTimestampMs && s.t <= q.EndTimestampMs {
				ts.Samples = append(ts.Samples, prompb.Sample{Timestamp: s.t, Value: s.v})
			}
		}
		if len(ts.Samples) > 0 {
			res.Timeseries = append(res.Timeseries, ts)
		}
	}
	out, err := (&prompb.ReadResponse{Results: []*prompb.QueryResult{res}}).Marshal()
	if err != nil {
		f.t.Error(err)
	}
	w.Header().Set("Content-Encoding", "snappy")
	_, _ = w.Write(snappy.Encode(nil, out))
}

// dropNaN stores what InfluxDB 1.x stores of a remote write: every sample but NaN ones, so
// staleness markers are lost too.
type dropNaN struct{ dst *fakeProm }

func (d dropNaN) Append(ls []workload.Label, t int64, v float64) {
	if !math.IsNaN(v) {
		d.dst.Append(ls, t, v)
	}
}

// startRemoteRead serves p over remote read only: the query API answers 404.
func startRemoteRead(t *testing.T, p *fakeProm, name string) Target {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/api/v1/prom/read", &fakeRemoteRead{t: t, p: p})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	u := srv.URL + "/api/v1/prom/read?db=x&p=s3cret"
	client, err := storage.NewClient(name, config.Storage{RemoteReadURL: u}, storage.Read, 2)
	if err != nil {
		t.Fatal(err)
	}
	return Target{Name: name, RemoteReadURL: u, Client: client}
}

// A storage without the query API is read back through remote read: every sample checked
// raw, a NaN it dropped counted as NaN altered, a staleness marker it did not store counted
// as such; no probes and no rules, which need the query API.
func TestReadBackThroughRemoteRead(t *testing.T) {
	wl := newTestWorkload()
	w := testWindow(wl)
	influx := newFakeProm()
	writeAll(wl, w, dropNaN{influx})
	rules := []query.NamedExpr{{Name: "raw", Expr: `{__name__="fake_counter_total"}`}}
	out := run(t, wl, testConfig(1200, time.Second), []Target{
		startRemoteRead(t, influx, "influx"), startRemoteRead(t, stored(wl), "raw"), startFake(t, stored(wl), "prom"),
	}, rules)

	type got struct {
		Via                                                   string
		Checked, Missing, NaNAltered, Markers, MarkersMissing int64
		Exact                                                 bool
		Probes, RuleDiffs                                     int
	}
	of := func(v *results.Verify) got {
		return got{v.ReadBackVia, v.CheckedSamples, v.MissingSamples, v.NaNAltered, v.CheckedStaleMarkers, v.MissingStaleMarkers, v.Exact(), len(v.Probes), len(v.RuleDiffs)}
	}
	// 4 targets × 5 series × 60 scrapes; series 1 of each target is NaN (4 × 60); targets 0
	// and 2 change revision twice: 2 × 2 × 5 markers.
	want := map[string]got{
		"influx": {Via: "remoteRead", Checked: 1200, NaNAltered: 240, Markers: 20, MarkersMissing: 20},
		"raw":    {Via: "remoteRead", Checked: 1200, Markers: 20, Exact: true},
		"prom":   {Via: "queryAPI", Checked: 1200, Markers: 20, Exact: true, Probes: 9},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, of(out[name])); diff != "" {
			t.Errorf("%s (-want +got):\n%s\nerrors %v examples %v", name, diff, out[name].Errors, out[name].Examples)
		}
	}
	if v := out["influx"].Verdict(); !strings.Contains(v, "240 NaN dropped or altered") || !strings.Contains(v, "20 of 20 staleness markers not stored") {
		t.Errorf("verdict %q", v)
	}
	if out["influx"].RulesNotCompared != nil || out["prom"].RuleDiffs == nil {
		t.Errorf("rules: influx not compared %v, prom diffs %v", out["influx"].RulesNotCompared, out["prom"].RuleDiffs)
	}
}

// A failed remote read is counted, its samples unchecked, and its error carries neither the
// URL nor its password.
func TestRemoteReadFailureHidesSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "database not found: x", http.StatusNotFound)
	}))
	defer srv.Close()
	u := srv.URL + "/api/v1/prom/read?db=x&p=s3cret"
	client, err := storage.NewClient("influx", config.Storage{}, storage.Read, 1)
	if err != nil {
		t.Fatal(err)
	}
	wl := newTestWorkload()
	res := run(t, wl, testConfig(100, time.Second), []Target{{Name: "influx", RemoteReadURL: u, Client: client}}, nil)["influx"]
	if res.ReadErrors == 0 || res.UncheckedSamples == 0 || res.CheckedSamples != 0 || res.Exact() {
		t.Errorf("read errors %d unchecked %d checked %d", res.ReadErrors, res.UncheckedSamples, res.CheckedSamples)
	}
	for _, e := range res.Errors {
		if !strings.Contains(e, "http 404: database not found") || strings.Contains(e, "s3cret") || strings.Contains(e, "127.0.0.1") {
			t.Errorf("error %q", e)
		}
	}
	srv.Close()
	res = run(t, wl, testConfig(100, time.Second), []Target{{Name: "influx", RemoteReadURL: u, Client: client}}, nil)["influx"]
	if all := strings.Join(res.Errors, "\n"); strings.Contains(all, "s3cret") || !strings.Contains(all, "connection refused") {
		t.Errorf("errors %v", res.Errors)
	}
}

// A storage whose readURL answers 404 to everything gets no probe counted as answered (a
// 404 is not the type error "sum(time())" must give), and a rule differs only where two
// storages answered it.
func TestNoAnswerIsNoAnswer(t *testing.T) {
	wl := newTestWorkload()
	rules := []query.NamedExpr{{Name: "raw", Expr: `{__name__="fake_counter_total"}`}}
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	client, err := storage.NewClient("nope", config.Storage{}, storage.Read, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, wl, testConfig(100, time.Second), []Target{startFake(t, stored(wl), "prom"), {Name: "nope", ReadURL: srv.URL, Client: client}}, rules)
	for _, p := range out["nope"].Probes {
		if p.Same || !strings.HasPrefix(p.Got, "failed: http_404") {
			t.Errorf("probe %q: same %v, got %q", p.Name, p.Same, p.Got)
		}
	}
	if len(out["nope"].Probes) == 0 {
		t.Error("no probes run")
	}
	if len(out["prom"].RuleDiffs) != 0 || len(out["nope"].RuleDiffs) != 0 {
		t.Errorf("rule diffs with one storage answering: prom %v, nope %v", out["prom"].RuleDiffs, out["nope"].RuleDiffs)
	}
	// With a second storage answering, the one that failed the rule lists it.
	out = run(t, wl, testConfig(100, time.Second), []Target{startFake(t, stored(wl), "prom"), startFake(t, stored(wl), "prom2"), {Name: "nope", ReadURL: srv.URL, Client: client}}, rules)
	if d := out["nope"].RuleDiffs; len(d) != 1 || !strings.HasPrefix(d[0].Detail, "error: http_404") {
		t.Errorf("nope's rule diffs %v", d)
	}
	if len(out["prom"].RuleDiffs) != 0 || len(out["prom2"].RuleDiffs) != 0 {
		t.Errorf("answering storages differ: %v %v", out["prom"].RuleDiffs, out["prom2"].RuleDiffs)
	}
}

// FuzzDecodeReadResponse feeds the remote-read decoder any body: no panic, and on success a
// matrix whose series carry sorted labels.
func FuzzDecodeReadResponse(f *testing.F) {
	one, _ := (&prompb.ReadResponse{Results: []*prompb.QueryResult{{Timeseries: []*prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "job", Value: "a"}, {Name: "__name__", Value: "up"}},
		Samples: []prompb.Sample{{Timestamp: 1, Value: 1}, {Timestamp: 2, Value: math.NaN()}},
	}}}}}).Marshal()
	empty, _ := (&prompb.ReadResponse{Results: []*prompb.QueryResult{{}}}).Marshal()
	two, _ := (&prompb.ReadResponse{Results: []*prompb.QueryResult{{}, {}}}).Marshal()
	for _, b := range [][]byte{one, empty, two, []byte("not protobuf")} {
		f.Add(snappy.Encode(nil, b))
	}
	f.Add([]byte("not snappy"))
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := decodeReadResponse(body)
		if err != nil {
			return
		}
		if res.Type != "matrix" {
			t.Fatalf("type %q", res.Type)
		}
		for _, s := range res.Series {
			for i := 1; i < len(s.Labels); i++ {
				if s.Labels[i-1].Name >= s.Labels[i].Name {
					t.Fatalf("labels not sorted: %v", s.Labels)
				}
			}
		}
	})
}
