package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// receiverURL starts an in-process Prometheus receiver, closed at cleanup; front, when not
// nil, puts a server of its own in front of it.
func receiverURL(t *testing.T, front func(http.Handler) http.Handler) string {
	t.Helper()
	recv := storagetest.StartT(t, storagetest.Options{})
	if front == nil {
		return recv.URL
	}
	u, err := url.Parse(recv.URL)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front(httputil.NewSingleHostReverseProxy(u)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// storageYAML is a remoteStorages entry for the receiver at u.
func storageYAML(u string) string {
	return fmt.Sprintf("{writeURL: %s%s, readURL: %s}", u, storagetest.WritePath, u)
}

// runStorages runs tsbench in-process against the named storages with matrixBase and extra,
// and returns its exit code, stdout, the results and results.json's bytes.
func runStorages(t *testing.T, extra string, storages map[string]string) (int, string, *results.Run, []byte) {
	t.Helper()
	dir := t.TempDir()
	cfg := strings.ReplaceAll(matrixBase, "PROFILE", smallProfile(t, dir)) + extra + "remoteStorages:\n"
	for name, st := range storages {
		cfg += "  " + name + ": " + st + "\n"
	}
	path := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"run", "-config", path, "-out", out, "-httpListenAddr", ""}, &stdout, &stderr)
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatalf("exit %d, no results.json: %v\n%s\n%s", code, err, stdout.String(), stderr.String())
	}
	res, err := results.Parse(b, "results.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report.html: %v", err)
	}
	return code, stdout.String(), res, b
}

// refusedURL is a loopback address where nothing listens: every connection is refused.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// A storage that refuses every connection beside a working one (issue 35 item 2): it is
// failed, with its reasons, ranked on no row, its read-back counts null; the run exits 3 and
// still writes its report.
func TestDeadStorageFails(t *testing.T) {
	t.Parallel()
	code, stdout, res, raw := runStorages(t, "duration: 4s\nmaxRetryDuration: 1s\n", map[string]string{
		"live": storageYAML(receiverURL(t, nil)),
		"dead": storageYAML(refusedURL(t)),
	})
	if code != ExitThreshold {
		t.Errorf("exit %d, want %d (a storage failed)", code, ExitThreshold)
	}
	dead, live := res.Storage("dead"), res.Storage("live")
	if dead.Status != results.StatusFailed || live.Status != results.StatusOK {
		t.Fatalf("status dead %q %q, live %q %q: want failed and ok", dead.Status, dead.StatusReasons, live.Status, live.StatusReasons)
	}
	reasons := strings.Join(dead.StatusReasons, "; ")
	for _, want := range []string{
		fmt.Sprintf("acked 0 of %d samples", dead.Write.GeneratedSamples),
		fmt.Sprintf("%d of %d queries failed", dead.Query.Executed, dead.Query.Executed),
		"no request succeeded (network_error",
	} {
		if !strings.Contains(reasons, want) {
			t.Errorf("reasons %q lack %q", reasons, want)
		}
	}
	if !strings.Contains(stdout, "dead: FAILED — acked 0 of") {
		t.Errorf("the summary does not open with the failed storage:\n%s", stdout)
	}
	for _, row := range res.Headline.Rows {
		if row.Best == "dead" {
			t.Errorf("row %s: the failed storage is best", row.Label)
		}
	}
	if p50 := dead.Query.LatencySeconds.P50; p50 != nil {
		t.Errorf("latency p50 %v of a storage no query succeeded on: want none", *p50)
	}
	var doc struct {
		Storages []struct {
			Name   string         `json:"name"`
			Verify map[string]any `json:"verify"`
		} `json:"storages"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Storages {
		if s.Name != "dead" {
			continue
		}
		for _, key := range []string{"missingSamples", "changedValues", "lostAfterAck", "nanAltered"} {
			if v, ok := s.Verify[key]; !ok || v != nil {
				t.Errorf("dead verify.%s = %v (present %v): want null, nothing was checked", key, v, ok)
			}
		}
		if s.Verify["notChecked"] == "" || s.Verify["notChecked"] == nil {
			t.Errorf("dead verify has no notChecked reason: %v", s.Verify)
		}
	}
}

// rounds3 is three rounds of a short run at a family-wise confidence of 99.9 %: an A/A table
// shows a best on some row in fewer than one in a thousand runs, so TestHeadlineAA fails by
// chance less often than that.
const rounds3 = "duration: 3s\nrounds: 3\nconfidence: 0.999\n"

// Two identical in-process receivers, three rounds: no row has a best and every ratio's
// interval contains 1 (issue 35's A/A test).
func TestHeadlineAA(t *testing.T) {
	t.Parallel()
	_, stdout, res, _ := runStorages(t, rounds3, map[string]string{
		"a": storageYAML(receiverURL(t, nil)), "b": storageYAML(receiverURL(t, nil)),
	})
	if len(res.Rounds) != 3 || res.Headline.Rounds != 3 {
		t.Fatalf("%d rounds in results, headline of %d: want 3", len(res.Rounds), res.Headline.Rounds)
	}
	for _, row := range res.Headline.Rows {
		if row.Best != "" {
			t.Errorf("A/A row %s has a best, %s (p %v): %+v", row.Label, row.Best, ptr(row.P), row.Values)
		}
		for _, q := range row.Ratios {
			if q.Low != nil && (*q.Low > 1 || *q.High < 1) {
				t.Errorf("A/A row %s: ratio %s/%s interval [%g, %g] excludes 1", row.Label, q.A, q.B, *q.Low, *q.High)
			}
		}
	}
	if strings.Contains(stdout, " *\n") {
		t.Errorf("the A/A summary marks a best:\n%s", stdout)
	}
}

// The same with b's queries 4× slower than a's (each held 50 ms and 200 ms before it is
// answered, which dominates the receiver's own few milliseconds): the latency rows' best is
// a, and its ratio to b has an interval below 1. At the default 95 %: the test is of the
// power to see a difference, and at 99.9 % three rounds (2 degrees of freedom) would need
// t ≈ 80.
func TestHeadlineAB(t *testing.T) {
	t.Parallel()
	slow := func(d time.Duration) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/api/v1/query") {
					time.Sleep(d)
				}
				next.ServeHTTP(w, r)
			})
		}
	}
	_, _, res, _ := runStorages(t, "duration: 3s\nrounds: 3\n", map[string]string{
		"a": storageYAML(receiverURL(t, slow(50*time.Millisecond))), "b": storageYAML(receiverURL(t, slow(200*time.Millisecond))),
	})
	for _, row := range res.Headline.Rows {
		if row.Figure != "query.p50" {
			continue
		}
		if row.Best != "a" || len(row.Ratios) != 1 || row.Ratios[0].High == nil || *row.Ratios[0].High >= 1 {
			t.Errorf("latency p50: best %q (%s), ratios %+v: want a, its ratio's interval below 1", row.Best, row.Reason, row.Ratios)
		}
		return
	}
	t.Error("no latency p50 row in the headline")
}

func ptr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// An interrupt before the configured duration (issue 35 item 4: SIGINT at 25 s of 5 m read
// as a complete run): the summary's first line and results.json say so, and the config's
// duration is written as the config file writes it.
func TestInterruptedRunSaysSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := strings.ReplaceAll(matrixBase, "PROFILE", smallProfile(t, dir)) + "duration: 5m\nremoteStorages:\n  a: " + storageYAML(receiverURL(t, nil)) + "\n"
	path := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := Main(ctx, []string{"run", "-config", path, "-out", out, "-httpListenAddr", ""}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if first, _, _ := strings.Cut(stdout.String(), "\n"); !strings.HasPrefix(first, "INTERRUPTED at ") || !strings.Contains(first, " of 5m0s") {
		t.Errorf("first line %q: want INTERRUPTED at … of 5m0s", first)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Interrupted *struct{ At, Of string } `json:"interrupted"`
		Config      struct {
			Duration any `json:"duration"`
		} `json:"config"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Interrupted == nil || doc.Interrupted.Of != "5m0s" {
		t.Fatalf("interrupted %+v: want {at, of 5m0s}", doc.Interrupted)
	}
	if at, err := time.ParseDuration(doc.Interrupted.At); err != nil || at <= 0 || at > time.Minute {
		t.Errorf("interrupted at %q: want a few seconds into the run", doc.Interrupted.At)
	}
	if doc.Config.Duration != "5m0s" {
		t.Errorf("config.duration %v: want \"5m0s\", as every duration in the file", doc.Config.Duration)
	}
}
