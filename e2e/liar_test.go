package e2e

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/liar"
	"github.com/tsbench/tsbench/internal/storage/local"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/targets"
)

// The matrix's cells that need real binaries (issue 29; the in-process cells are
// internal/cli/matrix_test.go's TestMatrix): liar.Liar in front of real
// VictoriaMetrics 1.79 and Prometheus 2.42, written to by a real agent in scrape mode and by
// a real tsbench process, plain and SIGKILLed then resumed. Each cell states the verdict and
// the exact count the liar's own record gives over what the read-back checked; a cell in
// which the liar told no lie there fails, as it could not fail otherwise.

// tenant is the label the addLabel cells add, as Thanos receive adds it.
var tenant = labels.Label{Name: "tenant_id", Value: "default-tenant"}

// liarProfile writes the default profile's first 150 series that are not NaN throughout to dir
// and returns its path: a cell's samples, all of them read back (verifySamples above them), in
// a few thousand. VictoriaMetrics drops NaN values, a verdict of its own (NaN altered) that the
// liar's count of samples it moved would include.
func liarProfile(t *testing.T, dir string) string {
	t.Helper()
	path, err := storagetest.SmallProfile(filepath.Join("..", "profiles", "node_exporter.json"), dir, 150, "nan")
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// startLiarBefore starts a liar in front of the storage p, closed at cleanup.
func startLiarBefore(t *testing.T, p *local.Process, lies liar.Lies) *liar.Liar {
	t.Helper()
	l, err := liar.Start(strings.TrimSuffix(p.URL, "/"), lies)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// throughLiar is a remoteStorages entry writing to p through l and reading p itself: these
// cells' lies are told on the write path, and a read through the liar's proxy once ended
// in "unexpected EOF" (VictoriaMetrics' export, the read-back's cross-check).
func throughLiar(l *liar.Liar, p *local.Process) string {
	return fmt.Sprintf("{writeURL: %s%s, readURL: %s, metricsURLs: [%smetrics]}", l.URL, liar.WritePath, p.URL, p.URL)
}

// direct is a remoteStorages entry writing and reading p itself.
func direct(p *local.Process) string {
	return fmt.Sprintf("{writeURL: %sapi/v1/write, readURL: %s, metricsURLs: [%smetrics]}", p.URL, p.URL, p.URL)
}

// served keeps the series tsbench served or generated: not the agent's own (up, scrape_*),
// which the read-back leaves out, nor the canary's.
func served(series string) bool {
	ls, err := parser.ParseMetric(series)
	if err != nil {
		return false
	}
	name := ls.Get(model.MetricNameLabel)
	return !slices.Contains(targets.AgentSeries, name) && !strings.HasPrefix(name, "tsbench_")
}

// toldIn is the liar's count over want, the window the test set up (liar.Window,
// issue 37), for storage name in res, the samples it served: the read-back's window and the
// run's gaps must be want's to a scrape interval, and the count is over want, not over
// tsbench's own window.
func toldIn(t *testing.T, res *results.Run, name string, l *liar.Liar, want liar.Window) int64 {
	t.Helper()
	v := storageResult(t, res, name).Verify
	if v == nil || v.CheckedSamples == 0 {
		t.Fatalf("%s: no samples read back: %+v", name, v)
	}
	if msg := want.Check(v.CheckedFrom, v.CheckedTo, res.Gaps); msg != "" {
		t.Errorf("%s: the read-back's window is not the one the test set up: %s(read back %s..%s, gaps %+v; the test's %+v)", name, msg, v.CheckedFrom, v.CheckedTo, res.Gaps, want)
	}
	want = want.Upto(v.CheckedTo)
	n := want.Count(l, served)
	t.Logf("%s: the liar's count over %s..%s less the gaps %+v: %d", name, want.From, want.To, want.Gaps, n)
	if n == 0 {
		t.Fatalf("%s: the liar told no lie in the window (%d samples checked over %s..%s, gaps %+v, liar's total %d): the cell could not fail",
			name, v.CheckedSamples, v.CheckedFrom, v.CheckedTo, res.Gaps, l.Total())
	}
	return n
}

// startNow is a startTime line for a run that starts now, to the millisecond, and the time.
func startNow() (string, time.Time) {
	start := time.Now().UTC().Truncate(time.Millisecond)
	return "startTime: " + start.Format(time.RFC3339Nano) + "\n", start
}

// cellWant is "" when got is the liar's count, else what differs.
func cellWant(what string, want, got int64) string {
	if want != got {
		return fmt.Sprintf("%s: want %d (the liar's count), got %d; ", what, want, got)
	}
	return ""
}

// cellMissing is the verdict on samples acked and dropped: every one the liar dropped missing,
// nothing else wrong.
func cellMissing(v *results.Verify, told int64) string {
	return cellWant("verify.missingSamples", told, v.MissingSamples) + cellWant("verify.changedValues", 0, v.ChangedValues) +
		cellWant("verify.renamedSamples", 0, v.RenamedSamples)
}

// cellRenamed is the verdict on an added label: every sample the liar moved found under the
// storage's labels, the change named, none missing.
func cellRenamed(v *results.Verify, told int64) string {
	var changes []string
	for _, c := range v.LabelChanges {
		changes = append(changes, c.String())
	}
	msg := cellWant("verify.renamedSamples", told, v.RenamedSamples) + cellWant("verify.missingSamples", 0, v.MissingSamples)
	if !strings.Contains(strings.Join(changes, "; "), tenant.Name) {
		msg += fmt.Sprintf("labelChanges %q, want one naming %s; ", changes, tenant.Name)
	}
	return msg
}

// cellClean is the verdict on the storage without a liar beside one: it returns what was sent.
func cellClean(v *results.Verify) string {
	if v == nil || v.CheckedSamples == 0 || !v.Exact() || v.RenamedSamples != 0 || len(v.LabelChanges) != 0 {
		return fmt.Sprintf("without the liar: %s, want exact (%+v)", v.Verdict(), v)
	}
	return ""
}

// checkCell fails the test with msg and the storage's read-back, when msg says something.
func checkCell(t *testing.T, res *results.Run, name, msg string) {
	t.Helper()
	if msg == "" {
		return
	}
	v := storageResult(t, res, name).Verify
	t.Errorf("%s: %s(verdict %q, checked %d over %s..%s, examples %q, errors %q)",
		name, msg, v.Verdict(), v.CheckedSamples, v.CheckedFrom, v.CheckedTo, v.Examples, v.Errors)
}

// TestLiarScrape is scrape mode × the liar (issue 29, item 5): a real agent writes to two
// storages, one of them through the liar. The liar's change is the storage's: its read-back
// counts exactly what the liar did over what was checked, the storage beside it stays exact,
// and the agent is not charged with it (sender.changes holds the agent's own changes only).
// One remote-write queue, as scrapeRun says why.
func TestLiarScrape(t *testing.T) {
	t.Parallel() // each cell starts its storages, in a slot of its own (parallel)
	requireBinaries(t, "victoria-metrics", "prometheus", "vmagent")
	profile := liarProfile(t, t.TempDir())
	round := liar.Lies{Lie: liar.LieRound}
	changed := func(v *results.Verify, told int64) string {
		return cellWant("verify.changedValues", told, v.ChangedValues) + cellWant("verify.missingSamples", 0, v.MissingSamples)
	}
	cells := []struct {
		name, sender string
		timestamps   bool
		lies         liar.Lies
		// liarKind is the storage behind the liar; the other kind is written directly.
		liarKind string
		check    func(v *results.Verify, told int64) string
	}{
		// Every value rounded, not changed by one ulp: VictoriaMetrics' decimal encoding turns
		// a value one unit off back into the served one, so that lie never reads back from it.
		// vmagent reads some values one unit off: the rounding is the storage's, the parsing
		// the agent's, and Prometheus beside it keeps what vmagent sent.
		{name: "vmagent/round/vm", sender: "vmagent", liarKind: storage.KindVictoriaMetrics, lies: round, check: changed},
		// Prometheus is the storage whose answer is taken for what the agent sent where the
		// storages disagree: its own rounding must not pass to the agent and to
		// VictoriaMetrics beside it (verify.agentSent). Prometheus' agent, which reads values
		// exactly: behind vmagent the liar's rounding of a value vmagent read one unit off
		// gives some back as served, and VictoriaMetrics returns those as served too, a change
		// no read-back can see.
		{name: "prometheus-agent/round/prom", sender: "prometheus-agent", timestamps: true, liarKind: storage.KindPrometheus, lies: round, check: changed},
		{
			name: "prometheus-agent/addLabel/prom", sender: "prometheus-agent", timestamps: true, liarKind: storage.KindPrometheus,
			lies: liar.Lies{Lie: liar.LieAddLabel, Label: tenant}, check: cellRenamed,
		},
		{
			name: "prometheus-agent/dropSamples/vm", sender: "prometheus-agent", timestamps: true, liarKind: storage.KindVictoriaMetrics,
			lies: liar.Lies{Lie: liar.LieDropSamples, Share: 0.05}, check: cellMissing,
		},
	}
	for _, c := range cells {
		t.Run(c.name, func(t *testing.T) {
			parallel(t)
			other := storage.KindPrometheus
			if c.liarKind == storage.KindPrometheus {
				other = storage.KindVictoriaMetrics
			}
			lied, honest := startStorage(t, c.liarKind, "lied"), startStorage(t, other, "honest")
			lr := startLiarBefore(t, lied, c.lies)
			startLine, start := startNow()
			cfg := startLine + fmt.Sprintf(`
duration: 12s
profile: %s
targetsCount: 2
scrapeInterval: 2s
scrapeConfigUpdatePercent: 0
queryInterval: 2s
observeInterval: 5s
verifySamples: 100000
freshness: {interval: 0s}
writeConcurrency: 1
sender: %s
exposeTimestamps: %t
remoteStorages:
  lied: %s
  honest: %s
`, profile, c.sender, c.timestamps, throughLiar(lr, lied), direct(honest))
			rr := runTsbench(t, 2*time.Minute, cfg)
			if rr.results == nil || (rr.code != 0 && rr.code != 3) {
				t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
			}
			res := rr.results
			// The load ends 12 s after the agent started, its last scrape the newest sample
			// the storage got.
			want := liar.Window{From: start, To: start.Add(12 * time.Second), Interval: 2 * time.Second, Stopped: true, By: lr.Newest()}
			told := toldIn(t, res, "lied", lr, want)
			checkCell(t, res, "lied", c.check(storageResult(t, res, "lied").Verify, told))
			checkCell(t, res, "honest", cellClean(storageResult(t, res, "honest").Verify))
			t.Logf("lied: %s; honest: %s", storageResult(t, res, "lied").Verify.Verdict(), storageResult(t, res, "honest").Verify.Verdict())
			// The agent's own changes: none for Prometheus' agent with the served timestamps,
			// at most vmagent's last-place parsing; a rounding charged to it would show as a
			// relative error far above that.
			ch := res.Sender.Changes
			switch {
			case ch == nil:
				t.Error("no sender changes")
			case c.timestamps && (ch.ChangedValues != 0 || ch.ShiftedTimestamps != 0):
				t.Errorf("sender changes %+v: want none (none of the liar's %d)", ch, told)
			case ch.MaxRelativeError > 0x1p-51:
				t.Errorf("sender changes %+v: want at most the agent's parsing (none of the liar's %d)", ch, told)
			default:
				t.Logf("%s", ch.Line(c.sender))
			}
		})
	}
}

// TestLiarStorages is the liar in front of real VictoriaMetrics and Prometheus, each run
// writing to both through a liar of its own: dropSamples (a share) in a plain run and in a
// run SIGKILLed after a checkpoint and resumed (as TestResumeAfterKill), addLabel in a plain
// run. Each storage's verdict is the liar's exact count over the read-back's window less the
// gaps.
func TestLiarStorages(t *testing.T) {
	t.Parallel() // each cell starts its storages, in a slot of its own (parallel)
	requireBinaries(t, "victoria-metrics", "prometheus")
	profile := liarProfile(t, t.TempDir())
	drop := liar.Lies{Lie: liar.LieDropSamples, Share: 0.05}
	cells := []struct {
		name    string
		lies    liar.Lies
		resumed bool
		check   func(v *results.Verify, told int64) string
	}{
		{name: "dropSamples/plain", lies: drop, check: cellMissing},
		{name: "dropSamples/resumed", lies: drop, resumed: true, check: cellMissing},
		{name: "addLabel/plain", lies: liar.Lies{Lie: liar.LieAddLabel, Label: tenant}, check: cellRenamed},
	}
	for _, c := range cells {
		t.Run(c.name, func(t *testing.T) {
			parallel(t)
			vm, prom := startStorage(t, storage.KindVictoriaMetrics, "vm"), startStorage(t, storage.KindPrometheus, "prom")
			liars := map[string]*liar.Liar{"vm": startLiarBefore(t, vm, c.lies), "prom": startLiarBefore(t, prom, c.lies)}
			cfg := fmt.Sprintf(`
profile: %s
targetsCount: 2
scrapeInterval: 1s
queryInterval: 2s
verifySamples: 100000
freshness: {interval: 0s}
remoteStorages:
  vm: %s
  prom: %s
`, profile, throughLiar(liars["vm"], vm), throughLiar(liars["prom"], prom))
			var (
				res  *results.Run
				want liar.Window
			)
			if c.resumed {
				res, want = runKilledAndResumed(t, cfg, slices.Collect(maps.Values(liars)))
			} else {
				startLine, start := startNow()
				rr := runTsbench(t, 2*time.Minute, startLine+"duration: 10s\n"+cfg)
				if rr.results == nil || (rr.code != 0 && rr.code != 3) {
					t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
				}
				res, want = rr.results, liar.Window{From: start, To: start.Add(10 * time.Second), Interval: time.Second}
			}
			for name, l := range liars {
				told := toldIn(t, res, name, l, want)
				checkCell(t, res, name, c.check(storageResult(t, res, name).Verify, told))
				t.Logf("%s: %s", name, storageResult(t, res, name).Verify.Verdict())
			}
		})
	}
}

// runKilledAndResumed runs cfg with a start time and checkpoints, SIGKILLs tsbench after its
// first checkpoint 2 s into the run, starts it again with the same config and -out, and
// returns the resumed run's results (final, with one gap) and the window it must have read
// back: its gap from what the checkpoint it resumed from had not settled to the restart,
// which began before the first sample of the second part the liars got.
func runKilledAndResumed(t *testing.T, cfg string, liars []*liar.Liar) (*results.Run, liar.Window) {
	t.Helper()
	dir := testDir(t)
	start := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second)
	cfgPath, out := filepath.Join(dir, "bench.yaml"), filepath.Join(dir, "out")
	cfg = fmt.Sprintf("startTime: %s\nduration: 16s\ncheckpointInterval: 1s\n", start.Format(time.RFC3339)) + cfg
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(part string) (*exec.Cmd, *lockedBuffer) {
		cmd := exec.Command(tsbenchBin, "run", "-config", cfgPath, "-out", out, "-httpListenAddr", "127.0.0.1:0")
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			// Beside results.json, for keepOnFailure (registered before: runs after this).
			if err := os.WriteFile(filepath.Join(dir, part+"-stderr.txt"), []byte(stderr.String()), 0o644); err != nil {
				t.Log(err)
			}
		})
		return cmd, &stderr
	}
	first, stderr := run("killed")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint 2 s into the run within a minute; stderr:\n%s", stderr.String())
		}
		cp, err := results.ReadFile(filepath.Join(out, "results.json"))
		if err == nil && cp.Partial != nil && cp.Partial.Reason == "checkpoint" && !cp.Partial.At.Before(start.Add(2*time.Second)) {
			break
		}
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL: no drain, no final results
		t.Fatal(err)
	}
	_ = first.Wait()
	cp, err := results.ReadFile(filepath.Join(out, "results.json")) // the one the restart resumes from
	if err != nil {
		t.Fatal(err)
	}
	killed := make([]time.Time, len(liars))
	for i, l := range liars {
		killed[i] = l.Newest()
	}
	restart := time.Now()
	second, stderr2 := run("resumed")
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	var began time.Time // the earliest first sample of the second part a liar got
	for timeout := time.After(2 * time.Minute); ; {
		select {
		case err := <-done:
			if ee, ok := errors.AsType[*exec.ExitError](err); err != nil && (!ok || ee.ExitCode() != 3) {
				t.Fatalf("resumed run: %v\nstderr:\n%s", err, stderr2.String())
			}
		case <-timeout:
			t.Fatalf("resumed run did not end within 2 minutes; stderr:\n%s", stderr2.String())
		case <-time.After(50 * time.Millisecond):
			for i, l := range liars {
				if n := l.Newest(); n.After(killed[i]) && (began.IsZero() || n.Before(began)) {
					began = n
				}
			}
			continue
		}
		break
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, filepath.Join(out, "results.json"))
	if res.Partial != nil || len(res.Gaps) != 1 {
		t.Fatalf("final results: partial %+v, gaps %+v: want final, with one gap", res.Partial, res.Gaps)
	}
	gap := liar.ResumeGap(cp, restart, time.Second)
	gap.By = began
	return res, liar.Window{From: start, To: start.Add(16 * time.Second), Interval: time.Second, Gaps: []liar.Gap{gap}}
}
