package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// TestResumeAfterKill (issue 19): a run SIGKILLed after two checkpoints leaves a partial
// results.json whose account balances and whose acked count is at most what VictoriaMetrics
// itself counts after the kill; started again with the same config and -out, it resumes, and
// its final account balances with the gap recorded and left out of the read-back.
func TestResumeAfterKill(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	dir := testDir(t)
	start := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second)
	cfgPath, out := filepath.Join(dir, "bench.yaml"), filepath.Join(dir, "out")
	cfg := fmt.Sprintf(`startTime: %s
duration: 24s
checkpointInterval: 2s
targetsCount: 10
scrapeInterval: 2s
queryInterval: 2s
verifySamples: 500
freshness: {writeInterval: 1s} # canary samples before the first checkpoints
remoteStorages:
  vm: {writeURL: %sapi/v1/write, readURL: %s}
`, start.Format(time.RFC3339), vm.URL, vm.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() (*exec.Cmd, *lockedBuffer) {
		cmd := exec.Command(tsbenchBin, "run", "-config", cfgPath, "-out", out, "-httpListenAddr", "127.0.0.1:0")
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd, &stderr
	}
	first, stderr := run()
	var checkpoints []time.Time
	for deadline := time.Now().Add(time.Minute); len(checkpoints) < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no two checkpoints within a minute; stderr:\n%s", stderr.String())
		}
		cp, err := results.ReadFile(filepath.Join(out, "results.json"))
		if err == nil && cp.Partial != nil && (len(checkpoints) == 0 || !cp.Partial.At.Equal(checkpoints[0])) {
			checkpoints = append(checkpoints, cp.Partial.At)
		}
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL: no drain, no final results
		t.Fatal(err)
	}
	_ = first.Wait()
	killed := time.Now()

	cp, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if cp.Partial == nil || cp.Partial.Reason != "checkpoint" {
		t.Fatalf("results.json after SIGKILL: partial %+v, want a checkpoint", cp.Partial)
	}
	w := storageResult(t, cp, "vm").Write
	if ok, diff := w.Balanced(); !ok || w.AckedSamples == 0 {
		t.Errorf("checkpoint account off by %d (acked %d): %+v", diff, w.AckedSamples, w)
	}
	if rows := scrapeMetric(t, vm.URL+"metrics", "vm_rows_inserted_total", map[string]string{"type": "promremotewrite"}); float64(w.AckedSamples) > rows {
		t.Errorf("checkpoint says %d acked, VictoriaMetrics counts only %.0f rows inserted", w.AckedSamples, rows)
	}

	second, stderr2 := run()
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("resumed run: %v\nstderr:\n%s", err, stderr2.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("resumed run did not end within 2 minutes; stderr:\n%s", stderr2.String())
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Partial != nil || len(res.Gaps) != 1 {
		t.Fatalf("final results: partial %+v, gaps %+v: want final, with one gap", res.Partial, res.Gaps)
	}
	// The gap begins before the checkpoint by what it had not settled (issue 29, item 6).
	if g := res.Gaps[0]; !g.Checkpoint.Equal(cp.Partial.At) || g.From.After(cp.Partial.At) || g.To.Before(killed) {
		t.Errorf("gap %s → %s (checkpoint %s), want from at most the checkpoint at %s to after the kill at %s", g.From, g.To, g.Checkpoint, cp.Partial.At, killed)
	}
	fw := storageResult(t, res, "vm").Write
	if ok, diff := fw.Balanced(); !ok || fw.AckedSamples <= w.AckedSamples || fw.PendingSamples != 0 {
		t.Errorf("final account off by %d, acked %d (checkpoint %d), pending %d: %+v", diff, fw.AckedSamples, w.AckedSamples, fw.PendingSamples, fw)
	}
	if v := storageResult(t, res, "vm").Verify; v == nil || v.CheckedSamples == 0 || v.MissingSamples != 0 {
		t.Errorf("read-back %+v: want samples checked around the gap and none missing", v)
	}
	checkFreshnessResumed(t, storageResult(t, cp, "vm").Freshness, storageResult(t, res, "vm").Freshness)
}

// checkFreshnessResumed: the canary's counts continue from the checkpoint's, and each probe
// still accounts for every acked sample, those pending at the checkpoint as abandoned.
func checkFreshnessResumed(t *testing.T, cp, final *results.Freshness) {
	t.Helper()
	if cp == nil || final == nil || cp.Acked == 0 || final.Acked <= cp.Acked {
		t.Fatalf("freshness: checkpoint %+v, final %+v: want the final acked count above the checkpoint's", cp, final)
	}
	for _, pr := range []*results.FreshnessProbe{final.Instant, final.Range, final.Series} {
		if got := pr.Visible + pr.NeverVisible + pr.Pending + pr.Abandoned; got != final.Acked {
			t.Errorf("%s: visible %d + never %d + pending %d + abandoned %d = %d, want acked %d", pr.Query, pr.Visible, pr.NeverVisible, pr.Pending, pr.Abandoned, got, final.Acked)
		}
	}
	if final.Instant.Visible <= cp.Instant.Visible {
		t.Errorf("instant probe: %d visible at the end, %d at the checkpoint: want more", final.Instant.Visible, cp.Instant.Visible)
	}
}
