package cli

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// The matrix (issue 29): every lie storagetest.Liar tells × every mode of tsbench that can
// see it. Each cell states the verdict the mode must give and the exact count it must give
// it with, the liar's own count of what it did over the samples the mode checked: the same
// verdict for the same storage behaviour, whatever mode the run was in.

// lieRow is one lie and its verdict: check compares a storage's results with the liar's
// count over what the mode checked and returns what differs, "" when the cell holds.
type lieRow struct {
	name  string
	lies  storagetest.Lies
	check func(st *results.Storage, told, requests int64) string
	modes []mode
}

// mode is one way of running tsbench against the liar; it returns the results to judge and
// the liar's count over what they checked.
type mode struct {
	name string
	recv storagetest.Options
	run  func(e *env) (*results.Run, int64)
}

// matrixBase is a run of a few seconds over 2 targets of the default profile (~1,230 series
// each, 1 s scrapes): ~7,400 samples, all checked (verifySamples above them), no canary.
const matrixBase = `targetsCount: 2
scrapeInterval: 1s
queryInterval: 1s
verifySamples: 100000
freshness: {interval: 0s}
`

// env is one cell's storage, liar and directory.
type env struct {
	t    *testing.T
	dir  string
	recv *storagetest.Receiver
	liar *storagetest.Liar
}

// rw1 is the liar as a remote write 1.0 storage with the query API.
func (e *env) rw1() string {
	return fmt.Sprintf("{writeURL: %s%s, readURL: %s}", e.liar.URL, storagetest.WritePath, e.liar.URL)
}

// main runs tsbench in-process; an exit other than 0 or 3 fails the test.
func (e *env) main(ctx context.Context, args ...string) string {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Main(ctx, args, &stdout, &stderr); code != ExitOK && code != ExitThreshold {
		e.t.Fatalf("tsbench %s exited %d:\n%s\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// config writes a config of matrixBase, extra and the storage, and returns its path.
func (e *env) config(name, extra, storage string) string {
	e.t.Helper()
	path := filepath.Join(e.dir, name+".yaml")
	if !strings.Contains(extra, "duration:") {
		extra += "duration: 3s\n"
	}
	if err := os.WriteFile(path, []byte(matrixBase+extra+"remoteStorages:\n  liar: "+storage+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// run runs one config into out and reads its results.
func (e *env) run(ctx context.Context, cfg, out string, args ...string) *results.Run {
	e.t.Helper()
	e.main(ctx, append([]string{"run", "-config", cfg, "-out", out, "-httpListenAddr", ""}, args...)...)
	return e.results(out)
}

func (e *env) results(out string) *results.Run {
	e.t.Helper()
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// told is the liar's count over the read-back's window of res, less its gaps.
func (e *env) told(res *results.Run) int64 {
	v := res.Storage("liar").Verify
	if v == nil {
		e.t.Fatal("no read-back in the results")
	}
	n := e.liar.Count(v.CheckedFrom, v.CheckedTo, nil)
	for _, g := range res.Gaps {
		n -= e.liar.Count(g.From, g.To, nil)
	}
	return n
}

func simple(extra string) func(e *env) (*results.Run, int64) {
	return func(e *env) (*results.Run, int64) {
		res := e.run(context.Background(), e.config("bench", extra, e.rw1()), filepath.Join(e.dir, "out"))
		return res, e.told(res)
	}
}

var (
	plain   = mode{name: "plain", run: simple("")}
	history = mode{name: "history", run: simple("history: 5s\n")}
	rw2     = mode{name: "rw2", run: func(e *env) (*results.Run, int64) {
		st := fmt.Sprintf("{writeURL: %s%s, readURL: %s, protocol: prometheus-rw2}", e.liar.URL, storagetest.WritePath, e.liar.URL)
		res := e.run(context.Background(), e.config("bench", "", st), filepath.Join(e.dir, "out"))
		return res, e.told(res)
	}}
	// otlp writes OTLP/HTTP to a receiver that keeps resource attributes as labels
	// (otlpLabels: underscore), uncompressed as the liar reads it.
	otlp = mode{name: "otlp", recv: storagetest.Options{OTLPResourceLabels: true}, run: func(e *env) (*results.Run, int64) {
		st := fmt.Sprintf("{writeURL: %s%s, readURL: %s, protocol: otlp-http, otlpLabels: underscore, otlpCompression: none}", e.liar.URL, storagetest.OTLPPath, e.liar.URL)
		res := e.run(context.Background(), e.config("bench", "", st), filepath.Join(e.dir, "out"))
		return res, e.told(res)
	}}
	// resumed is a run killed after its first checkpoint and started again with the same
	// config and -out: in-process, the checkpoint is kept aside, the run interrupted, and the
	// checkpoint put back in place of the interrupted run's results, as a SIGKILL leaves it.
	resumed = mode{name: "resumed", run: func(e *env) (*results.Run, int64) {
		start := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
		cfg := e.config("bench", fmt.Sprintf("startTime: %s\ncheckpointInterval: 1s\nduration: 6s\n", start.Format(time.RFC3339)), e.rw1())
		out := filepath.Join(e.dir, "out")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var checkpoint []byte
		var wg sync.WaitGroup
		wg.Go(func() {
			defer cancel()
			for ctx.Err() == nil {
				if res, err := results.ReadFile(filepath.Join(out, "results.json")); err == nil && res.Partial != nil && res.Partial.Reason == "checkpoint" && res.Partial.At.After(start.Add(2*time.Second)) {
					checkpoint, _ = os.ReadFile(filepath.Join(out, "results.json"))
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
		var stdout, stderr bytes.Buffer
		Main(ctx, []string{"run", "-config", cfg, "-out", out, "-httpListenAddr", ""}, &stdout, &stderr)
		cancel()
		wg.Wait()
		if checkpoint == nil {
			e.t.Fatalf("no checkpoint:\n%s", stderr.String())
		}
		if err := os.WriteFile(filepath.Join(out, "results.json"), checkpoint, 0o644); err != nil {
			e.t.Fatal(err)
		}
		res := e.run(context.Background(), cfg, out)
		if len(res.Gaps) != 1 {
			e.t.Fatalf("resumed run has gaps %+v, want one", res.Gaps)
		}
		return res, e.told(res)
	}}
	// merged is two shards of one run, side by side, merged by `report merge`.
	merged = mode{name: "merged", run: func(e *env) (*results.Run, int64) {
		start := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
		cfg := e.config("bench", fmt.Sprintf("startTime: %s\n", start.Format(time.RFC3339)), e.rw1())
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				e.main(context.Background(), "run", "-config", cfg, "-out", filepath.Join(e.dir, fmt.Sprint(i)), "-httpListenAddr", "", "-shard", fmt.Sprintf("%d/2", i))
			})
		}
		wg.Wait()
		out := filepath.Join(e.dir, "merged")
		e.main(context.Background(), "report", "merge", "-out", out, filepath.Join(e.dir, "0", "results.json"), filepath.Join(e.dir, "1", "results.json"))
		res := e.results(out)
		return res, e.told(res)
	}}
)

func want(what string, want, got int64) string {
	if want != got {
		return fmt.Sprintf("%s: want %d (the liar's count), got %d", what, want, got)
	}
	return ""
}

// renamed is the verdict on a label lie: every sample found under other labels, none missing.
func renamed(change string) func(st *results.Storage, told, _ int64) string {
	return func(st *results.Storage, told, _ int64) string {
		v := st.Verify
		var changes []string
		for _, c := range v.LabelChanges {
			changes = append(changes, c.String())
		}
		if !strings.Contains(strings.Join(changes, "; "), change) {
			return fmt.Sprintf("labelChanges %q, want one naming %q", changes, change)
		}
		return want("verify.renamedSamples", told, v.RenamedSamples) + want("verify.missingSamples", 0, v.MissingSamples)
	}
}

var matrix = []lieRow{
	{
		name: "dropSamples", lies: storagetest.Lies{Lie: storagetest.LieDropSamples, Share: 0.05},
		check: func(st *results.Storage, told, _ int64) string {
			return want("verify.missingSamples", told, st.Verify.MissingSamples)
		},
		modes: []mode{plain, history, rw2, otlp, resumed, merged},
	},
	{
		name: "ulp", lies: storagetest.Lies{Lie: storagetest.LieULP, Share: 0.05},
		check: func(st *results.Storage, told, _ int64) string {
			return want("verify.changedValues", told, st.Verify.ChangedValues)
		},
		modes: []mode{plain, rw2, otlp, resumed, merged},
	},
	{
		name: "round", lies: storagetest.Lies{Lie: storagetest.LieRound},
		check: func(st *results.Storage, told, _ int64) string {
			return want("verify.changedValues", told, st.Verify.ChangedValues)
		},
		modes: []mode{plain, rw2},
	},
	{
		name: "shiftTimestamps", lies: storagetest.Lies{Lie: storagetest.LieShiftTimestamps, Share: 0.05, Shift: 7 * time.Millisecond},
		check: func(st *results.Storage, told, _ int64) string {
			return want("verify.shiftedTimestamps", told, st.Verify.ShiftedTimestamps) + want("verify.maxShiftMillis", 7, st.Verify.MaxShiftMillis)
		},
		modes: []mode{plain, rw2, otlp},
	},
	{
		name: "addLabel", lies: storagetest.Lies{Lie: storagetest.LieAddLabel, Label: labels.Label{Name: "tenant_id", Value: "default-tenant"}},
		check: renamed("tenant_id"),
		modes: []mode{plain, rw2, resumed, merged},
	},
	{
		name: "renameJobInstance", lies: storagetest.Lies{Lie: storagetest.LieRenameJobInstance},
		check: renamed("service_name"),
		modes: []mode{plain, rw2, resumed, merged},
	},
	{
		name: "partial", lies: storagetest.Lies{Lie: storagetest.LiePartial, Share: 0.05},
		check: func(st *results.Storage, told, _ int64) string {
			return want("verify.missingSamples", told, st.Verify.MissingSamples)
		},
		modes: []mode{plain, rw2},
	},
}

// matrixParallel is how many cells run at once: a cell mostly waits (its run's seconds, the
// receiver's fsyncs), so more than the test's -parallel (GOMAXPROCS).
const matrixParallel = 8

// TestMatrix runs every cell, matrixParallel at a time (t.Run from several goroutines, each
// waiting for its cell, so the cells are not held to -parallel).
func TestMatrix(t *testing.T) {
	slots := make(chan struct{}, matrixParallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, row := range matrix {
		for _, m := range row.modes {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				t.Run(row.name+"/"+m.name, func(t *testing.T) { cell(t, row, m) })
			})
		}
	}
}

// cell runs one cell: a receiver, the liar in front of it, the mode's run and the row's check.
func cell(t *testing.T, row lieRow, m mode) {
	e := &env{t: t, dir: t.TempDir()}
	recv, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), m.recv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = recv.Close() })
	liar, err := storagetest.StartLiar(recv.URL, row.lies)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = liar.Close() })
	e.recv, e.liar = recv, liar
	res, told := m.run(e)
	if told == 0 {
		t.Fatal("the liar told no lie in what was checked: the cell could not fail")
	}
	st := res.Storage("liar")
	if msg := row.check(st, told, 0); msg != "" {
		t.Errorf("%s (checked %d samples, liar's total %d, examples %q)", msg, st.Verify.CheckedSamples, liar.Total(), st.Verify.Examples)
	}
}
