// Package e2e builds tsbench and runs it against real VictoriaMetrics and Prometheus from
// their Debian packages, on free loopback ports with temporary data dirs.
//
// Every test runs beside the others: each starts its own storages and tsbench, and the
// helpers here share nothing but the binary built once in TestMain, so tests run side by side
// (8 unless -parallel says otherwise: setParallel), each in one of the machine's 8 slots,
// which every e2e run on the machine shares (parallel, slots_test.go). A test waits on events (a log line, a storage's
// answer), never on a fixed sleep that a busy machine could outrun. A failed test keeps its
// runs' files and its storages' logs under out/e2e-failed/ (keepOnFailure) and says where.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tsbench/tsbench/internal/conformance"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/local"
)

// tsbenchBin is the binary built once for every test; set in TestMain, only read after.
var tsbenchBin string

// builtinSuite is Prometheus' PromQL test files as conformance parses them, parsed once in
// TestMain; only read after.
var builtinSuite *conformance.Suite

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tsbench-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tsbenchBin = filepath.Join(dir, "tsbench")
	// Without the race detector by default: it multiplies the binary's CPU several times over
	// on a 2-core machine, and the same code runs under -race in-process in the cli and bench
	// tests. TSBENCH_E2E_RACE=1 builds it with the detector.
	args := []string{"build", "-o", tsbenchBin}
	if os.Getenv("TSBENCH_E2E_RACE") != "" {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "../cmd/tsbench")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tsbench:", err)
		os.Exit(1)
	}
	setParallel(8)
	// The in-process Prometheus receivers parse PromQL as the test runner does: the parser's
	// features are package variables, set once before any test starts (conformance_test.go).
	conformance.EnableParserFeatures()
	// Parsing the suite's files flips those variables to learn what each eval needs: done here,
	// before any test's receiver parses a query beside it (a data race otherwise).
	if builtinSuite, err = conformance.Builtin(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance suite:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// setParallel runs up to n tests side by side unless -parallel was given. These tests mostly
// wait (for a run's duration, a storage's answer) while using little CPU: go test's default,
// GOMAXPROCS, would run 2 at a time on a 2-core machine and take four times as long.
func setParallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// requireBinaries skips when a storage binary is missing, and fails under CI=true.
func requireBinaries(t *testing.T, bins ...string) {
	t.Helper()
	for _, bin := range bins {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not installed: make deps installs it", bin)
			}
			t.Skipf("%s not installed", bin)
		}
	}
}

// startStorage starts a real storage for the test and stops it at cleanup.
func startStorage(t *testing.T, kind, name string) *local.Process {
	t.Helper()
	return startStorageWith(t, kind, name, nil)
}

// keepRoot is where a failed test's files are kept: $TSBENCH_E2E_KEEP, else out/e2e-failed in
// the repository (CI's clone keeps it).
func keepRoot() string {
	if d := os.Getenv("TSBENCH_E2E_KEEP"); d != "" {
		return d
	}
	abs, err := filepath.Abs(filepath.Join("..", "out", "e2e-failed"))
	if err != nil {
		return filepath.Join(os.TempDir(), "tsbench-e2e-failed")
	}
	return abs
}

// keepOnFailure copies path (a run's directory, a storage's log) under keepRoot when the test
// fails, and names the copy in the test's output, so a failure explains itself afterwards.
// Cleanups run last registered first: call it after what removes path was registered.
func keepOnFailure(t *testing.T, path string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// A storage's log.txt is named by its directory (tsbench-<storage>-<n>), a run's by its own.
		name := filepath.Base(path)
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			name = filepath.Base(filepath.Dir(path)) + "-" + name
		}
		dst := filepath.Join(keepRoot(), strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), name)
		for i, first := 2, dst; exists(dst); i++ { // -count runs the test again: keep every failure
			dst = fmt.Sprintf("%s.%d", first, i)
		}
		if err := copyPath(dst, path); err != nil {
			t.Logf("keep %s: %v", path, err)
			return
		}
		t.Logf("kept for this failure: %s", dst)
	})
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// copyPath copies a file or a directory tree to dst, which must not exist yet.
func copyPath(dst, src string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return os.CopyFS(dst, os.DirFS(src))
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// testDir is t.TempDir, kept under keepRoot if the test fails.
func testDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	keepOnFailure(t, dir)
	return dir
}

// runResult is what one tsbench run left behind.
type runResult struct {
	code    int
	stdout  string
	stderr  string
	results *results.Run
	outDir  string
}

// runTsbench runs the binary with args (plus -out and -httpListenAddr) and a config, bounded by
// timeout, and loads results.json when there is one.
func runTsbench(t *testing.T, timeout time.Duration, configYAML string, args ...string) runResult {
	t.Helper()
	dir := testDir(t)
	out := filepath.Join(dir, "out")
	args = append(args, "-out", out, "-httpListenAddr", "127.0.0.1:0")
	if configYAML != "" {
		cfgPath := filepath.Join(dir, "bench.yaml")
		if err := os.WriteFile(cfgPath, []byte(configYAML), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-config", cfgPath)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tsbenchBin, append([]string{"run"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	rr := runResult{stdout: stdout.String(), stderr: stderr.String(), outDir: out}
	// Beside results.json, for keepOnFailure: what tsbench printed.
	if err := errors.Join(os.WriteFile(filepath.Join(dir, "stdout.txt"), stdout.Bytes(), 0o644),
		os.WriteFile(filepath.Join(dir, "stderr.txt"), stderr.Bytes(), 0o644)); err != nil {
		t.Log(err)
	}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		rr.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("tsbench run: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Logf("tsbench run exit %d; stdout:\n%s", rr.code, rr.stdout)
	if res, err := results.ReadFile(filepath.Join(out, "results.json")); err == nil {
		rr.results = res
		checkSchema(t, filepath.Join(out, "results.json"))
	} else {
		t.Logf("no results: %v; stderr:\n%s", err, stderr.String())
	}
	return rr
}

// storageResult finds a storage's section in results.json.
func storageResult(t *testing.T, res *results.Run, name string) results.Storage {
	t.Helper()
	for _, s := range res.Storages {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("storage %s not in results", name)
	return results.Storage{}
}

// scrapeMetric sums the samples of a metric family on a /metrics page whose labels include match.
func scrapeMetric(t *testing.T, metricsURL, name string, match map[string]string) float64 {
	t.Helper()
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", metricsURL, err)
	}
	mf, ok := families[name]
	if !ok {
		t.Fatalf("%s has no %s", metricsURL, name)
	}
	sum := 0.0
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for k, v := range match {
			ok = ok && labels[k] == v
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

// seriesCount asks a storage's /api/v1/series how many series match a selector since start.
func seriesCount(t *testing.T, readURL, selector string, start time.Time) int {
	t.Helper()
	form := url.Values{
		"match[]": {selector}, "start": {strconv.FormatInt(start.Add(-time.Minute).Unix(), 10)},
		"end": {strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10)},
	}
	resp, err := http.PostForm(readURL+"api/v1/series", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string            `json:"status"`
		Data   []json.RawMessage `json:"data"`
		Error  string            `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("series %s: %v %s", selector, err, body.Error)
	}
	return len(body.Data)
}

// eventually retries f until it returns "" or the deadline passes, then fails with its last word.
func eventually(t *testing.T, d time.Duration, f func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Error(msg)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// within reports whether a and b differ by at most frac of the larger.
func within(a, b, frac float64) bool {
	return math.Abs(a-b) <= frac*math.Max(math.Abs(a), math.Abs(b))
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitOutput waits until out holds want, or fails the test after d (a busy machine starts a
// race-built tsbench slowly: wait for what it says, not for a fixed time).
func waitOutput(t *testing.T, out *lockedBuffer, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %v; output:\n%s", want, d, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
