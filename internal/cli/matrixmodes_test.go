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
	"github.com/tsbench/tsbench/internal/storage/liar"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// mode is one way of running tsbench against the liar; it returns the results to judge and
// leaves in env.want the window they must have read back.
type mode struct {
	name string
	recv storagetest.Options
	run  func(e *env) *results.Run
}

// env is one cell's storage, liar and directory.
type env struct {
	t       *testing.T
	figure  string // the row's figure
	extra   string // the row's config
	profile string // smallProfile's path
	dir     string
	recv    *storagetest.Receiver
	liar    *liar.Liar
	lies    liar.Lies           // the liar's, to start afresh (start)
	opts    storagetest.Options // the receiver's
	// want is the window the mode's run must have read back, from what it set up.
	want liar.Window
	// checkpoint is resumed's first part's (verdict); killWhen and until the row's.
	checkpoint *results.Run
	killWhen   func(st *results.Storage) bool
	until      func(st *results.Storage) bool
}

// start starts the cell's receiver and the liar in front of it, closed at cleanup; called
// again, a fresh pair for a mode that runs again (lost).
func (e *env) start() {
	e.t.Helper()
	recv, err := storagetest.Start(e.t.TempDir(), slog.New(slog.DiscardHandler), e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = recv.Close() })
	lies := e.lies
	lies.OTLPResourceLabels = e.opts.OTLPResourceLabels // the liar translates OTLP as its receiver does
	lr, err := liar.Start(recv.URL, lies)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = lr.Close() })
	e.recv, e.liar = recv, lr
}

// rw1 is the liar as a remote write 1.0 storage with the query API.
func rw1(e *env) string {
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
	extra += e.extra
	if !strings.Contains(extra, "duration:") {
		extra += "duration: 3s\n"
	}
	base := strings.ReplaceAll(matrixBase, "PROFILE", e.profile)
	if strings.Contains(extra, "freshness:") { // the row's canary, not the base's none
		base = strings.ReplaceAll(base, "freshness: {interval: 0s}\n", "")
	}
	if err := os.WriteFile(path, []byte(base+extra+"remoteStorages:\n  liar: "+storage+"\n"), 0o644); err != nil {
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

// simple is one run started now with extra, written to storage: to its end, or with a row
// that waits for an event (until), until a checkpoint shows it.
func simple(extra string, storage func(e *env) string) func(e *env) *results.Run {
	return func(e *env) *results.Run {
		out := filepath.Join(e.dir, "out")
		if e.until == nil {
			cfg := e.config("bench", extra+startTime(begin()), storage(e))
			res := e.run(context.Background(), cfg, out)
			e.want = e.expect(cfg, res, time.Time{})
			return res
		}
		cfg := e.config("bench", extra+startTime(begin())+untilBound+checkpoints, storage(e))
		res, stopped := e.runUntil(cfg, out, "what the row waits for", func(*background) bool {
			st := lead(out)
			return st != nil && e.until(st)
		})
		e.want = e.expect(cfg, res, stopped)
		return res
	}
}

// resumedScrapes is how many scrapes of every target a resumed run writes after its restart
// before its cell ends it: lies of each row among them (dropHistograms/resumed, ended at a
// fixed time, once checked nothing after a slow restart).
const resumedScrapes = 4

var (
	plain   = mode{name: "plain", run: simple("", rw1)}
	history = mode{name: "history", run: simple("history: 5s\n", rw1)}
	rw2     = mode{name: "rw2", run: simple("", func(e *env) string {
		return fmt.Sprintf("{writeURL: %s%s, readURL: %s, protocol: prometheus-rw2}", e.liar.URL, storagetest.WritePath, e.liar.URL)
	})}
	// otlp writes OTLP/HTTP to a receiver that keeps resource attributes as labels
	// (otlpLabels: underscore), uncompressed as the liar reads it.
	otlp = mode{name: "otlp", recv: storagetest.Options{OTLPResourceLabels: true}, run: simple("", func(e *env) string {
		return fmt.Sprintf("{writeURL: %s%s, readURL: %s, protocol: otlp-http, otlpLabels: underscore, otlpCompression: none}", e.liar.URL, storagetest.OTLPPath, e.liar.URL)
	})}
	// resumed is a run killed after a checkpoint and started again with the same config and
	// -out (kill): in-process, the first run writes into a directory of its own, whose
	// checkpoint 3 s into the run is copied to -out (the gap starts a scrape interval before
	// it at least: the first part keeps 2 s read back); the second starts once the first has
	// ended, and runs until the liar has received resumedScrapes scrapes after the restart.
	// The gap must be from what the checkpoint had not settled to the restart.
	resumed = mode{name: "resumed", run: func(e *env) *results.Run {
		start := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
		cfg := e.config("bench", startTime(start)+untilBound+checkpoints, rw1(e))
		out := filepath.Join(e.dir, "out")
		finish := e.kill(cfg, start.Add(3*time.Second), out)
		killed, restart := e.liar.Newest(), time.Now()
		after, first := restart.Add(resumedScrapes*scrapeInterval), time.Time{}
		res, stopped := e.runUntil(cfg, out, fmt.Sprintf("%d scrapes after the restart", resumedScrapes), func(*background) bool {
			n := e.liar.Newest()
			if first.IsZero() && n.After(killed) {
				first = n // the second part's first write seen: it began before
			}
			return !n.Before(after)
		})
		finish()
		e.want = e.expect(cfg, res, stopped)
		e.want.Gaps = []liar.Gap{liar.ResumeGap(e.checkpoint, restart, scrapeInterval)}
		e.want.Gaps[0].By = first
		return res
	}}
	// continuous is a run checked every second while the load runs, as well as at its end,
	// until a check has logged data the liar lied in: the checks' counts are judged with the
	// row's (checkedDuringRun).
	continuous = mode{name: "continuous", run: func(e *env) *results.Run {
		cfg := e.config("bench", startTime(begin())+"verifyInterval: 1s\n"+untilBound+settled, rw1(e))
		out := filepath.Join(e.dir, "out")
		res, stopped := e.runUntil(cfg, out, "a check of data the liar lied in", func(b *background) bool {
			return b.stderr.Count(checkedLies.MatchString) > 0
		})
		e.want = e.expect(cfg, res, stopped)
		if msg := checkedDuringRun(res.Storage("liar").Verify, e.liar, e.want, starved(res.Storage("liar"))); msg != "" {
			e.t.Error(msg + "; " + writeAccount(res.Storage("liar").Write) + "; " + e.recv.Account())
		}
		return res
	}}
	// lost is the continuous checks of a run whose liar starts deleting (LieDeleteAfter)
	// between two checks (lostOnce, matrixlost_test.go).
	lost = mode{name: "continuous", run: func(e *env) *results.Run {
		for attempt := 1; ; attempt++ {
			res, why := lostOnce(e, attempt)
			if why == "" {
				return res
			}
			if attempt == lostAttempts {
				e.t.Fatalf("%s (and in each of the %d runs before)", why, attempt-1)
			}
			// The harness's timing, not the storage's verdict: a check's reads are as slow as
			// the machine, and on a loaded one they can span the moment chosen.
			e.t.Logf("run %d: %s: running again with a fresh storage and liar", attempt, why)
			e.start()
		}
	}}
	// compared is `report compare` of a run without the lie (a receiver of its own behind a
	// liar that tells none) against one with it, side by side, -fail-on the row's figure
	// rising: exit 3, the change from 0 to the liar's count flagged.
	compared = mode{name: "compared", run: func(e *env) *results.Run {
		recv, err := storagetest.Start(e.t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { _ = recv.Close() })
		honest, err := liar.Start(recv.URL, liar.Lies{})
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { _ = honest.Close() })
		old := e.background(context.Background(), "run", "-config", e.config("old", startTime(begin()), fmt.Sprintf("{writeURL: %s%s, readURL: %s}", honest.URL, storagetest.WritePath, honest.URL)),
			"-out", filepath.Join(e.dir, "old"), "-httpListenAddr", "")
		cfg := e.config("new", startTime(begin()), rw1(e))
		res := e.run(context.Background(), cfg, filepath.Join(e.dir, "new"))
		old.wait(e)
		e.want = e.expect(cfg, res, time.Time{})
		told := e.want.Count(e.liar, nil)
		var stdout, stderr bytes.Buffer
		args := []string{
			"report", "compare", filepath.Join(e.dir, "old", "results.json"), filepath.Join(e.dir, "new", "results.json"),
			"-out", filepath.Join(e.dir, "cmp"), "-fail-on", e.figure + ">+0",
		}
		code := Main(context.Background(), args, &stdout, &stderr)
		line := fmt.Sprintf("✗ liar: %s > +0: 0 → %d ", e.figure, told)
		if code != ExitThreshold || !strings.Contains(stdout.String(), line) {
			e.t.Errorf("report compare exited %d, want 3 with %q:\n%s\n%s", code, line, stdout.String(), stderr.String())
		}
		return res
	}}
	// merged is two shards of one run, side by side, merged by `report merge`; with a row that
	// waits for an event, both run until the lead shard's checkpoint shows it.
	merged = mode{name: "merged", run: func(e *env) *results.Run {
		start := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
		extra := startTime(start)
		if e.until != nil {
			extra += untilBound + checkpoints
		}
		cfg := e.config("bench", extra, rw1(e))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var shards []*background
		for i := range 2 {
			shards = append(shards, e.background(ctx, "run", "-config", cfg, "-out", filepath.Join(e.dir, fmt.Sprint(i)), "-httpListenAddr", "", "-shard", fmt.Sprintf("%d/2", i)))
		}
		var stopped time.Time
		if e.until != nil {
			e.awaitRun("what the row waits for", shards, func() bool {
				st := lead(filepath.Join(e.dir, "0"))
				return st != nil && e.until(st)
			})
			stopped = time.Now()
			cancel()
		}
		for _, s := range shards {
			s.wait(e)
		}
		out := filepath.Join(e.dir, "merged")
		e.main(context.Background(), "report", "merge", "-out", out, filepath.Join(e.dir, "0", "results.json"), filepath.Join(e.dir, "1", "results.json"))
		res := e.results(out)
		e.want = e.expect(cfg, res, stopped)
		return res
	}}
)
