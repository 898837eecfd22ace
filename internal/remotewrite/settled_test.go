package remotewrite

import (
	"context"
	"log/slog"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// TestSettledFollowsTheOldestPending: a storage answering in 2 s a batch due every second is
// 10 s behind at 20 s: every sample before the oldest pending one is settled, nothing after;
// a storage that keeps up is settled up to now, less the batch being written.
func TestSettledFollowsTheOldestPending(t *testing.T) {
	for name, tc := range map[string]struct {
		answer   time.Duration
		min, max time.Duration // of now − Settled at 20 s
	}{
		"behind":     {2 * time.Second, 9 * time.Second, 11 * time.Second},
		"keeping up": {0, 0, 1100 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := memWriter(t, answerAfter(tc.answer))
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second+500*time.Millisecond)
				defer cancel()
				done := make(chan struct{})
				go func() { _ = w.Run(ctx); close(done) }()
				time.Sleep(20 * time.Second)
				synctest.Wait()
				now := time.Now()
				if behind := now.Sub(w.Settled("s", now)); behind < tc.min || behind > tc.max {
					t.Errorf("settled %v before now, want %v to %v (lag %.1fs)", behind, tc.min, tc.max, w.Results("s").LagSeconds)
				}
				if got := w.Settled("unknown", now); !got.Equal(now) {
					t.Errorf("an unknown storage: settled at %v, want now", got)
				}
				cancel()
				<-done
			})
		})
	}
}

// stalled is a workload whose generator stops before target 0's scrape k until resume is
// closed, as a starved machine's generator runs late (issue 29: on a machine at load 7-12,
// a check during the run found one scrape of each target missing from an honest storage).
type stalled struct {
	*workload.Generator
	k      int64
	resume chan struct{}
}

func (s *stalled) Scrape(app workload.Appender, target int, k int64) (values, staleMarkers int) {
	if target == 0 && k == s.k {
		<-s.resume
	}
	return s.Generator.Scrape(app, target, k)
}

// TestSettledWaitsForAScrapeNotGenerated: a scrape due 2.5 s ago that the generator has not
// made yet is not settled, whatever the queues hold (nothing: every batch was acked at once),
// and neither is anything after it, and the lag counts it; once made and acked, it is settled.
// Before, Settled returned now and the lag was 0,
// and the checks during the run, which took a scrape interval off it, expected the scrape
// (due 1.5 s before what they read up to) and counted its samples missing.
func TestSettledWaitsForAScrapeNotGenerated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(testProfile)}}, "p.json")
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.TargetsCount, cfg.ScrapeInterval, cfg.WriteConcurrency, cfg.GenerateWorkers = 2, time.Second, 2, 2
		cfg.RemoteStorages = map[string]config.Storage{"s": writeTo("http://s.test")}
		gen, err := workload.New(p, workload.Options{Seed: 1, Start: time.Now(), Hosts: cfg.TargetsCount, ScrapeInterval: cfg.ScrapeInterval})
		if err != nil {
			t.Fatal(err)
		}
		wl := &stalled{Generator: gen, k: 5, resume: make(chan struct{})}
		w, err := New(OptionsFrom(&cfg), wl, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
		if err != nil {
			t.Fatal(err)
		}
		w.FlushAfter = 50 * time.Millisecond
		inMemory(w, memNet{"s.test": memReceiver(t, nil)})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { _ = w.Run(ctx); close(done) }()

		due := time.UnixMilli(gen.ScrapeTime(0, 5))
		time.Sleep(time.Until(due.Add(2500 * time.Millisecond)))
		synctest.Wait()
		now := time.Now()
		if got := w.Settled("s", now); got.After(due) {
			t.Errorf("settled up to %v before now, past the scrape due %v before now and not generated", now.Sub(got), now.Sub(due))
		}
		r := w.Results("s")
		if r.PendingSamples != 0 {
			t.Fatalf("%d samples pending: the test is of a scrape not generated, not of a write", r.PendingSamples)
		}
		// A checkpoint's lag says where its unsettled samples begin (a resumed run's gap).
		if r.LagSeconds < 2.5 {
			t.Errorf("lag %.3fs, want at least the 2.5s the scrape not generated is late", r.LagSeconds)
		}

		close(wl.resume)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		now = time.Now()
		if got := w.Settled("s", now); !got.After(due) || now.Sub(got) > time.Second {
			t.Errorf("once generated and acked: settled %v before now, want past the scrape (%v before now) and within a second", now.Sub(got), now.Sub(due))
		}
		cancel()
		<-done
	})
}

// TestSettledAfterTheDrainIsTheOldestPending: a storage that answers nothing. When the
// drain's deadline ends the run, each shard's first batch is still in flight and the rest
// queued: Settled is the oldest pending sample, at the run's first scrape. Before, each
// sender took its queue's batches one by one after the deadline, each replacing the one in
// flight, and Settled was the newest batch's: the read-back at the end then expected the
// samples of every batch before it (issue 37).
func TestSettledAfterTheDrainIsTheOldestPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := memWriter(t, answerAfter(time.Hour))
		w.DrainTimeout = time.Second
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if err := w.Run(ctx); err != nil {
			t.Fatal(err)
		}
		res := w.Results("s")
		if res.AckedSamples != 0 || res.PendingSamples != res.GeneratedSamples || res.GeneratedSamples == 0 {
			t.Fatalf("want every sample pending: %+v", res)
		}
		if got := w.Settled("s", time.Now()); got.Sub(start) > time.Second {
			t.Errorf("settled up to %v after the start, want the first scrape's samples (within a second of it) pending", got.Sub(start))
		}
	})
}
