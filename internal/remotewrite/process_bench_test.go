package remotewrite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/prompb"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// BenchmarkProcess measures the write path as a user runs it: the real tsbench binary
// (`tsbench run`, built without -race) against a receiver in another process that reads and
// discards every request (testdata/discard), the CPU taken from the tsbench process's rusage.
// Each step checks the receiver got exactly the requests and bytes tsbench counted. Run it
// with -benchtime 1x: every step is a real run of several seconds to minutes. To measure
// another build side by side (before and after a change), set TSBENCH_BENCH_BIN to its path.
//
//   - cpu: 300 targets × 839 series at 1 s (≈ 252k samples/s) for 20 s. samples/cpu-s is the
//     process's samples acked per CPU-second; bare-samples/cpu-s is a bare loop measured
//     right after on one locked thread: values updated in place in a prompb.WriteRequest of
//     maxSamplesPerRequest node_exporter series, prompb's Marshal, and the compressor tsbench
//     uses by default. cpu-ratio is the process's CPU per sample over the loop's: 1.0 means
//     tsbench — generation, encoding, compression, HTTP, accounting, everything — costs what
//     marshalling and compressing alone cost.
//   - ceiling: the highest rate one process sustains with its lag under one scrape interval
//     (2 s), found by doubling the targets from 1000, then bisecting three times; 10 s each.
//     On a shared machine, other processes' load lowers it: it is this machine's figure.
//   - activeSeries=100M: 120,000 targets × 839 series at 120 s for 130 s, so every target is
//     scraped, churn at the default 1% a minute: the peak RSS of the process (rusage maxrss).
func BenchmarkProcess(b *testing.B) {
	dir := b.TempDir()
	bin := os.Getenv("TSBENCH_BENCH_BIN")
	if bin == "" {
		bin = goBuild(b, dir, "tsbench", "./cmd/tsbench")
	}
	recv := startDiscard(b, goBuild(b, dir, "discard", "./internal/remotewrite/testdata/discard"))
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		b.Fatal(err)
	}
	series := len(profile.Series)

	b.Run("cpu", func(b *testing.B) {
		for b.Loop() {
			r := processRun(b, bin, recv, dir, 300, time.Second, 20*time.Second)
			bare := bareLoop(b, profile, 1000)
			b.ReportMetric(r.samplesPerCPU(), "samples/cpu-s")
			b.ReportMetric(bare, "bare-samples/cpu-s")
			b.ReportMetric(bare/r.samplesPerCPU(), "cpu-ratio")
			b.ReportMetric(r.bytesPerSample(), "bytes/sample")
			b.ReportMetric(r.rssMiB(), "rss-MiB")
		}
	})
	b.Run("ceiling", func(b *testing.B) {
		const interval = 2 * time.Second
		for b.Loop() {
			var best *processResult
			sustains := func(targets int) bool {
				r := processRun(b, bin, recv, dir, targets, interval, 10*time.Second)
				ok := r.write.MaxLagSeconds < interval.Seconds() && r.write.Dropped() == 0 && r.write.PendingSamples == 0
				b.Logf("%d targets (%.0f samples/s): max lag %.2fs, %.2f cores: sustained %v",
					targets, r.write.TargetSamplesPerSecond, r.write.MaxLagSeconds, r.cpu.Seconds()/r.wall.Seconds(), ok)
				if ok && (best == nil || targets > best.targets) {
					best = r
				}
				return ok
			}
			lo, hi := 0, 1000
			for hi <= 128_000 && sustains(hi) {
				lo, hi = hi, 2*hi
			}
			for range 3 {
				if mid := (lo + hi) / 2; sustains(mid) {
					lo = mid
				} else {
					hi = mid
				}
			}
			if best == nil {
				b.Fatalf("not even 500 targets at %s sustained", interval)
			}
			b.ReportMetric(float64(lo*series)/interval.Seconds(), "samples/s")
			b.ReportMetric(best.cpu.Seconds()/best.wall.Seconds(), "cores")
			b.ReportMetric(best.samplesPerCPU(), "samples/cpu-s")
		}
	})
	b.Run("activeSeries=100M", func(b *testing.B) {
		for b.Loop() {
			r := processRun(b, bin, recv, dir, 120_000, 120*time.Second, 130*time.Second)
			if want := int64(120_000 * series); r.write.AckedSamples < want {
				b.Fatalf("%d samples acked, want every target scraped: >= %d", r.write.AckedSamples, want)
			}
			b.ReportMetric(r.rssMiB(), "rss-MiB")
			b.ReportMetric(float64(120_000*series), "active-series")
			b.ReportMetric(r.samplesPerCPU(), "samples/cpu-s")
			b.ReportMetric(r.write.MaxLagSeconds, "max-lag-s")
		}
	})
}

// goBuild builds the module's package pkg into dir/name, without -race.
func goBuild(b *testing.B, dir, name, pkg string) string {
	b.Helper()
	root, err := exec.CommandContext(b.Context(), "go", "env", "GOMOD").Output()
	if err != nil {
		b.Fatalf("go env GOMOD: %v", err)
	}
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(b.Context(), "go", "build", "-o", out, pkg)
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out
}

// discard is the receiver process.
type discard struct{ url string }

// startDiscard starts the receiver and learns its address; it is stopped at cleanup.
func startDiscard(b *testing.B, bin string) *discard {
	b.Helper()
	cmd := exec.Command(bin) // stopped by SIGTERM at cleanup, not by a context
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		b.Fatalf("discard receiver said %q: %v", line, err)
	}
	return &discard{url: addr}
}

// counts is what the receiver read so far.
func (d *discard) counts(b *testing.B) (requests, bytes int64) {
	req, err := http.NewRequestWithContext(b.Context(), http.MethodGet, d.url, nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if _, err := fmt.Sscanf(string(body), "requests %d bytes %d", &requests, &bytes); err != nil {
		b.Fatalf("discard receiver answered %q: %v", body, err)
	}
	return requests, bytes
}

// processResult is one tsbench run: its account and its process's resources.
type processResult struct {
	targets int
	write   *results.Write
	cpu     time.Duration // user + system
	wall    time.Duration
	maxRSS  int64 // bytes
}

func (r *processResult) samplesPerCPU() float64 {
	return float64(r.write.AckedSamples) / r.cpu.Seconds()
}

func (r *processResult) bytesPerSample() float64 {
	return float64(r.write.BytesSent) / float64(r.write.AckedSamples)
}

func (r *processResult) rssMiB() float64 { return float64(r.maxRSS) / (1 << 20) }

// processRun runs `tsbench run` with targets × the default profile at interval for d, every
// other setting at its default (churn 1% a minute, writeConcurrency 4, generateWorkers the
// cores), the read-back check off (the receiver keeps nothing to read back).
func processRun(b *testing.B, bin string, recv *discard, dir string, targets int, interval, d time.Duration) *processResult {
	b.Helper()
	cfg := filepath.Join(dir, "bench.yaml")
	doc := fmt.Sprintf("targetsCount: %d\nscrapeInterval: %s\nscrapeConfigUpdateInterval: %s\nverifySamples: 0\n"+
		"remoteStorages:\n  discard: {writeURL: %s/api/v1/write}\n", targets, interval, max(time.Minute, interval), recv.url)
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	req0, bytes0 := recv.counts(b)
	ctx, cancel := context.WithTimeout(b.Context(), d+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "-config", cfg, "-duration", d.String(), "-out", out, "-httpListenAddr", "")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("tsbench run: %v\n%s", err, stderr.String())
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage for the tsbench process")
	}
	run, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		b.Fatal(err)
	}
	if len(run.Storages) != 1 || run.Storages[0].Write == nil {
		b.Fatalf("results name %d storages, want the discard receiver's write account", len(run.Storages))
	}
	w := run.Storages[0].Write
	req1, bytes1 := recv.counts(b)
	var sent int64
	for _, n := range w.RequestsByStatus {
		sent += n
	}
	if req1-req0 != sent || bytes1-bytes0 != w.BytesSent || w.AckedSamples == 0 {
		b.Fatalf("receiver read %d requests, %d bytes; tsbench counted %d, %d, and acked %d samples",
			req1-req0, bytes1-bytes0, sent, w.BytesSent, w.AckedSamples)
	}
	return &processResult{
		targets: targets, write: w, wall: wall, maxRSS: ru.Maxrss << 10, // Linux: KiB
		cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
	}
}

// bareLoop is the floor tsbench's CPU per sample is held to: one request of the default
// maxSamplesPerRequest node_exporter series, values and timestamps updated in place,
// marshalled by prompb and compressed by s2.EncodeSnappy, on one locked thread, requests
// times. It returns samples per CPU-second of that thread.
func bareLoop(b *testing.B, profile *workload.Profile, requests int) float64 {
	const perRequest = 5000
	gen, err := workload.New(profile, workload.Options{Seed: 1, Start: time.Now(), Hosts: 10, ScrapeInterval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	var req prompb.WriteRequest
	for i := range perRequest {
		var ls []prompb.Label
		for _, l := range gen.Labels(i/len(profile.Series), i%len(profile.Series), 0) {
			ls = append(ls, prompb.Label{Name: l.Name, Value: l.Value})
		}
		req.Timeseries = append(req.Timeseries, prompb.TimeSeries{Labels: ls, Samples: []prompb.Sample{{Value: float64(i), Timestamp: time.Now().UnixMilli()}}})
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var raw, packed []byte
	cpu0 := threadCPU()
	for range requests {
		for i := range req.Timeseries {
			s := &req.Timeseries[i].Samples[0]
			s.Value += 0.25
			s.Timestamp += 1000
		}
		if n := req.Size(); cap(raw) < n {
			raw = make([]byte, n)
		}
		n, err := req.MarshalToSizedBuffer(raw[:req.Size()])
		if err != nil {
			b.Fatal(err)
		}
		if m := s2.MaxEncodedLen(n); cap(packed) < m {
			packed = make([]byte, m)
		}
		packed = s2.EncodeSnappy(packed[:cap(packed)], raw[:n])
	}
	return float64(requests*perRequest) / (threadCPU() - cpu0).Seconds()
}

// threadCPU is the calling thread's user and system CPU time (RUSAGE_THREAD).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // 1: RUSAGE_THREAD
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
