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
// it is fast, though the cumulative p99 is still the slow one. Real time: a fast answer over
// loopback takes about a millisecond; a busy machine adds tens, so the bound is half the slow
// answer.
func TestProgressLineQueryP99IsRecent(t *testing.T) {
	var slow atomic.Bool
	slow.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if slow.Load() {
			time.Sleep(500 * time.Millisecond)
		}
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer srv.Close()
	cfg := config.Default()
	cfg.RemoteStorages = map[string]config.Storage{"s": {ReadURL: srv.URL}}
	client, err := storage.NewClient("s", config.Storage{}, storage.Read, cfg.QueryConcurrency)
	if err != nil {
		t.Fatal(err)
	}
	plan := &query.Plan{Queries: []query.Query{{Name: "r", Kind: query.KindInstant, Expr: "up", Interval: 50 * time.Millisecond}}}
	runner := query.New(&cfg, plan, "s", client, srv.URL, slog.New(slog.DiscardHandler), query.NewMetrics(prometheus.NewRegistry()))
	r := &run{
		cfg: &cfg, writer: &remotewrite.Writer{}, runners: map[string]*query.Runner{"s": runner},
		start: time.Now(), timeline: map[string][]results.WritePoint{},
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
	if got := p99(fastLine); got >= 0.25 {
		t.Errorf("fast interval: %q, want p99 < 0.25 s", fastLine)
	}
	if cum := runner.Results().LatencySeconds.P99; cum == nil || *cum < 0.5 {
		t.Errorf("cumulative p99 %v, want the slow second in it (>= 0.5 s)", cum)
	}
}
