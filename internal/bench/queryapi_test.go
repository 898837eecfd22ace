package bench

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// The check before the start: a storage that answers the instant query `1` has the query API;
// one that answers 404 (InfluxDB 1.x at its root), HTML or 401 has not, and gets one warning
// that names it, its readURL redacted, what it answered and what to set; a 503 is asked again;
// one that cannot be reached keeps its read load.
func TestCheckQueryAPIs(t *testing.T) {
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" || r.FormValue("query") != "1" {
			t.Errorf("check asked %s %q", r.URL.Path, r.FormValue("query"))
		}
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}`)
	}))
	defer prom.Close()
	influx := httptest.NewServer(http.NotFoundHandler())
	defer influx.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<html>grafana</html>")
	}))
	defer html.Close()
	var calls atomic.Int64
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"1"]}]}}`)
	}))
	defer busy.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there: connections are refused
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer denied.Close()

	cfg := config.Default()
	cfg.RemoteStorages = map[string]config.Storage{
		"prom":      {WriteURL: prom.URL + "/api/v1/write", ReadURL: prom.URL, RemoteReadURL: prom.URL + "/api/v1/read"},
		"influx":    {WriteURL: influx.URL + "/api/v1/prom/write?db=x", ReadURL: influx.URL + "/?u=admin&p=s3cret", RemoteReadURL: influx.URL + "/api/v1/prom/read?db=x"},
		"grafana":   {WriteURL: html.URL + "/w", ReadURL: html.URL},
		"busy":      {WriteURL: busy.URL + "/w", ReadURL: busy.URL},
		"writeonly": {WriteURL: prom.URL + "/api/v1/write"},
		"down":      {WriteURL: down.URL + "/w", ReadURL: down.URL},
		"denied":    {WriteURL: denied.URL + "/w", ReadURL: denied.URL},
	}
	var logs bytes.Buffer
	got, err := checkQueryAPIs(t.Context(), &cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*results.QueryAPI{
		"prom":    {URL: prom.URL, Available: true},
		"busy":    {URL: busy.URL, Available: true},
		"influx":  {URL: influx.URL + "/?u=admin&p=<secret>", Answer: "http_404 (http 404): 404 page not found"},
		"grafana": {URL: html.URL, Answer: "bad_body (http 200): invalid character '<' looking for beginning of value"},
		"denied":  {URL: denied.URL, Answer: "http_401 (http 401): unauthorized"},
	}
	// Unreachable: nothing said about its API, so it keeps its read load.
	if d := got["down"]; d == nil || !d.Available || !strings.Contains(d.Answer, "connection refused") {
		t.Errorf("down: %+v, want available with the refusal as answer", d)
	}
	delete(got, "down")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 5 || !strings.Contains(logs.String(), `msg="remoteReadURL not used: readURL serves the query API, which the read-back uses" storage=prom`) {
		t.Fatalf("%d log lines, want one per storage without the API, one for the one down and one for prom's unused remoteReadURL:\n%s", len(lines), logs.String())
	}
	noAPI := 0
	for _, l := range lines {
		if strings.Contains(l, "s3cret") {
			t.Errorf("log line %s", l)
		}
		if strings.Contains(l, "no Prometheus query API at readURL") {
			noAPI++
		}
	}
	if noAPI != 3 || !strings.Contains(logs.String(), "check the read credentials") {
		t.Errorf("logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "storage=influx") || !strings.Contains(logs.String(), "the read-back goes through remoteReadURL") ||
		!strings.Contains(logs.String(), "set remoteReadURL") {
		t.Errorf("logs do not say what to set:\n%s", logs.String())
	}
	if calls.Load() != 2 {
		t.Errorf("busy storage asked %d times, want 2", calls.Load())
	}
}
