package cli

import (
	"cmp"
	"fmt"
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
	"github.com/tsbench/tsbench/internal/storage/liar"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// The matrix (issue 29): every lie liar.Liar tells × every mode of tsbench that can
// see it. Each cell states the verdict the mode must give and the count it must give it with:
// the liar's own count of what it did over the window the cell expects read back, derived
// from what the cell set up (its run's start and history, its end, the kill and restart it
// caused: liar.Window), never from tsbench's own window, which is asserted to be that
// one to a scrape interval (issue 37). The same verdict for the same storage behaviour,
// whatever mode the run was in.
//
// Every count is exact, but for what a row or mode says can only be bounded, and why: the
// visibility delay (its figures are times, bracketed by polls, on two clocks the machine's
// load sets apart: delayed), and a check during the run cut short by the load's end
// (checkedDuringRun). A cell ends its run at an event, where it must see one happen in it
// (a checkpoint, the scrapes after a restart, a check of lied data, a canary sample seen),
// not at a time sized for an idle machine (matrixrun_test.go).

// lieRow is one lie and its verdict: check compares a storage's results with the liar's
// count over what the mode checked and returns what differs, "" when the cell holds.
type lieRow struct {
	name string
	lies liar.Lies
	// after, for LieDeleteAfter, is when the lie starts: this long after the cell does.
	after time.Duration
	// whole judges the liar's whole count (refused requests), not its count over the
	// read-back's window.
	whole bool
	// config is YAML the row adds to every mode's config (the sample types it lies about).
	config string
	// killWhen, for resumed, is what the checkpoint the first part is killed after must
	// hold, besides being 3 s into the run (nil: nothing).
	killWhen func(st *results.Storage) bool
	// until is, for a row whose lie must land inside the run, what a checkpoint must show
	// (of the lead shard, in merged) for the cell to end the run (nil: the run's own end).
	until func(st *results.Storage) bool
	// figure is the count the verdict is in, for report compare's mode: it must flag it,
	// from 0 in a run without the lie to the liar's count in one with it.
	figure string
	check  func(c verdict) string
	modes  []mode
}

// verdict is what a cell's check reads: the storage's results, the liar's count over the
// window expected read back (want; its whole count for a whole row) and the liar.
type verdict struct {
	st   *results.Storage
	told int64
	want liar.Window
	liar *liar.Liar
	// checkpoint is, in resumed, the first part's checkpoint the run continued from; nil else.
	checkpoint *results.Storage
	// starved: tsbench dropped samples of a row that refuses none (starved): counts over
	// samples are bounds.
	starved bool
}

// requests is what a run's write counts must hold of the requests the liar refused, count
// reading one count of a write section: every refusal, but in resumed the checkpoint's and
// those after the restart (each the second part's: the first had drained before it). The
// first part's answers after its checkpoint are lost with it, as a killed process's are,
// whether it read them or not: a request refused as the part was stopped is in the liar's
// record and in no run's (a starved kill once made the cell want one more than it could see).
func (c verdict) requests(count func(*results.Write) int64) int64 {
	var n, since int64
	if c.checkpoint != nil {
		n, since = count(c.checkpoint.Write), c.want.Gaps[0].To.UnixMilli()
	}
	for _, t := range c.liar.Told() {
		if t.Series == "" && t.T >= since {
			n++
		}
	}
	return n
}

// matrixBase is a run of a few seconds over 2 targets of the default profile's first 150
// series (smallProfile), scrapeInterval scrapes: ~900 samples, all checked (verifySamples
// above them), no canary.
const matrixBase = `targetsCount: 2
profile: PROFILE
scrapeInterval: 1s
queryInterval: 1s
verifySamples: 100000
freshness: {interval: 0s}
`

// scrapeInterval is matrixBase's.
const scrapeInterval = time.Second

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

var matrix = []lieRow{
	{
		name: "dropSamples", lies: liar.Lies{Lie: liar.LieDropSamples, Share: 0.05},
		check: missing, figure: "verify.missingSamples",
		modes: []mode{plain, history, rw2, otlp, resumed, merged, compared, continuous},
	},
	{
		name: "ulp", lies: liar.Lies{Lie: liar.LieULP, Share: 0.05},
		check: func(c verdict) string {
			return want("verify.changedValues", c.told, c.st.Verify.ChangedValues)
		},
		figure: "verify.changedValues", modes: []mode{plain, otlp, compared},
	},
	{
		name: "round", lies: liar.Lies{Lie: liar.LieRound},
		check: func(c verdict) string {
			return want("verify.changedValues", c.told, c.st.Verify.ChangedValues)
		},
		modes: []mode{plain},
	},
	{
		name: "shiftTimestamps", lies: liar.Lies{Lie: liar.LieShiftTimestamps, Share: 0.05, Shift: 7 * time.Millisecond},
		check: func(c verdict) string {
			return want("verify.shiftedTimestamps", c.told, c.st.Verify.ShiftedTimestamps) + want("verify.maxShiftMillis", 7, c.st.Verify.MaxShiftMillis)
		},
		modes: []mode{plain, otlp},
	},
	{
		name: "addLabel", lies: liar.Lies{Lie: liar.LieAddLabel, Label: labels.Label{Name: "tenant_id", Value: "default-tenant"}},
		check: renamed("tenant_id"),
		modes: []mode{plain, rw2, otlp, resumed, merged},
	},
	{
		name: "renameJobInstance", lies: liar.Lies{Lie: liar.LieRenameJobInstance},
		check: renamed("service_name"),
		modes: []mode{plain, resumed, merged},
	},
	{
		// Written in OTLP to a storage that keeps resource attributes as labels
		// (otlpLabels: underscore), job and instance are service_name and
		// service_instance_id by the storage's own translation, which is no lie; the liar
		// stores them as exported_job and exported_instance instead.
		name: "renameJobInstanceOTLP", lies: liar.Lies{Lie: liar.LieRenameJobInstance},
		check: renamed("service_name → exported_job"),
		modes: []mode{otlp},
	},
	{
		// In OTLP the series left out are chosen by their labels as the receiver stores
		// them, which the liar's record holds (otlpStored).
		name: "partial", lies: liar.Lies{Lie: liar.LiePartial, Share: 0.05},
		check: missing, modes: []mode{plain, merged, continuous, otlp},
	},
	{
		// Shown to the queries of the run, gone by the read-back of its end; in lost, gone
		// between two of the checks made during the run.
		name: "deleteAfter", lies: liar.Lies{Lie: liar.LieDeleteAfter, Share: 0.05}, after: 2 * time.Second,
		check: missing, modes: []mode{plain, rw2, lost},
	},
	{
		name: "dropHistograms", lies: liar.Lies{Lie: liar.LieDropHistograms},
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
		name: "dropExemplars", lies: liar.Lies{Lie: liar.LieDropExemplars},
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
		name: "dropMetadata", lies: liar.Lies{Lie: liar.LieDropMetadata}, whole: true,
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
		name: "dropStale", lies: liar.Lies{Lie: liar.LieDropStale},
		config: "scrapeConfigUpdatePercent: 50\nscrapeConfigUpdateInterval: 1s\n",
		check: func(c verdict) string {
			v := c.st.Verify
			return want("verify.stalenessIgnored", c.told, v.StalenessIgnored) + want("verify.checkedStaleMarkers", c.told, v.CheckedStaleMarkers)
		},
		modes: []mode{plain, history},
	},
	{
		// A storage that acks a write at once and shows it 2.7 s later: the freshness
		// probes' brackets hold the delay. The polls, 20 ms to 10 s geometrically (0.02,
		// 0.049, 0.118, 0.287, 0.697, 1.694, 4.116, 10 s), are 1 s and 1.4 s from it. A canary
		// sample every 10 s; the run goes on until each probe has seen one (until): on a loaded
		// machine a delay past 4.1 s is seen by the 10 s poll only, which a run of a fixed 24 s
		// once did not reach ("no sample seen").
		//
		// A bound, not a count: tsbench times a sample from the ack it got to the start of
		// the first query that returned it, the liar from the write's arrival to its forward
		// and the receiver's answer; a loaded machine puts time between the two clocks (the
		// ack's way back, a query's way to the receiver) that neither sees, and the bracket
		// is the polls' resolution. The liar's count (whole) is the samples it held back.
		// Skip: the canary is not a target (Liar.Reached); its writes are held all the same.
		name: "delay", lies: liar.Lies{Lie: liar.LieDelay, Delay: 2700 * time.Millisecond, Skip: "tsbench_"}, whole: true,
		config: "freshness: {interval: 20ms, writeInterval: 10s}\n",
		until:  seen,
		check:  delayed,
		modes:  []mode{plain, merged},
	},
	{
		// Mimir's answer at its ingestion rate limit (pkg/distributor, as limits.go cites it)
		// to every other request: write.limits names the limit and counts each answer.
		name: "limit", whole: true,
		lies: liar.Lies{Lie: liar.LieRefuse, Share: 0.5, Status: http.StatusTooManyRequests, Body: mimirRateLimit},
		check: func(c verdict) string {
			msg := refused(http.StatusTooManyRequests)(c)
			l := c.st.Write.Limits
			if len(l) != 1 || l[0].Limit != "ingestion rate (samples/s per tenant)" || l[0].Family != "Mimir" || l[0].Value != "10000" || l[0].Status != http.StatusTooManyRequests {
				return msg + fmt.Sprintf("write.limits %+v, want Mimir's ingestion rate (10000, 429) alone", l)
			}
			// Resumed: the checkpoint's limits kept (a restart lost them before 2f53702).
			if c.checkpoint != nil && limitRequests(c.checkpoint.Write) == 0 {
				return msg + "the checkpoint holds no refusal: the cell could not tell a run that loses it"
			}
			return msg + want("write.limits[0].requests", c.requests(limitRequests), l[0].Requests)
		},
		// Resumed: killed after a checkpoint that holds a refusal.
		killWhen: func(st *results.Storage) bool { return st.Write != nil && limitRequests(st.Write) > 0 },
		modes:    []mode{plain, resumed},
	},
	{
		name: "refuse400", lies: liar.Lies{Lie: liar.LieRefuse, Share: 0.5, Status: http.StatusBadRequest}, whole: true,
		check: refused(http.StatusBadRequest), modes: []mode{plain, otlp},
	},
	{
		name: "refuse503", lies: liar.Lies{Lie: liar.LieRefuse, Share: 0.5, Status: http.StatusServiceUnavailable}, whole: true,
		check: refused(http.StatusServiceUnavailable), modes: []mode{plain, rw2},
	},
	{
		name: "refuse429", lies: liar.Lies{Lie: liar.LieRefuse, Share: 0.5, Status: http.StatusTooManyRequests}, whole: true,
		check: refused(http.StatusTooManyRequests), modes: []mode{plain},
	},
}

// matrixParallel is how many cells run at once: a cell mostly waits (its run's seconds, the
// receiver's fsyncs), so more than the test's -parallel (GOMAXPROCS).
const matrixParallel = 10

// TestMatrix runs every cell, matrixParallel at a time (t.Run from several goroutines, each
// waiting for its cell, so the cells are not held to -parallel), the long ones first: a
// resumed run (two parts) or the checks during one (until they found what the cell waits
// for), then a row that waits for its lie to land in the run, so that none of them starts
// last and sets the test's end alone.
func TestMatrix(t *testing.T) {
	t.Parallel() // its cells mostly wait: beside the other tests
	profile := smallProfile(t, t.TempDir())
	type cellOf struct {
		row lieRow
		m   mode
	}
	var cells []cellOf
	for _, row := range matrixRows(t) {
		for _, m := range row.modes {
			cells = append(cells, cellOf{row, m})
		}
	}
	long := func(c cellOf) int {
		switch {
		case c.m.name == resumed.name || c.m.name == continuous.name:
			return 2
		case c.row.until != nil:
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

// matrixRows is the matrix, or the rows named in $TSBENCH_MATRIX_ROWS (comma-separated):
// make test runs the whole matrix without -race, and one row in every mode under it
// (scripts/test.sh).
func matrixRows(t *testing.T) []lieRow {
	names := os.Getenv("TSBENCH_MATRIX_ROWS")
	if names == "" {
		return matrix
	}
	var rows []lieRow
	for name := range strings.SplitSeq(names, ",") {
		i := slices.IndexFunc(matrix, func(r lieRow) bool { return r.name == name })
		if i < 0 {
			t.Fatalf("TSBENCH_MATRIX_ROWS: no row %q in the matrix", name)
		}
		rows = append(rows, matrix[i])
	}
	return rows
}

// cell runs one cell: a receiver, the liar in front of it, the mode's run, the read-back's
// window against the cell's, and the row's check.
func cell(t *testing.T, profile string, row lieRow, m mode) {
	e := &env{
		t: t, dir: t.TempDir(), profile: profile, figure: row.figure, extra: row.config, killWhen: row.killWhen,
		until: row.until, lies: row.lies, opts: m.recv,
	}
	if row.after > 0 {
		e.lies.After = time.Now().Add(row.after)
	}
	e.start()
	res := m.run(e)
	lr := e.liar // the last started
	st := res.Storage("liar")
	if st == nil || st.Verify == nil {
		t.Fatalf("no read-back in the results: %+v", st)
	}
	v := st.Verify
	t.Logf("read back %s..%s, gaps %+v; the cell's window %s..%s, gaps %+v", v.CheckedFrom, v.CheckedTo, res.Gaps, e.want.From, e.want.To, e.want.Gaps)
	if msg := e.want.Check(v.CheckedFrom, v.CheckedTo, res.Gaps); msg != "" {
		t.Errorf("the read-back's window is not the one the cell set up: %s", msg)
	}
	told := e.want.Count(lr, nil)
	if row.whole {
		told = lr.Total()
	}
	if told == 0 {
		t.Fatalf("the liar told no lie in the window: the cell could not fail (checked %d, errors %q)", v.CheckedSamples, v.Errors)
	}
	c := verdict{st: st, told: told, want: e.want, liar: lr, starved: !row.whole && starved(st)}
	if c.starved {
		t.Logf("a starved run: %d samples dropped (%v), %d not looked for: counts are bounds", st.Write.Dropped(), st.Write.DroppedSamples, v.NotAckedSamples)
	}
	if e.checkpoint != nil {
		c.checkpoint = e.checkpoint.Storage("liar")
	}
	if msg := row.check(c); msg != "" {
		t.Errorf("%s(checked %d samples, liar's count %d of %d, examples %q, errors %q; %s; %s)", msg, v.CheckedSamples, told, lr.Total(), v.Examples, v.Errors, writeAccount(st.Write), e.recv.Account())
	}
}

// writeAccount is a run's write account in one line, for a failed cell's message: what
// tsbench says it had acked, dropped and left pending.
func writeAccount(w *results.Write) string {
	if w == nil {
		return "no write section"
	}
	return fmt.Sprintf("write: generated %d, acked %d, dropped %v, pending %d, answers %v, retries %d",
		w.GeneratedSamples, w.AckedSamples, w.DroppedSamples, w.PendingSamples, w.RequestsByStatus, w.Retries)
}
