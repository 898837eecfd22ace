package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// TestLostAfterAck: two real VictoriaMetrics get the same load, checked every 5 s while it
// runs. After the first check, every series of one is deleted through its admin API: the
// next check reads again the scrapes the first found complete, finds them gone, and reports
// them lost after ack, at its own time; the other storage reports nothing lost.
func TestLostAfterAck(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics")
	lose := startStorage(t, storage.KindVictoriaMetrics, "lose")
	keep := startStorage(t, storage.KindVictoriaMetrics, "keep")
	dir := testDir(t)
	cfgPath := filepath.Join(dir, "bench.yaml")
	cfg := fmt.Sprintf(`duration: 25s
targetsCount: 4
scrapeInterval: 1s
verifyInterval: 5s
remoteStorages:
  lose: {writeURL: %[1]sapi/v1/write, readURL: %[1]s}
  keep: {writeURL: %[2]sapi/v1/write, readURL: %[2]s}
`, lose.URL, keep.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tsbenchBin, "run", "-config", cfgPath, "-out", out, "-httpListenAddr", "127.0.0.1:0")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &stderr, `msg="checked during the run" component=verify storage=lose`, time.Minute)
	deleted := time.Now()
	deleteSeries(t, lose.URL, `{job=~".+"}`)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tsbench: %v\nstderr:\n%s", err, stderr.String())
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	lost := storageResult(t, res, "lose").Verify
	t.Logf("lose: %s; keep: %s", lost.ContinuousVerdict(), storageResult(t, res, "keep").Verify.ContinuousVerdict())
	if lost == nil || lost.LostAfterAck == 0 || lost.LostAfterAckAt == nil || lost.LostAfterAckAt.Before(deleted) {
		t.Fatalf("lose: lostAfterAck %+v at %v, want > 0 at a check after the delete at %s; checks %+v", lost.LostAfterAck, lost.LostAfterAckAt, deleted, lost.Checks)
	}
	var first *results.Check
	var before int
	for i, c := range lost.Checks {
		if c.At.Before(deleted) {
			before++
			if c.LostAfterAck != 0 || c.Checked == 0 {
				t.Errorf("check %d at %s, before the delete: %+v, want samples checked and none lost", i, c.At, c)
			}
		}
		if c.LostAfterAck > 0 && first == nil {
			first = &lost.Checks[i]
		}
	}
	if before == 0 || first == nil || !first.At.Equal(*lost.LostAfterAckAt) || first.LostAfterAck > first.Rechecked {
		t.Errorf("%d checks before the delete; first check losing %+v, lostAfterAckAt %s", before, first, lost.LostAfterAckAt)
	}
	kept := storageResult(t, res, "keep").Verify
	if kept == nil || kept.LostAfterAck != 0 || kept.Continuous == nil || kept.Continuous.Total.Rechecked == 0 || kept.Continuous.Total.Missing != 0 {
		t.Errorf("keep: %+v, want scrapes read again, none missing", kept.Continuous)
	}
	want := fmt.Sprintf("lost after ack (first missed by the check at %s)", lost.LostAfterAckAt.UTC().Format(time.RFC3339))
	if !strings.Contains(stdout.String(), "read-back during the run lose: ") || !strings.Contains(stdout.String(), want) {
		t.Errorf("summary lacks the checks' line with %q:\n%s", want, stdout.String())
	}
}

// deleteSeries deletes the series matching selector through VictoriaMetrics' admin API.
func deleteSeries(t *testing.T, baseURL, selector string) {
	t.Helper()
	u := baseURL + "api/v1/admin/tsdb/delete_series?" + url.Values{"match[]": {selector}}.Encode()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("delete_series: %s", resp.Status)
	}
}
