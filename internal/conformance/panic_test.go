package conformance

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// An engine that panics on an eval is a failure of its own kind, apart from what the storage
// refuses on purpose (issue 29, item 7: Thanos query 0.42.5 answered
// `quantile_over_time(scalar(up) + 1, {__name__="up"}[1h:1m] @ 1111111)` with 422 "unexpected
// error: runtime error: index out of range [0] with length 0"; it read as "rejected", among
// 257 evals of experimental syntax its parser does not enable).
func TestRunEnginePanic(t *testing.T) {
	const crashes = "quantile_over_time(scalar("
	s := builtinFiles(t, "at_modifier.test")
	want := 0
	for _, b := range s.Files[0].Blocks {
		for _, e := range b.Evals {
			if strings.Contains(e.Expr, crashes) && !e.isFail() {
				want++
			}
		}
	}
	if want == 0 {
		t.Fatalf("no eval of %q in at_modifier.test: the test could not fail", crashes)
	}
	proxy := writeProxy(t, startReceiver(t).URL, func(*prompb.WriteRequest) error { return nil })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		if q := r.URL.Query().Get("query") + form.Get("query"); strings.Contains(q, crashes) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"status":"error","errorType":"execution","error":"unexpected error: runtime error: index out of range [0] with length 0"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	st := config.Storage{WriteURL: srv.URL + storagetest.WritePath, ReadURL: srv.URL + "/"}
	out, err := Run(t.Context(), s, "crashes", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Kinds[results.KindPanic]; got != want {
		t.Errorf("%d evals failed as %q, want %d (kinds %v)", got, results.KindPanic, want, out.Kinds)
	}
	for _, f := range out.Failures {
		if strings.Contains(f.Expr, crashes) != (f.Kind == results.KindPanic) {
			t.Errorf("%s:%d %s: %s (%s)", f.File, f.Line, f.Expr, f.Kind, f.Got)
		}
	}
}
