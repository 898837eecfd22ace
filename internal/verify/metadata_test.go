package verify

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// metaWorkload is fakeWorkload with a profile of a counter, a summary and an untyped series.
type metaWorkload struct{ fakeWorkload }

var metaProfile = []workload.Series{
	{Name: "c_seconds_total", Type: "counter", Help: "C.", Unit: "seconds"},
	{Name: "s", Type: "summary", Labels: []workload.Label{{Name: "quantile", Value: "0.5"}}, Help: "S."},
	{Name: "s_count", Type: "summary", Help: "S."},
	{Name: "u", Type: "untyped", Help: "U."},
}

func (metaWorkload) Series(s int) workload.Series { return metaProfile[s] }

// TestMetadataVerdicts: each storage's families are counted kept, changed or missing against
// what /api/v1/metadata answers; a 1.0 storage is checked only with sendMetadata.
func TestMetadataVerdicts(t *testing.T) {
	answers := map[string]string{
		"kept":    `{"c_seconds_total":[{"type":"counter","help":"C.","unit":"seconds"}],"s":[{"type":"summary","help":"S.","unit":""}],"u":[{"type":"unknown","help":"U.","unit":""}]}`,
		"changed": `{"c_seconds_total":[{"type":"counter","help":"C.","unit":""}],"s":[{"type":"summary","help":"S.","unit":""}]}`,
		"dropped": `{}`,
		// A 2.0 receiver sent the series without their metadata keeps them as unknown.
		"unknown": `{"c_seconds_total":[{"type":"unknown","help":"","unit":""}],"s":[{"type":"unknown","help":"","unit":""}],"s_count":[{"type":"unknown","help":"","unit":""}],"u":[{"type":"unknown","help":"","unit":""}]}`,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{storage}/api/v1/metadata", func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.PathValue("storage")]
		if !ok {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, `{"status":"success","data":`+a+`}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var targets []Target
	for _, name := range []string{"kept", "changed", "dropped", "unknown", "broken", "rw1"} {
		client, err := storage.NewClient(name, config.Storage{}, storage.Read, 1)
		if err != nil {
			t.Fatal(err)
		}
		proto := config.ProtocolRW2
		if name == "rw1" {
			proto = config.ProtocolRW1
		}
		targets = append(targets, Target{Name: name, ReadURL: srv.URL + "/" + name, Client: client, Protocol: proto})
	}
	cfg := config.Default()
	wl := &metaWorkload{fakeWorkload{targets: 1, series: len(metaProfile), interval: 1000}}
	got := NewFor(&cfg, wl, targets, nil, slog.New(slog.DiscardHandler)).Metadata(t.Context(), false)
	for _, r := range got {
		r.Errors = nil // the broken storage's is checked by its verdict
	}
	want := map[string]*results.Metadata{
		"kept": {Families: 3, Kept: 3, Verdict: "kept"},
		"changed": {Families: 3, Kept: 1, Changed: 1, Missing: 1, Verdict: "changed", Examples: []string{
			`c_seconds_total: got type=counter help="C." unit="", sent type=counter help="C." unit="seconds"`,
			`u: missing (sent type=unknown help="U." unit="")`,
		}},
		"dropped": {Families: 3, Missing: 3, Verdict: "dropped", Examples: []string{
			`c_seconds_total: missing (sent type=counter help="C." unit="seconds")`,
			`s: missing (sent type=summary help="S." unit="")`,
			`u: missing (sent type=unknown help="U." unit="")`,
		}},
		"unknown": {Families: 3, Missing: 3, Verdict: "dropped", Examples: []string{
			`c_seconds_total: missing: answered type unknown, no help or unit (sent type=counter help="C." unit="seconds")`,
			`s: missing: answered type unknown, no help or unit (sent type=summary help="S." unit="")`,
			`u: missing: answered type unknown, no help or unit (sent type=unknown help="U." unit="")`,
		}},
		"broken": {Families: 3, Verdict: "error"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := NewFor(&cfg, wl, targets[5:], nil, slog.New(slog.DiscardHandler)).Metadata(t.Context(), true); got["rw1"] == nil || got["rw1"].Verdict != "error" {
		t.Errorf("rw1 with sendMetadata: %+v, want read back (and an error from the fake)", got["rw1"])
	}
}

// TestCompareCreated: a wanted series is kept when the answer has a 0 at the start time for
// it (a url_replica copy counts), missing otherwise (no point, another value, another time).
func TestCompareCreated(t *testing.T) {
	key := func(name string) string {
		return keyOf([]workload.Label{{Name: "__name__", Value: name}, {Name: "instance", Value: "h:9100"}})
	}
	want := map[string]bool{key("a_total"): true, key("b_total"): true, key("c_total"): true, key("d_total"): true}
	metric := func(name string) map[string]string {
		return map[string]string{"__name__": name, "instance": "h:9100", "url_replica": "0"}
	}
	got := &query.Result{Series: []query.Series{
		{Metric: metric("a_total"), Points: []query.Point{{T: 5000, V: 0}}},
		{Metric: metric("b_total"), Points: []query.Point{{T: 5000, V: 1}}},
		{Metric: metric("c_total"), Points: []query.Point{{T: 4999, V: 0}}},
	}}
	res := &results.Created{}
	compareCreated(want, 5000, got, res)
	if res.Checked != 4 || res.Kept != 1 || res.Missing != 3 || len(res.Examples) != 3 || res.CreatedVerdict() != "partial" {
		t.Errorf("%+v: want 4 checked, a_total kept, 3 missing with examples, partial", res)
	}
}
