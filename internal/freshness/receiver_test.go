package freshness

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/remotewrite"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// endAfter hands writes to w and, once n have been acked, cancels the run after wait: the
// samples written are then a known number, each polled for wait after its ack.
type endAfter struct {
	w      Writer
	n      int
	wait   time.Duration
	cancel context.CancelFunc

	mu    sync.Mutex // guards acked
	acked int
}

func (e *endAfter) Write(ctx context.Context, series [][]workload.Label, t int64, v float64) (int, error) {
	status, err := e.w.Write(ctx, series, t, v)
	if err == nil {
		e.mu.Lock()
		e.acked++
		if e.acked == e.n {
			time.AfterFunc(e.wait, e.cancel)
		}
		e.mu.Unlock()
	}
	return status, err
}

// TestCanaryInTheReceiver runs the canary against Prometheus' own receive side and query API
// (storagetest): each of its probes, the index lookup (/api/v1/series) too, sees every
// sample acked, with no query failing. Before the receiver served /api/v1/series its index
// probe saw none (every lookup answered 404).
func TestCanaryInTheReceiver(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{})
	st := config.Storage{WriteURL: r.URL + storagetest.WritePath, ReadURL: r.URL + "/"}
	wc, err := storage.NewClient("receiver", st, storage.Write, 1)
	if err != nil {
		t.Fatal(err)
	}
	canary, err := remotewrite.NewCanary(st, wc)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := storage.NewClient("receiver", st, storage.Read, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Two samples, 2 s apart; the run ends 1 s after the second's ack, a second before a
	// third would be written, with seven of each sample's polls (50ms to 2 s) made by then.
	cfg := config.Freshness{Interval: 50 * time.Millisecond, WriteInterval: 2 * time.Second, Timeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := &endAfter{w: canary, n: 2, wait: time.Second, cancel: cancel}
	p := New("receiver", cfg, 0, w, query.NewAPI(rc, st.ReadURL), time.Second, slog.New(slog.DiscardHandler))
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	res := p.Results()
	if res.Written != 2 || res.Acked != 2 {
		t.Fatalf("written %d, acked %d: want 2 each (first error %q)", res.Written, res.Acked, res.FirstWriteError)
	}
	for name, pr := range map[string]*results.FreshnessProbe{"instant": res.Instant, "range": res.Range, "series": res.Series} {
		if pr.Visible != res.Acked || pr.Queries == 0 || len(pr.Errors) != 0 {
			t.Errorf("%s probe: %d visible of %d acked, %d queries, errors %v %s", name, pr.Visible, res.Acked, pr.Queries, pr.Errors, pr.FirstError)
		}
	}
}
