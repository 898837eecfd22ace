package bench

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/remotewrite"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

func TestQueryProgress(t *testing.T) {
	for _, tc := range []struct {
		p    query.Progress
		want string
	}{
		{query.Progress{Completed: 10, P99: 0.0123, Errors: 2}, ", query p99 0.012s, errors 2"},
		{query.Progress{Errors: 5}, ", query p99 -, errors 5"}, // nothing completed: no figure, not 0
	} {
		if got := queryProgress(tc.p); got != tc.want {
			t.Errorf("queryProgress(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// The progress line's query p99 is the last interval's: after a slow second then two fast ones
// it is fast, though the cumulative p99 is still the slow one. On synctest's clock, over an
// in-memory transport, a slow answer takes exactly 500 ms and a fast one none.
func TestProgressLineQueryP99IsRecent(t *testing.T) {
	synctest.Test(t, testProgressLineQueryP99IsRecent)
}

func testProgressLineQueryP99IsRecent(t *testing.T) {
	var slow atomic.Bool
	slow.Store(true)
	answer := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if slow.Load() {
			time.Sleep(500 * time.Millisecond)
		}
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	})
	const readURL = "http://s.test/"
	cfg := config.Default()
	cfg.RemoteStorages = map[string]config.Storage{"s": {ReadURL: readURL}}
	client, err := storage.NewClient("s", config.Storage{}, storage.Read, cfg.QueryConcurrency)
	if err != nil {
		t.Fatal(err)
	}
	client.HTTP.Transport = handlerTransport{answer}
	plan := &query.Plan{Queries: []query.Query{{Name: "r", Kind: query.KindInstant, Expr: "up", Interval: 50 * time.Millisecond}}}
	runner := query.New(&cfg, plan, "s", client, readURL, slog.New(slog.DiscardHandler), query.NewMetrics(prometheus.NewRegistry()))
	r := &run{
		cfg: &cfg, writer: &remotewrite.Writer{}, runners: map[string]*query.Runner{"s": runner},
		start: time.Now(), timeline: map[string]*results.Timeline[results.WritePoint]{},
	}
	r.last = r.start
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- runner.Run(ctx) }()
	p99 := func(line string) float64 {
		t.Helper()
		m := regexp.MustCompile(`query p99 ([0-9.]+)s, errors 0$`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %q: no query p99 without errors", line)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	time.Sleep(time.Second)
	slowLine := r.record(time.Now())
	slow.Store(false)
	time.Sleep(time.Second) // the last slow answer ends in this interval
	_ = r.record(time.Now())
	time.Sleep(time.Second)
	fastLine := r.record(time.Now())
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := p99(slowLine); got < 0.5 {
		t.Errorf("slow interval: %q, want p99 >= 0.5 s", slowLine)
	}
	if got := p99(fastLine); got != 0 {
		t.Errorf("fast interval: %q, want p99 0 s", fastLine)
	}
	if cum := runner.Results().LatencySeconds.P99; cum == nil || *cum < 0.5 {
		t.Errorf("cumulative p99 %v, want the slow second in it (>= 0.5 s)", cum)
	}
}

// handlerTransport serves requests with h in the calling goroutine: no socket, so in a
// synctest bubble the fake clock moves while h waits.
type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	ht.h.ServeHTTP(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}
