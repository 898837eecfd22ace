package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/liar"
)

// How the matrix's cells run and what they expect of the run (issue 37): each cell writes its
// run's startTime, so it knows where the read-back must begin, and a cell that must see
// something happen in the run (a checkpoint, a canary sample seen, a check of the data, the
// scrapes after a restart) waits for it, not for a time sized for an idle machine, and then
// ends the run.

// untilBound is the duration of a run its cell ends at an event: a bound the run never
// reaches, as the test's deadline comes first (awaitRun).
const untilBound = "duration: 10m\n"

// checkpoints is the config of a run whose cell watches its checkpoints: one a second. Each
// costs the run the results so far, so a cell that can see its event in the log does.
const checkpoints = "checkpointInterval: 1s\n"

// settled is the config of a run checked while it runs: the checks' reads hold the receiver's
// writes off, so on a loaded machine the load can end with seconds of samples queued, and a
// drain cut at its deadline leaves the requests in flight then answered by the liar but not
// by tsbench's count (the writer gave up on them): a drain long enough to send everything
// settles the run, which each cell's exact counts need.
const settled = "drainTimeout: 5m\n"

// deadlineMargin is what a cell keeps of the test's deadline for the read-back and the
// results of a run it ends.
const deadlineMargin = time.Minute

// begin is the startTime of a run that starts now, to the millisecond: written in the config,
// it is where the cell knows the read-back must begin. It is past when the run starts, which
// then generates the scrapes due since at once.
func begin() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func startTime(t time.Time) string { return "startTime: " + t.Format(time.RFC3339Nano) + "\n" }

// expect is the window a run of the config at path must read back (liar.Window): from
// its startTime less its history to just before the earliest scrape not made, the next of the
// target the storage answered least of (Liar.Reached): each generator stops at its own next
// scrape, and what the storage did not answer is pending, not read back. That must be the end the cell set: startTime + duration, or with history duration
// after the storage caught up (as the write path recorded it: the catch-up's pace is the
// storage's, not the cell's to know). A run the cell stopped (stopped not zero) ends where
// its generators saw the stop, late on a loaded machine. With several shards, the one that
// got furthest may end the read-back a scrape interval later (By).
func (e *env) expect(path string, res *results.Run, stopped time.Time) liar.Window {
	e.t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		e.t.Fatal(err)
	}
	next := func(t time.Time) time.Time { return t.Add(cfg.ScrapeInterval) }
	w := liar.Window{
		From: cfg.StartTime.Add(-cfg.History), Interval: cfg.ScrapeInterval,
		To: next(e.liar.Reached()).Add(-time.Millisecond), By: next(e.liar.Newest()).Add(-time.Millisecond),
	}
	end := cfg.StartTime.Add(cfg.Duration)
	// A storage starved at the end holds samples pending, which the liar did not answer, and
	// writes tsbench dropped may never have reached it (a row that refuses writes aside: the
	// liar answers those): the run's end then shows only in what tsbench read back, which
	// may reach the end the cell set, or its stop.
	st := res.Storage("liar")
	starvedEnd := e.lies.Lie != liar.LieRefuse && st != nil && st.Write != nil && (st.Write.PendingSamples > 0 || st.Write.Dropped() > 0)
	switch {
	case !stopped.IsZero():
		if starvedEnd {
			w.By = results.Later(w.By, stopped)
		}
		return w
	case cfg.History > 0:
		if st == nil || st.Write == nil || st.Write.History == nil || !st.Write.History.CaughtUp {
			e.t.Fatalf("a run with history whose storage did not catch up: %+v", st)
		}
		end = st.Write.History.CaughtUpTime.Add(cfg.Duration)
	}
	if starvedEnd {
		e.t.Logf("%d samples pending and %d dropped at the run's end: its generators' end is not all seen by the liar", st.Write.PendingSamples, st.Write.Dropped())
		w.By = results.Later(w.By, end)
		return w
	}
	// Every target's scrapes before the end, none after: the next of each is at or after it.
	if n := next(e.liar.Reached()); n.Before(end) || !n.Before(next(end)) {
		e.t.Errorf("the storage got every target's scrapes up to %s, the next at %s: want the run's end %s, set by the cell, and none after",
			e.liar.Reached(), n, end)
	}
	return w
}

// background is a tsbench run in a goroutine of its own.
type background struct {
	done   chan struct{} // closed when Main returned
	code   int
	stdout bytes.Buffer
	stderr logLines
	args   []string
}

// drainedLog is what a run logs once its load has stopped and its drain is over (bench's
// verify): it sends no sample after it.
const drainedLog = `msg="verifying what each storage returns"`

// logLines is a run's log, read while it is written.
type logLines struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Count is how many lines logged so far match.
func (l *logLines) Count(match func(line string) bool) int {
	n := 0
	for line := range strings.SplitSeq(l.String(), "\n") {
		if match(line) {
			n++
		}
	}
	return n
}

// Drained reports whether the run has logged drainedLog.
func (l *logLines) Drained() bool {
	return l.Count(func(line string) bool { return strings.Contains(line, drainedLog) }) > 0
}

// background starts tsbench with args; wait collects it.
func (e *env) background(ctx context.Context, args ...string) *background {
	b := &background{done: make(chan struct{}), args: args}
	go func() {
		defer close(b.done)
		b.code = Main(ctx, args, &b.stdout, &b.stderr)
	}()
	// After the caller's own cancel, before the cell's directories go (registered before).
	e.t.Cleanup(func() { <-b.done })
	return b
}

// wait waits for b to end; an exit other than 0 or 3 fails the cell.
func (b *background) wait(e *env) {
	e.t.Helper()
	<-b.done
	if b.code != ExitOK && b.code != ExitThreshold {
		e.t.Fatalf("tsbench %s exited %d:\n%s\n%s", strings.Join(b.args, " "), b.code, b.stdout.String(), b.stderr.String())
	}
}

// runUntil runs the config at path (with untilBound) into out until done holds of it, then
// interrupts it as a first signal does (the load stops; drain, read-back and results
// follow) and returns its results and when it was interrupted.
func (e *env) runUntil(path, out, what string, done func(b *background) bool) (*results.Run, time.Time) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := e.background(ctx, "run", "-config", path, "-out", out, "-httpListenAddr", "")
	defer cancel()
	e.awaitRun(what, []*background{b}, func() bool { return done(b) })
	stopped := time.Now()
	cancel()
	b.wait(e)
	return e.results(out), stopped
}

// awaitRun polls done every 200 ms (the events are a second apart: a checkpoint, a check, a
// scrape) until it holds. A run of runs ending first fails the cell, and so does the test's
// deadline (less deadlineMargin) coming: the event is waited for, as long as the test may
// last, not for a time sized for an idle machine.
func (e *env) awaitRun(what string, runs []*background, done func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	if d, ok := e.t.Deadline(); ok {
		deadline = d.Add(-deadlineMargin)
	}
	for !done() {
		for _, b := range runs {
			select {
			case <-b.done:
				if done() {
					return
				}
				e.t.Fatalf("the run ended before %s (exit %d):\n%s", what, b.code, b.stderr.String())
			default:
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no %s by the test's deadline", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkpoint is the checkpoint a run is writing to dir and its bytes; nil before the first,
// and once the run wrote its final results.
func checkpoint(dir string) (*results.Run, []byte) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, nil
	}
	cp, err := results.Parse(b, "checkpoint")
	if err != nil || cp.Partial == nil || cp.Partial.Reason != "checkpoint" {
		return nil, nil
	}
	return cp, b
}

// lead is the liar's part of the checkpoint a run is writing to dir; nil when there is none.
func lead(dir string) *results.Storage {
	if cp, _ := checkpoint(dir); cp != nil {
		return cp.Storage("liar")
	}
	return nil
}

// kill runs the config at path into a directory of its own until it writes a checkpoint at
// or after at that holds what the row wants (killWhen), copies that checkpoint to out, and
// interrupts the run. It returns once the run has drained, as a killed process sends
// nothing after its kill: no sample of the first part is written after the restart. The
// first part's read-back goes on aside; the cell waits for its end (done). It keeps the
// checkpoint (e.checkpoint).
func (e *env) kill(path string, at time.Time, out string) (done func()) {
	e.t.Helper()
	dir := filepath.Join(e.dir, "killed")
	ctx, cancel := context.WithCancel(context.Background())
	b := e.background(ctx, "run", "-config", path, "-out", dir, "-httpListenAddr", "")
	e.t.Cleanup(cancel) // a cell failed before done
	done = func() {
		cancel()
		b.wait(e)
	}
	var raw []byte
	e.awaitRun("the checkpoint to kill after (holding what the row wants)", []*background{b}, func() bool {
		cp, data := checkpoint(dir)
		if cp == nil || cp.Partial.At.Before(at) || (e.killWhen != nil && !e.killWhen(cp.Storage("liar"))) {
			return false
		}
		e.checkpoint, raw = cp, data
		return true
	})
	cancel()
	if err := os.MkdirAll(out, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "results.json"), raw, 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.awaitRun("the first part's drain", []*background{b}, b.stderr.Drained)
	return done
}
