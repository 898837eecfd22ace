package remotewrite

import (
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// TestGenerateWorkersKeepSeriesOrder runs the writer with fewer, as many and more generate
// workers than shards, with either compression: every sample arrives, decodable, and each
// series' samples arrive in time order, since a target stays with one worker and one shard.
func TestGenerateWorkersKeepSeriesOrder(t *testing.T) {
	for _, tc := range []struct {
		workers, shards int
		comp            config.Compression
	}{
		{1, 3, config.CompressionFast},
		{2, 2, config.CompressionBetter},
		{3, 2, config.CompressionFast},
		{5, 1, config.CompressionFast},
	} {
		t.Run(fmt.Sprintf("workers=%d/shards=%d/%s", tc.workers, tc.shards, tc.comp), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				rc := memReceiver(t, nil)
				w := newWriter(t, map[string]config.Storage{"s": writeTo("http://s.test")}, nil, func(c *config.Config) {
					c.GenerateWorkers, c.WriteConcurrency, c.Compression = tc.workers, tc.shards, tc.comp
				})
				inMemory(w, memNet{"s.test": rc})
				runFor(t, w, 600*time.Millisecond)
				r := w.Results("s")
				if r.AckedSamples == 0 || r.AckedSamples != r.GeneratedSamples || r.AckedSamples != rc.samples {
					t.Fatalf("account %+v, receiver got %d: want every sample acked and received", r, rc.samples)
				}
				if len(rc.series) != 20*10 {
					t.Errorf("%d series, want 20 targets × 10", len(rc.series))
				}
				for s, ts := range rc.series {
					for i := 1; i < len(ts); i++ {
						if ts[i] <= ts[i-1] {
							t.Fatalf("series %s out of order: %v", s, ts)
						}
					}
				}
			})
		})
	}
}

// TestWorkerOfSplitsEveryShard checks the assignment: each target has one worker in range,
// a worker feeds at most ceil(shards/workers) shards, and with more workers than shards
// every worker gets targets.
func TestWorkerOfSplitsEveryShard(t *testing.T) {
	for _, tc := range []struct{ shards, workers int }{{4, 2}, {4, 4}, {2, 5}, {1, 3}, {3, 1}} {
		shardsOf := map[int]map[int]bool{}
		for target := range 10_000 {
			w := workerOf(target, tc.shards, tc.workers)
			if w < 0 || w >= tc.workers {
				t.Fatalf("%+v: target %d on worker %d", tc, target, w)
			}
			if shardsOf[w] == nil {
				shardsOf[w] = map[int]bool{}
			}
			shardsOf[w][shardOf(target, tc.shards)] = true
		}
		if len(shardsOf) != tc.workers {
			t.Errorf("%+v: %d workers have targets, want %d", tc, len(shardsOf), tc.workers)
		}
		for w, shards := range shardsOf {
			if limit := (tc.shards + tc.workers - 1) / tc.workers; len(shards) > limit {
				t.Errorf("%+v: worker %d feeds %d shards, want at most %d", tc, w, len(shards), limit)
			}
		}
	}
}

// TestInvalidLabelsCountedWithWorkers: a profile made in code (not checked as a loaded one
// is) with invalid series, over several workers and shards: each of their samples is dropped
// as invalid_labels, the rest arrive, and the account balances, also when every series is
// invalid and no batch is ever sent.
func TestInvalidLabelsCountedWithWorkers(t *testing.T) {
	good := workload.Series{Name: "ok", Shape: workload.Shape{Kind: workload.Constant, Value: 1}}
	bad := workload.Series{Name: "1bad", Shape: workload.Shape{Kind: workload.Constant, Value: 1}}
	for _, tc := range []struct {
		name   string
		series []workload.Series
		valid  int
	}{
		{"one invalid of three", []workload.Series{good, bad, {Name: "m", Labels: []workload.Label{{Name: "b-c", Value: "x"}}, Shape: good.Shape}}, 1},
		{"all invalid", []workload.Series{bad}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				rc := memReceiver(t, nil)
				cfg := config.Default()
				cfg.ScrapeInterval, cfg.TargetsCount, cfg.GenerateWorkers, cfg.WriteConcurrency = 100*time.Millisecond, 10, 3, 2
				cfg.RemoteStorages = map[string]config.Storage{"s": writeTo("http://s.test")}
				gen, err := workload.New(&workload.Profile{Series: tc.series}, workload.Options{Seed: 1, Start: time.Now(), Hosts: cfg.TargetsCount, ScrapeInterval: cfg.ScrapeInterval})
				if err != nil {
					t.Fatal(err)
				}
				w, err := New(OptionsFrom(&cfg), gen, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
				if err != nil {
					t.Fatal(err)
				}
				inMemory(w, memNet{"s.test": rc})
				w.FlushAfter = 50 * time.Millisecond
				runFor(t, w, 350*time.Millisecond)
				r := w.Results("s")
				perSeries := r.GeneratedSamples / int64(len(tc.series))
				if perSeries == 0 || r.DroppedSamples[reasonInvalidLabels] != perSeries*int64(len(tc.series)-tc.valid) ||
					r.AckedSamples != perSeries*int64(tc.valid) || rc.samples != r.AckedSamples {
					t.Errorf("account %+v, receiver got %d: want %d of every %d samples dropped as invalid_labels, the rest acked",
						r, rc.samples, len(tc.series)-tc.valid, len(tc.series))
				}
			})
		})
	}
}

// hiddenSeries is a workload that does not name its series (no namedSeries), yet hands the
// writer's appender on to a generator that would take the fast path if offered.
type hiddenSeries struct{ Workload }

// TestWorkloadWithoutSeriesNames: without templates, the writer offers only Append, and
// every sample still arrives.
func TestWorkloadWithoutSeriesNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := memReceiver(t, nil)
		w := newWriter(t, map[string]config.Storage{"s": writeTo("http://s.test")}, nil, nil)
		w2, err := New(Options{
			Concurrency: 2, GenerateWorkers: 2, MaxSamplesPerRequest: 50, MaxPendingSamples: 1 << 20,
			MaxRetryDuration: time.Second, URLReplicas: map[string]int{"s": 1}, Compression: config.CompressionFast,
			Storages: map[string]config.Storage{"s": writeTo("http://s.test")},
		}, hiddenSeries{w.work}, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
		if err != nil {
			t.Fatal(err)
		}
		if w2.tpl != nil {
			t.Fatal("templates built for a workload that does not name its series")
		}
		inMemory(w2, memNet{"s.test": rc})
		w2.FlushAfter = 50 * time.Millisecond
		runFor(t, w2, 300*time.Millisecond)
		if r := w2.Results("s"); r.AckedSamples == 0 || r.AckedSamples != r.GeneratedSamples || r.AckedSamples != rc.samples {
			t.Errorf("account %+v, receiver got %d: want every sample acked and received", r, rc.samples)
		}
	})
}

// Both workloads bench hands the writer name their series, so the writer takes the fast path
// with either.
var (
	_ namedSeries = (*workload.Generator)(nil)
	_ namedSeries = (*workload.Part)(nil)
)
