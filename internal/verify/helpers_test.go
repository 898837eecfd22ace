package verify

import (
	"context"
	"log/slog"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/remotewrite"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// testProfile is otlpProfile, loaded.
func testProfile(t *testing.T) *workload.Profile {
	t.Helper()
	p, err := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(otlpProfile)}}, "p.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startReceiver starts Prometheus' own receiver in a temporary dir, closed with the test.
func startReceiver(t *testing.T, opts storagetest.Options) *storagetest.Receiver {
	t.Helper()
	recv, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = recv.Close() })
	return recv
}

// writeFor writes wl to cfg's storages for d, batches flushed after flushAfter (0: the
// writer's own), and returns the writer, its account complete.
func writeFor(t *testing.T, cfg *config.Config, wl remotewrite.Workload, d, flushAfter time.Duration) *remotewrite.Writer {
	t.Helper()
	w, err := remotewrite.New(remotewrite.OptionsFrom(cfg), wl, slog.New(slog.DiscardHandler), remotewrite.NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	if flushAfter > 0 {
		w.FlushAfter = flushAfter
	}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}
