package cli

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// TestHistoryCanaryAfterCatchUp: 90 minutes of history into Prometheus' own TSDB (in-process),
// each write held 10 ms so that the catch-up lasts seconds, with a canary sample due every
// 100 ms. The head refuses samples more than half a block range (1 h) older than its newest
// as out of bounds; the canary, stamped with the wall clock, waits until the storage caught
// up, so nothing of the history is refused and the canary still writes (issue 36: a canary
// written 39 s into the catch-up cost 80 % of 24 h).
func TestHistoryCanaryAfterCatchUp(t *testing.T) {
	t.Parallel()
	recv, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = recv.Close() })
	url := slowAcks(t, recv.URL, 10*time.Millisecond)
	dir := t.TempDir()
	// 2 targets × 150 series every 10 s over 90 m: 162k samples, 1080 requests of 150.
	cfg := fmt.Sprintf(`targetsCount: 2
profile: %s
scrapeInterval: 10s
history: 90m
duration: 2s
maxSamplesPerRequest: 150
verifySamples: 0
freshness: {writeInterval: 100ms}
remoteStorages:
  prom: {writeURL: %s%s, readURL: %s}
`, smallProfile(t, dir), url, storagetest.WritePath, url)
	path := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"run", "-config", path, "-out", out, "-httpListenAddr", ""}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("tsbench run exited %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Storage("prom")
	w, f := s.Write, s.Freshness
	if w == nil || w.History == nil || f == nil {
		t.Fatalf("write %+v, freshness %+v: want both, with a history section", w, f)
	}
	if h := w.History; len(w.DroppedSamples) != 0 || !h.CaughtUp || h.AckedSamples != h.GeneratedSamples || h.Seconds < 1 {
		t.Errorf("dropped %v, history %+v: want all of it acked, in a catch-up of a second or more", w.DroppedSamples, h)
	}
	if f.Acked == 0 || f.Written != f.Acked {
		t.Errorf("canary wrote %d, acked %d: want every one of some acked", f.Written, f.Acked)
	}
	if strings.Contains(stdout.String(), "refused") {
		t.Errorf("the summary says samples were refused:\n%s", stdout.String())
	}
}
