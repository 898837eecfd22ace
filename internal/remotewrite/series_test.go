package remotewrite

import (
	"log/slog"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// TestHeldSamplesIntoPrometheus writes a workload with 20 % of its series late and 20 % of
// each scrape out of order to Prometheus' own receiver, without and with an out-of-order
// window: late samples (in order per series) are stored either way; out-of-order ones are
// refused with 400 without the window, in requests of their own so that nothing else is,
// and stored with it. Each kind's account balances and is part of the storage's.
func TestHeldSamplesIntoPrometheus(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run("window="+window.String(), func(t *testing.T) {
			t.Parallel()
			recv, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{OutOfOrderWindow: window})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = recv.Close() }()
			w := heldWriter(t, recv.URL+storagetest.WritePath)
			runFor(t, w, 1500*time.Millisecond)
			r := w.Results("prom")
			if r.Late == nil || r.OutOfOrder == nil || r.Late.Sent == 0 || r.OutOfOrder.Sent == 0 {
				t.Fatalf("no held samples sent: late %+v, out of order %+v", r.Late, r.OutOfOrder)
			}
			for name, h := range map[string]*results.WriteHeld{"late": r.Late, "outOfOrder": r.OutOfOrder} {
				if h.Sent != h.Acked+h.RefusedTotal()+h.Pending {
					t.Errorf("%s: sent %d != acked %d + refused %v + pending %d", name, h.Sent, h.Acked, h.Refused, h.Pending)
				}
			}
			if r.Late.Acked != r.Late.Sent {
				t.Errorf("late: %d of %d acked (refused %v); Prometheus stores samples in order however late", r.Late.Acked, r.Late.Sent, r.Late.Refused)
			}
			wantRefused := map[string]int64{}
			if window == 0 {
				wantRefused["http_400"] = r.OutOfOrder.Sent
			}
			if r.OutOfOrder.RefusedTotal() != wantRefused["http_400"] || r.OutOfOrder.Refused["http_400"] != wantRefused["http_400"] {
				t.Errorf("out of order: refused %v, want %v", r.OutOfOrder.Refused, wantRefused)
			}
			if r.Dropped() != r.OutOfOrder.RefusedTotal() {
				t.Errorf("dropped %v, want only the out-of-order samples refused (%d)", r.DroppedSamples, r.OutOfOrder.RefusedTotal())
			}
			appended, err := recv.Appended()
			if err != nil {
				t.Fatal(err)
			}
			if appended != r.AckedSamples {
				t.Errorf("Prometheus appended %d samples, %d acked", appended, r.AckedSamples)
			}
		})
	}
}

// heldWriter writes the test profile's 20 targets every 100 ms with 2 of 10 series late by 2
// scrapes and 2 of each scrape out of order by 3.
func heldWriter(t *testing.T, url string) *Writer {
	t.Helper()
	p, err := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(testProfile)}}, "p.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.ScrapeInterval = 100 * time.Millisecond
	cfg.WriteConcurrency, cfg.MaxSamplesPerRequest, cfg.TargetsCount = 2, 50, 20
	cfg.RemoteStorages = map[string]config.Storage{"prom": {WriteURL: url}}
	gen, err := workload.New(p, workload.Options{
		Seed: 1, Start: time.Now(), Hosts: cfg.TargetsCount, ScrapeInterval: cfg.ScrapeInterval,
		Late:       workload.Held{Percent: 20, By: 200 * time.Millisecond},
		OutOfOrder: workload.Held{Percent: 20, By: 300 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(OptionsFrom(&cfg), gen.Part(0, 1), slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	w.FlushAfter, w.DrainTimeout = 50*time.Millisecond, 3*time.Second
	return w
}
