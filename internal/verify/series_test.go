package verify

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// TestSeriesReadBackFromPrometheus writes a workload with spikes, pod churn, late and
// out-of-order samples into Prometheus' own receiver, without and with an out-of-order
// window, and reads it back: every on-time sample found and nothing else (targets that come
// and go, pods replaced, their staleness markers honoured); late samples stored either way;
// out-of-order ones refused without the window and stored with it, as the account says.
func TestSeriesReadBackFromPrometheus(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run("window="+window.String(), func(t *testing.T) {
			t.Parallel()
			p := testProfile(t)
			recv := startReceiver(t, storagetest.Options{OutOfOrderWindow: window})
			cfg := config.Default()
			cfg.ScrapeInterval, cfg.TargetsCount, cfg.VerifySamples = 100*time.Millisecond, 4, 100_000
			st := config.Storage{WriteURL: recv.URL + storagetest.WritePath, ReadURL: recv.URL}
			cfg.RemoteStorages = map[string]config.Storage{"prom": st}
			start := time.Now()
			gen, err := workload.New(p, workload.Options{
				Seed: 1, Start: start, Hosts: cfg.TargetsCount, ScrapeInterval: cfg.ScrapeInterval,
				Events: workload.Events{
					Spike:       &workload.Spike{For: 300 * time.Millisecond, Every: 600 * time.Millisecond, Factor: 2},
					PodLifetime: 700 * time.Millisecond,
				},
				Late:       workload.Held{Percent: 25, By: 200 * time.Millisecond},
				OutOfOrder: workload.Held{Percent: 25, By: 300 * time.Millisecond},
			})
			if err != nil {
				t.Fatal(err)
			}
			w := writeFor(t, &cfg, gen.Part(0, 1), 2*time.Second, 50*time.Millisecond)
			acct := w.Results("prom")
			client, err := storage.NewClient("prom", st, storage.Read, 2)
			if err != nil {
				t.Fatal(err)
			}
			v := New(&cfg, gen.Part(0, 1), []Target{{Name: "prom", ReadURL: recv.URL, Client: client, Kind: storage.KindPrometheus}},
				nil, slog.New(slog.DiscardHandler))
			v.Settle = 0
			res := v.Run(t.Context(), start, w.GeneratedBefore().Add(-time.Millisecond))["prom"]
			if res.CheckedSamples == 0 || res.MissingSamples != 0 || res.UnexpectedSamples != 0 || res.ChangedValues != 0 ||
				res.ReadErrors != 0 || res.CheckedStaleMarkers == 0 || res.StalenessIgnored != 0 || res.ShiftedTimestamps != 0 {
				t.Errorf("read-back %+v\n%s", res, strings.Join(res.Examples, "\n"))
			}
			t.Logf("checked %d markers %d series %d late %+v ooo %+v acct late %+v ooo %+v", res.CheckedSamples, res.CheckedStaleMarkers, res.CheckedSeries, res.Late, res.OutOfOrder, acct.Late, acct.OutOfOrder)
			if res.Late == nil || res.Late.Checked == 0 || res.Late.Verdict() != "stored" {
				t.Errorf("late read-back %+v, want every one stored", res.Late)
			}
			wantOOO := "stored"
			if window == 0 {
				wantOOO = "refused"
			}
			if res.OutOfOrder == nil || res.OutOfOrder.Checked == 0 || res.OutOfOrder.Verdict() != wantOOO {
				t.Errorf("out-of-order read-back %+v, want %s (account: %+v)", res.OutOfOrder, wantOOO, acct.OutOfOrder)
			}
			if (acct.OutOfOrder.Acked == 0) != (wantOOO == "refused") {
				t.Errorf("out-of-order account %+v disagrees with the read-back's %s", acct.OutOfOrder, wantOOO)
			}
		})
	}
}
