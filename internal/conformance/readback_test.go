package conformance

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// patReadBack matches the read-back's queries: a range of every metric name of an interval.
var patReadBack = regexp.MustCompile(`^\{__name__=~".*"\}\[\d+ms\]$`)

// A storage that fails the read-back's reads (and answers every eval) leaves droppedSamples
// unknown: null in results.json, with how many reads failed and the first one's error,
// never "nothing dropped" (issue 37: the reads were logged and the count left 0).
func TestRunReadBackFails(t *testing.T) {
	f, err := ParseFile("x.test", "load 1m\n  a{job=\"x\"} 1 2 3\n  b 4 5 6\n\neval instant at 2m a\n  a{job=\"x\"} 3\n")
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(startReceiver(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	reads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // the query may be in a form body: read it, and pass it on
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		if r.URL.Path == "/api/v1/query" && patReadBack.MatchString(form.Get("query")+r.URL.Query().Get("query")) {
			reads++ // one at a time: the read-back's reads are sequential
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	st := config.Storage{WriteURL: srv.URL + storagetest.WritePath, ReadURL: srv.URL + "/"}
	out, err := Run(t.Context(), &Suite{Files: []*File{f}}, "unread", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if reads == 0 || out.Passed != 1 {
		t.Fatalf("%d reads back refused, %d passed: want the read-back asked and the eval passed", reads, out.Passed)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if dropped, ok := m["droppedSamples"]; !ok || dropped != nil {
		t.Errorf("droppedSamples %v (present %t): want null, the read-back failed", dropped, ok)
	}
	reason, _ := m["readBackError"].(string)
	if want := "1 of 1 reads of the data written failed, the first of the block at x.test:5: "; !strings.HasPrefix(reason, want) || !strings.Contains(reason, "503") {
		t.Errorf("readBackError %q: want %q and the 503", reason, want+"...")
	}
}
