package remotewrite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/client_golang/prometheus"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// BenchmarkPipeline measures the whole write path — generate, encode, compress, send — into
// an in-process receiver that reads and discards each request, with the default
// node_exporter profile. Each iteration starts the run three scrape intervals in the past,
// so every target has three scrapes due at once and the writer goes as fast as it can;
// the iteration ends when the receiver acknowledged every sample.
//
// Reported: samples per CPU-second of the whole process (receiver included, so the figure
// understates the writer), and the peak heap over the baseline per active series.
func BenchmarkPipeline(b *testing.B) {
	profile, srv := discardSetup(b)
	for _, active := range []int{100_000, 1_000_000} {
		targets := (active + len(profile.Series) - 1) / len(profile.Series)
		b.Run(fmt.Sprintf("activeSeries=%d", targets*len(profile.Series)), func(b *testing.B) {
			var samples int64
			var cpu time.Duration
			var peak uint64
			for b.Loop() {
				n, c, p := pipelineOnce(b, profile, targets, srv.URL)
				samples, cpu, peak = samples+n, cpu+c, max(peak, p)
			}
			b.ReportMetric(float64(samples)/cpu.Seconds(), "samples/cpu-s")
			b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(peak)/float64(targets*len(profile.Series)), "heap-bytes/series")
			b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
		})
	}
}

// discardSetup loads the default profile and starts a receiver that reads and discards.
func discardSetup(b *testing.B) (*workload.Profile, *httptest.Server) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return profile, srv
}

// pipelineOnce writes three scrapes of every target and returns the samples acked, the
// process CPU time it took and the peak heap growth.
func pipelineOnce(b *testing.B, profile *workload.Profile, targets int, url string) (int64, time.Duration, uint64) {
	const scrapes = 3
	interval := 10 * time.Second
	cfg := config.Default()
	cfg.TargetsCount = targets
	cfg.ScrapeInterval = interval
	cfg.ScrapeConfigUpdatePercent = 0
	cfg.MaxPendingSamples = 1 << 40
	cfg.RemoteStorages = map[string]config.Storage{"discard": {WriteURL: url + "/api/v1/write"}}
	// The generator would produce the next scrapes as they come due: stop before them.
	start := time.Now().Add(-scrapes*interval + time.Second)
	gen, err := workload.New(profile, workload.Options{Seed: 1, Start: start, Hosts: targets, ScrapeInterval: interval})
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(OptionsFrom(&cfg), gen, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	want := int64(scrapes * targets * len(profile.Series))
	runtime.GC()
	base := heapInUse()
	cpu0 := cpuTime()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	var peak uint64
	for w.Results("discard").AckedSamples < want {
		peak = max(peak, heapInUse())
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	cpu := cpuTime() - cpu0
	r := w.Results("discard")
	if r.Dropped() != 0 || r.AckedSamples < want {
		b.Fatalf("account %+v: want %d acked, nothing dropped", r, want)
	}
	return r.AckedSamples, cpu, max(peak, base) - base
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// rssBytes is the process's resident memory, from /proc/self/status.
func rssBytes() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSteadyMemory runs the write path in real time — every target scraped once per
// interval at its own phase, as in a benchmark run — for a little more than one interval,
// and reports the peak heap over the baseline per active series: what the generator and its
// pipeline hold when the storage keeps up. It should stay flat as series grow, since the
// generator keeps no per-series state. rss-growth-MiB is the process's resident memory over
// its baseline; a later sub-benchmark reuses pages an earlier one made resident, so compare
// heap figures across sizes.
func BenchmarkSteadyMemory(b *testing.B) {
	profile, srv := discardSetup(b)
	const interval = 5 * time.Second
	for _, active := range []int{100_000, 1_000_000} {
		targets := (active + len(profile.Series) - 1) / len(profile.Series)
		series := targets * len(profile.Series)
		b.Run(fmt.Sprintf("activeSeries=%d", series), func(b *testing.B) {
			var peak, rss uint64
			for b.Loop() {
				h, r := steadyOnce(b, profile, targets, interval, srv.URL)
				peak, rss = max(peak, h), max(rss, r)
			}
			b.ReportMetric(float64(peak)/float64(series), "heap-bytes/series")
			b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(rss)/(1<<20), "rss-growth-MiB")
		})
	}
}

// steadyOnce returns the peak heap and the peak RSS over their baselines.
func steadyOnce(b *testing.B, profile *workload.Profile, targets int, interval time.Duration, url string) (heap, rss uint64) {
	cfg := config.Default()
	cfg.TargetsCount = targets
	cfg.ScrapeInterval = interval
	cfg.RemoteStorages = map[string]config.Storage{"discard": {WriteURL: url + "/api/v1/write"}}
	gen, err := workload.New(profile, workload.Options{
		Seed: 1, Start: time.Now(), Hosts: targets,
		ScrapeInterval: interval, ChurnPercent: 1, ChurnInterval: interval,
	})
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(OptionsFrom(&cfg), gen, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	base, rssBase := heapInUse(), rssBytes()
	ctx, cancel := context.WithTimeout(context.Background(), interval+interval/5)
	defer cancel()
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	var peak, rssPeak uint64
	for ctx.Err() == nil {
		peak, rssPeak = max(peak, heapInUse()), max(rssPeak, rssBytes())
		time.Sleep(20 * time.Millisecond)
	}
	<-done
	if r := w.Results("discard"); r.Dropped() != 0 || r.PendingSamples != 0 {
		b.Fatalf("account %+v: the receiver did not keep up", r)
	}
	return max(peak, base) - base, max(rssPeak, rssBase) - rssBase
}

// BenchmarkCompression compresses the same requests — about 5000 node_exporter samples each
// (the default maxSamplesPerRequest), as the encoder builds them over ten scrapes of ten
// targets —
// with each compression setting, on one goroutine: the bytes per sample a storage receives
// and the samples one core compresses per CPU-second.
func BenchmarkCompression(b *testing.B) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		b.Fatal(err)
	}
	gen, err := workload.New(profile, workload.Options{Seed: 1, Start: time.UnixMilli(1_700_000_000_000), Hosts: 10, ScrapeInterval: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	e := encoderV1{tpl: newTemplates(gen)}
	var requests [][]byte
	var perPass int64 // samples in requests
	for k := range int64(10) {
		for target := range 10 {
			gen.Scrape(&e, target, k)
			if e.samples >= 5000 { // as the writer, which flushes within a scrape at 5000
				requests = append(requests, bytes.Clone(e.buf))
				perPass += int64(e.samples)
				e.reset()
			}
		}
	}
	for _, tc := range []struct {
		name     config.Compression
		compress func(dst, src []byte) []byte
	}{{config.CompressionFast, s2.EncodeSnappy}, {config.CompressionBetter, s2.EncodeSnappyBetter}} {
		b.Run("compression="+string(tc.name), func(b *testing.B) {
			var packed []byte
			var in, out, samples int64
			runtime.LockOSThread() // CPU time of this thread: the figure holds on a busy machine
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			for b.Loop() {
				for _, raw := range requests {
					if n := s2.MaxEncodedLen(len(raw)); cap(packed) < n {
						packed = make([]byte, n)
					}
					packed = tc.compress(packed[:cap(packed)], raw)
					in, out = in+int64(len(raw)), out+int64(len(packed))
				}
				samples += perPass
			}
			b.ReportMetric(float64(out)/float64(samples), "bytes/sample")
			b.ReportMetric(float64(in)/float64(out), "ratio")
			b.ReportMetric(float64(samples)/(threadCPU()-cpu0).Seconds(), "samples/cpu-s")
		})
	}
}
