package remotewrite

import (
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// BenchmarkAppender drives one shard appender as a generate worker does — ten scrapes of ten
// node_exporter targets into requests of up to 5000 samples, compressed and pushed to each
// storage's queue (no sender: a small maxPendingSamples drops the oldest) — for one protocol
// and for a lane that takes all three at once. It measures what the benchmarks of the bare
// encoders leave out: the appender's dispatch to its encoders, its flushes and batches.
// Reported: samples per CPU-second of the one thread, and allocations per iteration.
func BenchmarkAppender(b *testing.B) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, protos := range []string{"prometheus-rw1", "prometheus-rw2", "otlp-http", "prometheus-rw1,prometheus-rw2,otlp-http"} {
		b.Run("protocols="+protos, func(b *testing.B) {
			cfg := config.Default()
			cfg.TargetsCount = 10
			cfg.ScrapeInterval = 10 * time.Second
			cfg.MaxPendingSamples = 50_000
			cfg.RemoteStorages = map[string]config.Storage{}
			for p := range strings.SplitSeq(protos, ",") {
				cfg.RemoteStorages[p] = config.Storage{WriteURL: "http://127.0.0.1:1/write", Protocol: config.Protocol(p)}
			}
			gen, err := workload.New(profile, workload.Options{Seed: 1, Start: time.UnixMilli(1_700_000_000_000), Hosts: 10, ScrapeInterval: cfg.ScrapeInterval})
			if err != nil {
				b.Fatal(err)
			}
			w, err := New(OptionsFrom(&cfg), gen, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
			if err != nil {
				b.Fatal(err)
			}
			ln := w.lanes[0]
			a := w.newShardAppender(ln, 0, &ln.openOldest[0], false)
			app := a.appender()
			var samples int64
			b.ReportAllocs()
			runtime.LockOSThread() // CPU time of this thread: the figure holds on a busy machine
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			for b.Loop() {
				for k := range int64(10) {
					for target := range 10 {
						n, _ := gen.Scrape(app, target, k)
						samples += int64(n)
					}
				}
				a.flush()
			}
			b.ReportMetric(float64(samples)/(threadCPU()-cpu0).Seconds(), "samples/cpu-s")
		})
	}
}
