package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
	name string
	lies storagetest.Lies
	// after, for LieDeleteAfter, is when the lie starts: this long after the cell does.
	after time.Duration
	// whole judges the liar's whole count (refused requests), not its count over the
	// read-back's window.
	whole bool
	// config is YAML the row adds to every mode's config (the sample types it lies about).
	config string
	// killWhen, for resumed, is what the checkpoint the first part is killed after must
	// hold, besides being 1 s into the run (nil: nothing).
	killWhen func(st *results.Storage) bool
	// figure is the count the verdict is in, for report compare's mode: it must flag it,
	// from 0 in a run without the lie to the liar's count in one with it.
	figure string
	check  func(c verdict) string
	modes  []mode
}

// verdict is what a cell's check reads: the storage's results, the liar's count over what
// they checked (its whole count for a whole row) and the liar.
type verdict struct {
	st   *results.Storage
	told int64
	liar *storagetest.Liar
	// checkpoint and killed are, in resumed, the first part's checkpoint the run continued
	// from and its own last results (what it had been answered when it stopped); nil else.
	checkpoint, killed *results.Storage
}

// requests is what a resumed run's write counts must hold of the n answers the liar gave:
// the checkpoint's, and those not given to the killed run (its results hold every answer
// it got: those after its checkpoint are lost with it, as a killed process's are). Other
// modes: n.
func (c verdict) requests(n int64, count func(*results.Write) int64) int64 {
	if c.checkpoint == nil {
		return n
	}
	return count(c.checkpoint.Write) + n - count(c.killed.Write)
}

// mode is one way of running tsbench against the liar; it returns the results to judge and
// the liar's count over what they checked.
type mode struct {
	name string
	recv storagetest.Options
	run  func(e *env) (*results.Run, int64)
}

// matrixBase is a run of a few seconds over 2 targets of the default profile's first 150
// series (smallProfile), 1 s scrapes: ~900 samples, all checked (verifySamples above them),
// no canary.
const matrixBase = `targetsCount: 2
profile: PROFILE
scrapeInterval: 1s
queryInterval: 1s
verifySamples: 100000
freshness: {interval: 0s}
`

// smallProfile writes the default profile's first 150 series to dir and returns its path:
// the cells' CPU is the samples', under -race, on 2 cores.
func smallProfile(t *testing.T, dir string) string {
	t.Helper()
	path, err := storagetest.SmallProfile(filepath.Join("..", "..", "profiles", "node_exporter.json"), dir, 150)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// env is one cell's storage, liar and directory.
type env struct {
	t       *testing.T
	figure  string // the row's figure
	extra   string // the row's config
	profile string // smallProfile's path
	dir     string
	recv    *storagetest.Receiver
	liar    *storagetest.Liar
	lies    storagetest.Lies    // the liar's, to start afresh (start)
	opts    storagetest.Options // the receiver's
	// checkpoint and killed are resumed's first part (verdict); killWhen the row's.
	checkpoint, killed *results.Run
	killWhen           func(st *results.Storage) bool
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
	liar, err := storagetest.StartLiar(recv.URL, e.lies)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = liar.Close() })
	e.recv, e.liar = recv, liar
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

// told is the liar's count over the read-back's window of res, less its gaps.
func (e *env) told(res *results.Run) int64 {
	v := res.Storage("liar").Verify
	if v == nil {
		e.t.Fatal("no read-back in the results")
	}
	n := e.liar.Count(v.CheckedFrom, v.CheckedTo, nil)
	for _, g := range res.Gaps {
		if from, to := later(g.From, v.CheckedFrom), earlier(g.To, v.CheckedTo); !to.Before(from) {
			n -= e.liar.Count(from, to, nil)
		}
	}
	return n
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
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
	// resumed is a run killed after a checkpoint and started again with the same config and
	// -out: in-process, the first run writes into a directory of its own, whose checkpoint
	// is copied to -out as soon as it is written; the first run is interrupted then (its
	// drain and read-back go on aside, as a killed process's would not: what it still sends
	// is in the resumed run's gap) and the second starts at once. 20 s: beside other cells the
	// restart has taken 9 s, and the part after it must hold lies (dropHistograms/resumed
	// checked nothing at 10 s).
	resumed = mode{name: "resumed", run: func(e *env) (*results.Run, int64) {
		start := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
		cfg := e.config("bench", fmt.Sprintf("startTime: %s\ncheckpointInterval: 1s\nduration: 20s\n", start.Format(time.RFC3339)), e.rw1())
		killed, out := filepath.Join(e.dir, "killed"), filepath.Join(e.dir, "out")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() {
			var stdout, stderr bytes.Buffer
			Main(ctx, []string{"run", "-config", cfg, "-out", killed, "-httpListenAddr", ""}, &stdout, &stderr)
		})
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				e.t.Fatal("no checkpoint 1 s into the run (holding what the row wants) within 30 s")
			}
			b, err := os.ReadFile(filepath.Join(killed, "results.json"))
			if err != nil {
				continue
			}
			cp, err := results.Parse(b, "checkpoint")
			if err == nil && cp.Partial == nil {
				e.t.Fatal("the run ended before a checkpoint 1 s into it")
			}
			if err == nil && cp.Partial.Reason == "checkpoint" && !cp.Partial.At.Before(start.Add(time.Second)) &&
				(e.killWhen == nil || e.killWhen(cp.Storage("liar"))) {
				e.checkpoint = cp
				cancel()
				if err := os.MkdirAll(out, 0o755); err != nil {
					e.t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(out, "results.json"), b, 0o644); err != nil {
					e.t.Fatal(err)
				}
				break
			}
		}
		res := e.run(context.Background(), cfg, out)
		if len(res.Gaps) != 1 {
			e.t.Fatalf("resumed run has gaps %+v, want one", res.Gaps)
		}
		wg.Wait()
		e.killed = e.results(killed)
		return res, e.told(res)
	}}
	// continuous is a run checked every second while the load runs, as well as at its end:
	// the checks during the run must find the lie too (their counts are of the data they
	// sampled, not all of it, so that they find something is the verdict).
	continuous = mode{name: "continuous", run: func(e *env) (*results.Run, int64) {
		res := e.run(context.Background(), e.config("bench", "verifyInterval: 1s\nduration: 6s\n", e.rw1()), filepath.Join(e.dir, "out"))
		c := res.Storage("liar").Verify.Continuous
		switch {
		case c == nil || c.Total.Checks == 0:
			e.t.Errorf("no continuous checks: %+v", c)
		case c.Total.Clean():
			e.t.Errorf("the continuous checks found nothing: %+v", c.Total)
		}
		return res, e.told(res)
	}}
	// lost is the continuous checks of a run whose liar starts deleting (LieDeleteAfter)
	// between two checks, once they have found scrapes complete, which every check reads
	// again: the first check after it must find each held scrape's deleted samples lost
	// after their ack, exactly the liar's count at their times, and the checks after it,
	// missing, the deleted series' samples in their new data. A check waits verify's 3 s
	// Settle before it reads, so the next reads 3 s after a check's last read (the liar's
	// LastRead) at the earliest: the deletion starts 1.2 to 2.4 s after the first check's
	// reads, and the cell checks that no check read across it. A check that found its new
	// data complete holds its newest scrape (verify.newestComplete): the newest time in its
	// span, at which the liar recorded the deleted series of that scrape's target (each of
	// the 2 targets has some, and their scrapes' times differ by their phases).
	lost = mode{name: "continuous", run: func(e *env) (*results.Run, int64) {
		for attempt := 1; ; attempt++ {
			res, told, why := lostOnce(e, attempt)
			if why == "" {
				return res, told
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
	compared = mode{name: "compared", run: func(e *env) (*results.Run, int64) {
		recv, err := storagetest.Start(e.t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { _ = recv.Close() })
		honest, err := storagetest.StartLiar(recv.URL, storagetest.Lies{})
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { _ = honest.Close() })
		var wg sync.WaitGroup
		wg.Go(func() {
			st := fmt.Sprintf("{writeURL: %s%s, readURL: %s}", honest.URL, storagetest.WritePath, honest.URL)
			e.run(context.Background(), e.config("old", "", st), filepath.Join(e.dir, "old"))
		})
		res := e.run(context.Background(), e.config("new", "", e.rw1()), filepath.Join(e.dir, "new"))
		wg.Wait()
		told := e.told(res)
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
		return res, told
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

// lostAttempts is how many runs lost makes to time its deletion between two checks' reads.
const lostAttempts = 3

// lostOnce is one run of lost: its results and the liar's count, or why the run could not
// judge the lie (a check read across the deletion, or no check before or after it).
func lostOnce(e *env, attempt int) (*results.Run, int64, string) {
	e.liar.SetAfter(time.Now().Add(time.Hour)) // not the row's: below
	cfg := e.config("bench", "verifyInterval: 1s\nduration: 14s\n", e.rw1())
	out := filepath.Join(e.dir, fmt.Sprintf("out%d", attempt))
	var (
		wg             sync.WaitGroup
		code           int
		stdout, stderr bytes.Buffer
		deleted        time.Time
	)
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		code = Main(context.Background(), []string{"run", "-config", cfg, "-out", out, "-httpListenAddr", ""}, &stdout, &stderr)
	})
wait:
	for {
		select {
		case <-done:
			break wait
		case <-time.After(20 * time.Millisecond):
		}
		if read := e.liar.LastRead(); !read.IsZero() && time.Since(read) >= 1200*time.Millisecond {
			if time.Since(read) < 2400*time.Millisecond {
				deleted = time.Now()
				e.liar.SetAfter(deleted)
			}
			break
		}
	}
	wg.Wait()
	if code != ExitOK && code != ExitThreshold {
		e.t.Fatalf("tsbench run exited %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if deleted.IsZero() {
		return nil, 0, "the deletion did not start within 2.4 s of the checks' first reads"
	}
	res := e.results(out)
	v := res.Storage("liar").Verify
	c := v.Continuous
	var lostAfterAck, fresh int64
	var before, after int
	for _, ch := range v.Checks {
		switch end := ch.At.Add(time.Duration(ch.Seconds * float64(time.Second))); {
		case end.Before(deleted) && ch.Checked > 0:
			before++
			if ch.Missing > 0 {
				e.t.Fatalf("a check before the deletion found %d samples missing: not the liar's (checks %+v, examples %q)", ch.Missing, v.Checks, c.Examples)
			}
			var newest time.Time
			for _, t := range e.liar.Told() {
				if at := time.UnixMilli(t.T); !at.Before(ch.Span.From) && !at.After(ch.Span.To) && at.After(newest) {
					newest = at
				}
			}
			lostAfterAck += e.liar.Count(newest, newest, nil)
		case end.Before(deleted):
		case ch.At.After(deleted):
			after++
			if !ch.Span.To.Before(ch.Span.From) {
				fresh += e.liar.Count(ch.Span.From, ch.Span.To, nil)
			}
		default:
			return nil, 0, fmt.Sprintf("a check read across the deletion at %s: %+v", deleted, ch)
		}
	}
	if before == 0 || after == 0 || lostAfterAck == 0 {
		return nil, 0, fmt.Sprintf("%d checks with data before the deletion at %s, %d after, %d samples held: the cell could not fail (checks %+v)", before, deleted, after, lostAfterAck, v.Checks)
	}
	for _, msg := range []string{
		want("verify.lostAfterAck", lostAfterAck, v.LostAfterAck),
		want("verify.continuous.total.lostAfterAck", lostAfterAck, c.Total.LostAfterAck),
		want("verify.continuous.total.readErrors", 0, c.Total.ReadErrors) + want("verify.continuous.total.unchecked", 0, c.Total.Unchecked),
	} {
		if msg != "" {
			e.t.Errorf("%s (deleted at %s; checks %+v)", msg, deleted, v.Checks)
		}
	}
	// The new data's deleted samples are missing too, exactly: a check no longer expects
	// a scrape not generated yet (it once missed one of each target, 294 samples, with
	// nothing deleted: TestContinuousHonest).
	if c.Total.Missing != lostAfterAck+fresh {
		e.t.Errorf("verify.continuous.total.missing %d, want the %d lost after ack and the %d deleted in the new data", c.Total.Missing, lostAfterAck, fresh)
	}
	return res, e.told(res), ""
}

func want(what string, want, got int64) string {
	if want != got {
		return fmt.Sprintf("%s: want %d (the liar's count), got %d", what, want, got)
	}
	return ""
}

// renamed is the verdict on a label lie: every sample found under other labels, none missing.
func renamed(change string) func(c verdict) string {
	return func(c verdict) string {
		v, told := c.st.Verify, c.told
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

// refused is the verdict on refused requests: their samples dropped (400) or retried until
// taken (429, 503), none missing from the read-back either way.
func refused(status int) func(c verdict) string {
	return func(c verdict) string {
		w := c.st.Write
		var requests int64
		for _, t := range c.liar.Told() {
			if t.Series == "" {
				requests++
			}
		}
		code := fmt.Sprint(status)
		msg := want("write.requestsByStatus["+code+"]", c.requests(requests, func(w *results.Write) int64 { return w.RequestsByStatus[code] }), w.RequestsByStatus[code])
		if status == http.StatusBadRequest {
			var dropped int64
			for _, n := range w.DroppedSamples {
				dropped += n
			}
			return msg + want("write.droppedSamples", c.told, dropped)
		}
		return msg + want("write.retries", c.requests(requests, func(w *results.Write) int64 { return w.Retries }), w.Retries) +
			want("verify.missingSamples", 0, c.st.Verify.MissingSamples)
	}
}

// limitRequests is the answers that named a storage's first limit.
func limitRequests(w *results.Write) int64 {
	if len(w.Limits) == 0 {
		return 0
	}
	return w.Limits[0].Requests
}

// mimirRateLimit is Mimir's answer to a write past a tenant's ingestion rate.
const mimirRateLimit = "the request has been rejected because the tenant exceeded the ingestion rate limit, set to 10000 items/s " +
	"with a maximum allowed burst of 200000. This limit is applied on the total number of samples, exemplars and metadata " +
	"received across all distributors (err-mimir-tenant-max-ingestion-rate). To adjust the related per-tenant limits, " +
	"configure -distributor.ingestion-rate-limit and -distributor.ingestion-burst-size, or contact your service administrator."

// delayed is the verdict on a visibility delay: the instant, range and series (index)
// freshness probes saw canary samples, and each of their quantiles' ranges
// (lowerBoundSeconds to seconds) meets the delays the liar gave: from the row's Delay to what
// its queue of held writes and the receiver added on a busy machine (1.5 s more in one make
// test, where the nominal 2.7 s alone failed the cell).
func delayed(c verdict) string {
	f := c.st.Freshness
	if f == nil {
		return "no freshness in the results"
	}
	ds := c.liar.Delays()
	if len(ds) == 0 {
		return "the liar held no write"
	}
	lo, hi := slices.Min(ds).Seconds(), slices.Max(ds).Seconds()
	var msg string
	for _, p := range []struct {
		name  string
		probe *results.FreshnessProbe
	}{{"instant", f.Instant}, {"range", f.Range}, {"series", f.Series}} {
		if p.probe == nil || p.probe.Visible == 0 {
			msg += fmt.Sprintf("freshness.%s: no sample seen (%+v); ", p.name, p.probe)
			continue
		}
		below, above := p.probe.LowerBoundSeconds, p.probe.Seconds
		for _, q := range []struct {
			name         string
			below, above *float64
		}{{"p50", below.P50, above.P50}, {"p90", below.P90, above.P90}, {"p99", below.P99, above.P99}, {"max", below.Max, above.Max}} {
			if q.below == nil || q.above == nil || *q.below > hi || *q.above < lo {
				msg += fmt.Sprintf("freshness.%s %s: %v to %v s, want a range meeting the liar's delays, %.3f to %.3f s; ", p.name, q.name, fmtPtr(q.below), fmtPtr(q.above), lo, hi)
			}
		}
	}
	return msg
}

func fmtPtr(f *float64) string {
	if f == nil {
		return "null"
	}
	return fmt.Sprint(*f)
}

// missing is the verdict on data not returned: every sample the liar dropped or hides missing.
func missing(c verdict) string {
	return want("verify.missingSamples", c.told, c.st.Verify.MissingSamples)
}

// dropped is the verdict on a sample type acked and not kept: the read-back of the run's end,
// over a sample of it, finds none of what it looked for, and the liar dropped at least that.
func dropped(what string, read func(*results.Verify) (string, int64, int64)) func(c verdict) string {
	return func(c verdict) string {
		got, checked, missing := read(c.st.Verify)
		switch {
		case got != "dropped":
			return fmt.Sprintf("%s: verdict %q, want dropped", what, got)
		case checked == 0 || missing != checked:
			return fmt.Sprintf("%s: %d of %d checked missing, want all of some", what, missing, checked)
		case missing > c.told:
			return fmt.Sprintf("%s: %d missing, more than the %d the liar dropped", what, missing, c.told)
		}
		return ""
	}
}

var matrix = []lieRow{
	{
		name: "dropSamples", lies: storagetest.Lies{Lie: storagetest.LieDropSamples, Share: 0.05},
		check: missing, figure: "verify.missingSamples",
		modes: []mode{plain, history, rw2, otlp, resumed, merged, compared, continuous},
	},
	{
		name: "ulp", lies: storagetest.Lies{Lie: storagetest.LieULP, Share: 0.05},
		check: func(c verdict) string {
			return want("verify.changedValues", c.told, c.st.Verify.ChangedValues)
		},
		figure: "verify.changedValues", modes: []mode{plain, otlp, compared},
	},
	{
		name: "round", lies: storagetest.Lies{Lie: storagetest.LieRound},
		check: func(c verdict) string {
			return want("verify.changedValues", c.told, c.st.Verify.ChangedValues)
		},
		modes: []mode{plain},
	},
	{
		name: "shiftTimestamps", lies: storagetest.Lies{Lie: storagetest.LieShiftTimestamps, Share: 0.05, Shift: 7 * time.Millisecond},
		check: func(c verdict) string {
			return want("verify.shiftedTimestamps", c.told, c.st.Verify.ShiftedTimestamps) + want("verify.maxShiftMillis", 7, c.st.Verify.MaxShiftMillis)
		},
		modes: []mode{plain, otlp},
	},
	{
		name: "addLabel", lies: storagetest.Lies{Lie: storagetest.LieAddLabel, Label: labels.Label{Name: "tenant_id", Value: "default-tenant"}},
		check: renamed("tenant_id"),
		modes: []mode{plain, rw2, otlp, resumed, merged},
	},
	{
		name: "renameJobInstance", lies: storagetest.Lies{Lie: storagetest.LieRenameJobInstance},
		check: renamed("service_name"),
		modes: []mode{plain, resumed, merged},
	},
	{
		// Written in OTLP to a storage that keeps resource attributes as labels
		// (otlpLabels: underscore), job and instance are service_name and
		// service_instance_id by the storage's own translation, which is no lie; the liar
		// stores them as exported_job and exported_instance instead.
		name: "renameJobInstanceOTLP", lies: storagetest.Lies{Lie: storagetest.LieRenameJobInstance},
		check: renamed("service_name → exported_job"),
		modes: []mode{otlp},
	},
	{
		name: "partial", lies: storagetest.Lies{Lie: storagetest.LiePartial, Share: 0.05},
		check: missing, modes: []mode{plain, merged, continuous},
	},
	{
		// Shown to the queries of the run, gone by the read-back of its end; in lost, gone
		// between two of the checks made during the run.
		name: "deleteAfter", lies: storagetest.Lies{Lie: storagetest.LieDeleteAfter, Share: 0.05}, after: 2 * time.Second,
		check: missing, modes: []mode{plain, rw2, lost},
	},
	{
		name: "dropHistograms", lies: storagetest.Lies{Lie: storagetest.LieDropHistograms},
		config: "nativeHistograms: {send: \"true\", fromSummaries: true}\n",
		check: dropped("verify.nativeHistograms", func(v *results.Verify) (string, int64, int64) {
			if n := v.NativeHistograms; n != nil {
				return n.NativeVerdict(), n.CheckedHistograms, n.Missing
			}
			return "absent", 0, 0
		}),
		modes: []mode{plain, otlp, resumed, merged},
	},
	{
		name: "dropExemplars", lies: storagetest.Lies{Lie: storagetest.LieDropExemplars},
		config: "exemplars: {percent: 100}\n",
		check: dropped("verify.exemplars", func(v *results.Verify) (string, int64, int64) {
			if e := v.Exemplars; e != nil {
				return e.ExemplarVerdict(), e.Checked, e.Missing
			}
			return "absent", 0, 0
		}),
		modes: []mode{plain, merged},
	},
	{
		// Metadata has no time: the liar records each family whose metadata it dropped once,
		// and every family looked for is one of them, missing. In 2.0 the receiver keeps a
		// series sent without metadata as of type unknown, with no help or unit: no metadata,
		// so missing too (it read back as changed before issue 29's matrix said otherwise).
		name: "dropMetadata", lies: storagetest.Lies{Lie: storagetest.LieDropMetadata}, whole: true,
		config: "sendMetadata: true\n",
		check: func(c verdict) string {
			m := c.st.Verify.Metadata
			if m == nil {
				return "verify.metadata absent"
			}
			if v := m.MetadataVerdict(); v != "dropped" {
				return fmt.Sprintf("verify.metadata: verdict %q, want dropped (%+v)", v, *m)
			}
			return want("verify.metadata.missing", c.told, int64(m.Missing)) + want("verify.metadata.families", c.told, int64(m.Families))
		},
		modes: []mode{plain, rw2},
	},
	{
		// Churn (one of the 2 targets every second) writes staleness markers; the liar drops
		// them, so an instant query just after each returns its series: every marker checked
		// is ignored, and each is one the liar dropped in the window checked.
		name: "dropStale", lies: storagetest.Lies{Lie: storagetest.LieDropStale},
		config: "scrapeConfigUpdatePercent: 50\nscrapeConfigUpdateInterval: 1s\n",
		check: func(c verdict) string {
			v := c.st.Verify
			return want("verify.stalenessIgnored", c.told, v.StalenessIgnored) + want("verify.checkedStaleMarkers", c.told, v.CheckedStaleMarkers)
		},
		modes: []mode{plain, history},
	},
	{
		// A storage that acks a write at once and shows it 2.7 s later: the freshness
		// probes' ranges hold the delay. The polls, 20 ms to 10 s geometrically (0.02, 0.049,
		// 0.118, 0.287, 0.697, 1.694, 4.116, 10 s), are 1 s and 1.4 s from it: a query that
		// takes a second to answer on a loaded machine (its figure is when it started), or a
		// write the receiver takes long to store, moves the sample within the range, not out
		// of it. A canary sample at 10 s, with 14 s to be seen (beside other cells on a loaded
		// machine, polls merged behind slow queries missed it within 7 s), and one at 20 s.
		// The liar's count is the samples it held back.
		name: "delay", lies: storagetest.Lies{Lie: storagetest.LieDelay, Delay: 2700 * time.Millisecond}, whole: true,
		config: "freshness: {interval: 20ms, writeInterval: 10s}\nduration: 24s\n",
		check:  delayed,
		modes:  []mode{plain, merged},
	},
	{
		// Mimir's answer at its ingestion rate limit (pkg/distributor, as limits.go cites it)
		// to every other request: write.limits names the limit and counts each answer.
		name: "limit", whole: true,
		lies: storagetest.Lies{Lie: storagetest.LieRefuse, Share: 0.5, Status: http.StatusTooManyRequests, Body: mimirRateLimit},
		check: func(c verdict) string {
			msg := refused(http.StatusTooManyRequests)(c)
			requests := int64(len(c.liar.Told())) // each a refused request
			l := c.st.Write.Limits
			if len(l) != 1 || l[0].Limit != "ingestion rate (samples/s per tenant)" || l[0].Family != "Mimir" || l[0].Value != "10000" || l[0].Status != http.StatusTooManyRequests {
				return msg + fmt.Sprintf("write.limits %+v, want Mimir's ingestion rate (10000, 429) alone", l)
			}
			// Resumed: the checkpoint's limits kept (a restart lost them before 2f53702).
			if c.checkpoint != nil && limitRequests(c.checkpoint.Write) == 0 {
				return msg + "the checkpoint holds no refusal: the cell could not tell a run that loses it"
			}
			return msg + want("write.limits[0].requests", c.requests(requests, limitRequests), l[0].Requests)
		},
		// Resumed: killed after a checkpoint that holds a refusal.
		killWhen: func(st *results.Storage) bool { return st.Write != nil && limitRequests(st.Write) > 0 },
		modes:    []mode{plain, resumed},
	},
	{
		name: "refuse400", lies: storagetest.Lies{Lie: storagetest.LieRefuse, Share: 0.5, Status: http.StatusBadRequest}, whole: true,
		check: refused(http.StatusBadRequest), modes: []mode{plain, otlp},
	},
	{
		name: "refuse503", lies: storagetest.Lies{Lie: storagetest.LieRefuse, Share: 0.5, Status: http.StatusServiceUnavailable}, whole: true,
		check: refused(http.StatusServiceUnavailable), modes: []mode{plain, rw2},
	},
	{
		name: "refuse429", lies: storagetest.Lies{Lie: storagetest.LieRefuse, Share: 0.5, Status: http.StatusTooManyRequests}, whole: true,
		check: refused(http.StatusTooManyRequests), modes: []mode{plain},
	},
}

// matrixParallel is how many cells run at once: a cell mostly waits (its run's seconds, the
// receiver's fsyncs), so more than the test's -parallel (GOMAXPROCS).
const matrixParallel = 10

// TestMatrix runs every cell, matrixParallel at a time (t.Run from several goroutines, each
// waiting for its cell, so the cells are not held to -parallel), the long ones first: a
// resumed run or the checks during one (20 s and 14 s of load), then a row's own longer
// run, so that none of them starts last and sets the test's end alone.
func TestMatrix(t *testing.T) {
	profile := smallProfile(t, t.TempDir())
	type cellOf struct {
		row lieRow
		m   mode
	}
	var cells []cellOf
	for _, row := range matrix {
		for _, m := range row.modes {
			cells = append(cells, cellOf{row, m})
		}
	}
	long := func(c cellOf) int {
		switch {
		case c.m.name == resumed.name || c.m.name == continuous.name:
			return 2
		case strings.Contains(c.row.config, "duration:"):
			return 1
		}
		return 0
	}
	slices.SortStableFunc(cells, func(a, b cellOf) int { return cmp.Compare(long(b), long(a)) })
	slots := make(chan struct{}, matrixParallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, c := range cells {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			t.Run(c.row.name+"/"+c.m.name, func(t *testing.T) { cell(t, profile, c.row, c.m) })
		})
	}
}

// cell runs one cell: a receiver, the liar in front of it, the mode's run and the row's check.
func cell(t *testing.T, profile string, row lieRow, m mode) {
	e := &env{
		t: t, dir: t.TempDir(), profile: profile, figure: row.figure, extra: row.config, killWhen: row.killWhen,
		lies: row.lies, opts: m.recv,
	}
	if row.after > 0 {
		e.lies.After = time.Now().Add(row.after)
	}
	e.start()
	res, told := m.run(e)
	liar := e.liar // the last started
	if row.whole {
		told = liar.Total()
	}
	if told == 0 {
		v := res.Storage("liar").Verify
		t.Fatalf("the liar told no lie in what was checked: the cell could not fail (checked %d, window %s..%s, gaps %+v, errors %q)", v.CheckedSamples, v.CheckedFrom, v.CheckedTo, res.Gaps, v.Errors)
	}
	st := res.Storage("liar")
	c := verdict{st: st, told: told, liar: liar}
	if e.checkpoint != nil {
		c.checkpoint, c.killed = e.checkpoint.Storage("liar"), e.killed.Storage("liar")
	}
	if msg := row.check(c); msg != "" {
		t.Errorf("%s (checked %d samples, liar's total %d, examples %q, errors %q, gaps %+v, window %s..%s)", msg, st.Verify.CheckedSamples, liar.Total(), st.Verify.Examples, st.Verify.Errors, res.Gaps, st.Verify.CheckedFrom, st.Verify.CheckedTo)
	}
}
