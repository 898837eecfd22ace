package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// TestDeadStorage runs against a real VictoriaMetrics and a storage that is down: the dead one
// never slows the live one, its samples are retried, then dropped and counted, the accounting
// balances for both, the report is still written, and a threshold on drops sets exit code 3.
func TestDeadStorage(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: connections are refused
	cfg := fmt.Sprintf(`
duration: 20s
targetsCount: 20
scrapeInterval: 2s
maxRetryDuration: 3s
verifySamples: 0
thresholds: ["write.droppedSamples == 0"]
remoteStorages:
  vm: {writeURL: %sapi/v1/write}
  dead: {writeURL: http://%s/api/v1/write, metricsURLs: [http://%s/metrics]}
`, vm.URL, deadAddr, deadAddr)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 3 {
		t.Errorf("exit code %d, want 3 (threshold failed); stderr:\n%s", rr.code, rr.stderr)
	}
	if rr.results == nil {
		t.Fatal("no results.json")
	}
	live := storageResult(t, rr.results, "vm").Write
	if live.Dropped() != 0 || live.PendingSamples != 0 || live.AckedSamples != live.GeneratedSamples {
		t.Errorf("live storage: %+v, want every sample acked", live)
	}
	if live.MaxLagSeconds > 5 {
		t.Errorf("live storage lag %.1fs: the dead storage slowed it", live.MaxLagSeconds)
	}
	dead := storageResult(t, rr.results, "dead").Write
	if ok, diff := dead.Balanced(); !ok {
		t.Errorf("dead storage accounting off by %d: %+v", diff, dead)
	}
	if dead.AckedSamples != 0 || dead.DroppedSamples["retry_timeout"] == 0 || dead.Retries == 0 {
		t.Errorf("dead storage: %+v, want retries then retry_timeout drops", dead)
	}
	if dead.GeneratedSamples != live.GeneratedSamples {
		t.Errorf("generated %d for the dead storage, %d for the live one: both get the same load", dead.GeneratedSamples, live.GeneratedSamples)
	}
	// Its /metrics is down too: unknown figures with the reason, never zeros.
	res := storageResult(t, rr.results, "dead").Resources
	if res == nil || res.CPUCoresMean != nil || !strings.Contains(res.Reasons["cpuCoresMean"], deadAddr) {
		t.Errorf("dead storage resources %+v: want cpu unknown with a reason naming %s", res, deadAddr)
	}
	if !strings.Contains(rr.stdout, "✗") {
		t.Errorf("summary does not mark the failed threshold:\n%s", rr.stdout)
	}
	if !strings.Contains(rr.stderr, "dead") {
		t.Errorf("log does not name the dead storage:\n%s", rr.stderr)
	}
}

// TestInterruptStillReports runs without a duration and sends SIGINT: the load stops, the
// pending samples drain, and results.json, report.html and the summary are still written.
func TestInterruptStillReports(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	dir := testDir(t)
	cfgPath := filepath.Join(dir, "bench.yaml")
	cfg := fmt.Sprintf("duration: 0s\ntargetsCount: 20\nscrapeInterval: 2s\nremoteStorages:\n  vm: {writeURL: %sapi/v1/write, readURL: %s}\n", vm.URL, vm.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(tsbenchBin, "run", "-config", cfgPath, "-out", out, "-httpListenAddr", "127.0.0.1:0")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitOutput(t, &stderr, "samples/s, lag", 2*time.Minute) // past the first progress line
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tsbench after SIGINT: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("tsbench did not stop within 2 minutes of SIGINT\nstderr:\n%s", stderr.String())
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	w := storageResult(t, res, "vm").Write
	if w.AckedSamples == 0 || w.AckedSamples != w.GeneratedSamples || w.PendingSamples != 0 {
		t.Errorf("write %+v: want everything generated acked after the drain", w)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stderr.String(), "samples/s, lag") || !strings.Contains(stdout.String(), "acked") {
		t.Errorf("want a progress line on stderr and the summary on stdout\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

// TestLocalStorageDiesMidRun kills the VictoriaMetrics tsbench started, 10 s into the
// embedded default run: the run goes on for Prometheus, the dead storage's samples stay
// accounted (pending or dropped), the summary says what happened, the storage is failed
// (issue 35) and tsbench exits 3 with its report written.
func TestLocalStorageDiesMidRun(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	out := filepath.Join(testDir(t), "out")
	cmd := exec.Command(tsbenchBin, "run", "-duration", "25s", "-out", out, "-httpListenAddr", "127.0.0.1:0")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := make(chan int, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			_, _ = stderr.Write([]byte(line + "\n"))
			if strings.Contains(line, `msg="storage starting" storage=victoriametrics`) {
				if m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(line); m != nil {
					pid, _ := strconv.Atoi(m[1])
					pids <- pid
				}
			}
		}
	}()
	select {
	case pid := <-pids:
		// Once the load runs (its first progress line, 10 s in), not at a fixed time after the
		// start, which a busy machine can spend starting the storages.
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		waitOutput(t, &stderr, "samples/s, lag", 2*time.Minute)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("no victoriametrics pid in the log")
	}
	waitErr := cmd.Wait()
	<-logDone
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("tsbench exited %d (%v), want 3: a storage failed\nstderr:\n%s", code, waitErr, stderr.String())
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	prom := storageResult(t, res, "prometheus").Write
	if prom.AckedSamples != prom.GeneratedSamples || prom.PendingSamples != 0 {
		t.Errorf("prometheus %+v: the dead storage must not hold it back", prom)
	}
	vm := storageResult(t, res, "victoriametrics")
	if ok, diff := vm.Write.Balanced(); !ok || vm.Write.AckedSamples >= vm.Write.GeneratedSamples {
		t.Errorf("victoriametrics %+v: want balanced (off by %d) with samples never acked", vm.Write, diff)
	}
	if len(vm.Problems) == 0 || !strings.Contains(stdout.String(), "problem victoriametrics: the victoriametrics process exited") {
		t.Errorf("problems %v; summary:\n%s", vm.Problems, stdout.String())
	}
	if vm.Status != results.StatusFailed || !strings.Contains(stdout.String(), "victoriametrics: FAILED — ") {
		t.Errorf("status %q %q, want failed, first in the summary:\n%s", vm.Status, vm.StatusReasons, stdout.String())
	}
}
