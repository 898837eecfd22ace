package conformance

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/liar"
)

// The conformance column of issue 29's matrix: each lie liar.Liar tells that
// conformance can see, against operators.test (every eval applies; Prometheus' own receiver
// passes them all), with the verdict conformance must give each eval. Nothing is pinned from
// a run (issue 37): the verdict is computed from the liar's record, which says what it did
// to which sample, and the test file, whose evals are asked of Prometheus' engine in process
// over the data written and over that data as the record says the storage holds it
// (liar_reference_test.go). An eval whose answer the lie changes fails as the cell's kind
// (rejected where the answer becomes an error), every other passes; the cell's other figures
// come from the record and the data written alike. A cell whose liar told no lie, or whose
// lie changes no answer, fails: none can pass without being able to fail.

// lieNow places the data: a fixed time, so that the samples a share-lie picks (a hash of
// the series and the timestamp) are the same in every run. The receiver takes data of any
// age into an empty TSDB.
var lieNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// written is what the subset writes, counted as the liar counts.
type written struct {
	samples   int64 // every sample
	hists     int64 // native histogram samples
	jobOrInst int64 // samples of series with a job or instance label
	requests  int   // write requests an honest storage takes: one per block, kind and slice
	// data is as writeAll takes it: placed[i]'s float series at 2i, its histograms at 2i+1.
	data   [][]series
	placed []Placed
}

// countWritten counts the samples Run writes of s at now (every eval of operators.test
// applies, so every block is written).
func countWritten(t *testing.T, s *Suite, now time.Time) written {
	t.Helper()
	var blocks []*Block
	for _, f := range s.Files {
		blocks = append(blocks, f.Blocks...)
	}
	w := written{}
	w.placed, _ = Layout(blocks, now)
	for _, p := range w.placed {
		for _, e := range p.Evals {
			if evalReason(e) != "" {
				t.Fatalf("%s:%d is not applicable: the counts assume every eval is", p.File, e.Line)
			}
		}
		floats, hists := splitKinds(blockSeries(p, intervals(p.Block)))
		w.data = append(w.data, floats, hists)
		for _, x := range append(floats, hists...) {
			n := int64(len(x.samples))
			w.samples += n
			if x.labels.Has("job") || x.labels.Has("instance") {
				w.jobOrInst += n
			}
			for _, smp := range x.samples {
				if smp.H != nil {
					w.hists++
				}
			}
		}
	}
	w.requests = replay(w.data, 0).sent
	return w
}

// refusal is writeAll's requests (one per block's kind and slice that holds samples, slice
// after slice) replayed to a storage that refuses every nth (none for 0), as the liar's
// LieRefuse with Share 1/n does: a block's kind refused is not sent further.
type refusal struct {
	sent    int
	refused []int64    // the samples of each request refused, in order
	stopped []bool     // by data index: a request of it was refused
	stored  [][]series // by data index: the samples of the requests taken
}

func replay(data [][]series, n int) refusal {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, ss := range data {
		for _, x := range ss {
			lo, hi = min(lo, x.samples[0].T), max(hi, x.samples[len(x.samples)-1].T)
		}
	}
	r := refusal{stopped: make([]bool, len(data)), stored: make([][]series, len(data))}
	for from := lo; from <= hi; from += slice.Milliseconds() {
		for i, ss := range data {
			part := cut(ss, from, from+slice.Milliseconds())
			if r.stopped[i] || len(part) == 0 {
				continue
			}
			r.sent++
			if n == 0 || r.sent%n != 0 {
				r.stored[i] = append(r.stored[i], part...)
				continue
			}
			var samples int64
			for _, x := range part {
				samples += int64(len(x.samples))
			}
			r.refused, r.stopped[i] = append(r.refused, samples), true
		}
	}
	return r
}

// lieVerdict is what a cell's check reads.
type lieVerdict struct {
	out  *results.Conformance
	liar *liar.Liar
	lies liar.Lies
	w    written
	ref  *reference
	told recorded
	hid  map[string]bool // the liar's answers to hides, by labels
}

// effect is what a lie does, as the liar's record says: the data the storage holds, what
// an answer shows, and what conformance must call a failure it causes.
type effect struct {
	held  held                            // nil: the data written
	shown func(e *Eval, a refAnswer) bool // alters an answer as conformance reads it; true: labels the storage adds taken off
	kind  func(p Placed, e *Eval) string  // the failure kind of an eval whose answer the lie changed
	whole map[*Block]bool                 // blocks refused: each eval fails as data rejected, not asked
}

// lieCell is one lie and the figures conformance must give on it beside each eval's verdict:
// check returns what differs, "" when the cell holds.
type lieCell struct {
	name   string
	lies   liar.Lies
	effect func(v *lieVerdict) effect // nil: the data held and answered as written
	check  func(v *lieVerdict) string
}

func wantCount(what string, want, got int64) string {
	if want != got {
		return fmt.Sprintf("%s: want %d, got %d; ", what, want, got)
	}
	return ""
}

// noDrop is the check of a cell whose lie loses no float sample.
func noDrop(v *lieVerdict) string {
	return wantCount("droppedSamples", 0, int64(v.out.DroppedSamples))
}

// requestsTold are the samples of each request the liar told about (refused or held), in order.
func requestsTold(l *liar.Liar) []int64 {
	var n []int64
	for _, t := range l.Told() {
		if t.Series == "" {
			n = append(n, t.N)
		}
	}
	return n
}

var tenant = labels.Label{Name: "tenant_id", Value: "default-tenant"}

// renamed is a series' labels as LieRenameJobInstance stores them.
func renamed(ls labels.Labels) labels.Labels {
	b := labels.NewBuilder(ls)
	for from, to := range map[string]string{"job": "service_name", "instance": "service_instance_id"} {
		if v := ls.Get(from); v != "" {
			b.Del(from).Set(to, v)
		}
	}
	return b.Labels()
}

func kindOf(kind string) func(Placed, *Eval) string {
	return func(Placed, *Eval) string { return kind }
}

var lieCells = []lieCell{
	{
		// An honest liar: the subset passes whole, and the liar records nothing.
		name:  "none",
		check: func(v *lieVerdict) string { return wantCount("liar's record", 0, v.liar.Total()) + noDrop(v) },
	},
	{
		// Thanos receive's tenant_id on every series: found once and taken off every answer,
		// the evals whose answer held it counted as passed with it. An eval fails where
		// tenant_id changes what PromQL matches (`... AND IGNORING (group, instance, job)
		// vector(1)` matches nothing once tenant_id is in the left side's labels): a wrong
		// answer.
		name: "addLabel",
		lies: liar.Lies{Lie: liar.LieAddLabel, Label: tenant},
		effect: func(v *lieVerdict) effect {
			return effect{
				held: v.relabeled(func(ls labels.Labels) labels.Labels {
					return labels.NewBuilder(ls).Set(tenant.Name, tenant.Value).Labels()
				}),
				shown: stripped(tenant),
				kind:  kindOf(results.KindWrongAnswer),
			}
		},
		check: func(v *lieVerdict) string {
			msg := recordHolds(v, "a sample", func(Sample) bool { return true }) +
				wantCount("liar's record: every sample written", v.w.samples, v.liar.Total()) + noDrop(v)
			if diff := cmp.Diff(map[string]string{tenant.Name: tenant.Value}, v.out.AddedLabels); diff != "" {
				msg += fmt.Sprintf("added labels (-want +got):\n%s", diff)
			}
			return msg
		},
	},
	{
		// job and instance stored as service_name and service_instance_id: not labels added
		// (no answer is compared without them), nor data lost (every sample is answered,
		// under other labels): the evals whose answer the renamed labels change fail as wrong
		// answers, or rejected where the engine answers an error (a division on (instance,
		// job) that finds many series on each side: the storage's own answer).
		name: "renameJobInstance",
		lies: liar.Lies{Lie: liar.LieRenameJobInstance},
		effect: func(v *lieVerdict) effect {
			return effect{held: v.relabeled(renamed), kind: kindOf(results.KindWrongAnswer)}
		},
		check: func(v *lieVerdict) string {
			msg := recordHolds(v, "a sample", func(Sample) bool { return true }) +
				wantCount("liar's record: the samples of series with job or instance", v.w.jobOrInst, v.liar.Total()) + noDrop(v)
			if v.out.AddedLabels != nil {
				msg += fmt.Sprintf("added labels %v, want none; ", v.out.AddedLabels)
			}
			return msg
		},
	},
	{
		// Native histograms acked and dropped: the last one never shows in the time it is
		// waited for, and the evals answered wrong without them fail as "data dropped after
		// ack", in the pass rate; no float is counted lost.
		name: "dropHistograms",
		lies: liar.Lies{Lie: liar.LieDropHistograms},
		effect: func(v *lieVerdict) effect {
			return effect{held: v.without(), kind: kindOf(results.KindDataDropped)}
		},
		check: func(v *lieVerdict) string {
			return recordHolds(v, "a native histogram", func(s Sample) bool { return s.H != nil }) +
				wantCount("liar's record: every native histogram written", v.w.hists, v.liar.Total()) + noDrop(v)
		},
	},
	{
		// 5 % of the float samples acked and dropped: the read-back finds exactly the liar's
		// count missing, and the evals answered wrong for it fail as "data dropped after
		// ack", not as wrong answers.
		name: "dropSamples",
		lies: liar.Lies{Lie: liar.LieDropSamples, Share: 0.05},
		effect: func(v *lieVerdict) effect {
			return effect{held: v.without(), kind: kindOf(results.KindDataDropped)}
		},
		check: func(v *lieVerdict) string {
			return recordHolds(v, "a float with a number", isNumber) +
				wantCount("droppedSamples (the liar's count)", v.liar.Total(), int64(v.out.DroppedSamples))
		},
	},
	{
		// 10 % of the series left out of every answer, computed ones too (chosen by their
		// labels: {} may be among them, and vector(1) through the liar answers nothing). The
		// stored ones the liar hides are read back as not answered, and an eval that reads
		// their metric names fails as "data dropped after ack"; one whose answer lost a
		// series it computed is a wrong answer.
		name: "partial",
		lies: liar.Lies{Lie: liar.LiePartial, Share: 0.1},
		effect: func(v *lieVerdict) effect {
			return effect{shown: v.hidden, kind: func(p Placed, e *Eval) string {
				if v.readsHidden(p, e) {
					return results.KindDataDropped
				}
				return results.KindWrongAnswer
			}}
		},
		check: func(v *lieVerdict) string {
			msg := recordHolds(v, "a float with a number", isNumber) +
				wantCount("droppedSamples (the liar's count)", v.liar.Total(), int64(v.out.DroppedSamples))
			for _, s := range v.ref.data {
				if v.told.series(s.labels) && !v.hides(s.labels) {
					msg += fmt.Sprintf("%s is in the record and answered through the liar: the probe of what it hides is wrong; ", s.labels)
				}
			}
			return msg
		},
	},
	refuseRejected(http.StatusBadRequest),
	refuseRejected(http.StatusInternalServerError),
	refuseRetried(http.StatusServiceUnavailable),
	refuseRetried(http.StatusTooManyRequests),
	{
		// 50 % of the float samples one ulp up: within the runner's tolerance (1e-6
		// relative), so an eval fails only where PromQL itself is exact (a comparison of equal
		// values, a remainder near 0: 8+ulp % 2 is 1.8e-15, not 0), as a wrong answer. No data
		// is lost.
		name: "ulp",
		lies: liar.Lies{Lie: liar.LieULP, Share: 0.5},
		effect: func(v *lieVerdict) effect {
			return effect{held: v.bumped(), kind: kindOf(results.KindWrongAnswer)}
		},
		check: func(v *lieVerdict) string {
			return recordHolds(v, "a finite float", func(s Sample) bool { return isNumber(s) && !math.IsInf(s.V, 0) }) + noDrop(v)
		},
	},
	{
		// Every write acknowledged at once and handed to the storage 3 s later, in order (a
		// storage that buffers what it acks): conformance waits until the last sample
		// written shows, and the whole subset passes; asked at once, the evals would read
		// nothing.
		name: "delay",
		lies: liar.Lies{Lie: liar.LieDelay, Delay: 3 * time.Second},
		check: func(v *lieVerdict) string {
			return wantCount("write requests held", int64(v.w.requests), int64(len(requestsTold(v.liar)))) + noDrop(v)
		},
	},
}

// isNumber tells a float sample with a number (not NaN, not a staleness marker).
func isNumber(s Sample) bool { return s.H == nil && !math.IsNaN(s.V) }

// refuseRejected is the cell of half the write requests refused with status, 400 or 500 (the
// storage's answer to the data, as Prometheus 2.42 answers 500 to an invalid native
// histogram): not retried, as it would be refused again. The requests refused are those of
// writeAll's order the liar's every second lands on (replay), each block kind refused not
// sent further: a block whose floats were refused fails whole as "data rejected"; one whose
// native histograms alone were fails the evals answered wrong without those sent after.
func refuseRejected(status int) lieCell {
	return lieCell{
		name: fmt.Sprintf("refuse%d", status),
		lies: liar.Lies{Lie: liar.LieRefuse, Share: 0.5, Status: status},
		effect: func(v *lieVerdict) effect {
			r := replay(v.w.data, 2)
			ef := effect{held: hold(r.stored), whole: map[*Block]bool{}, kind: kindOf(results.KindDataRejected)}
			for i, p := range v.ref.placed {
				ef.whole[p.Block] = r.stopped[2*i]
			}
			return ef
		},
		check: func(v *lieVerdict) string {
			r := replay(v.w.data, 2)
			var msg string
			if diff := cmp.Diff(r.refused, requestsTold(v.liar)); diff != "" {
				msg += fmt.Sprintf("samples of the requests refused, replayed (-) and the liar's record (+):\n%s", diff)
			}
			var want, got []int
			for i, p := range v.ref.placed {
				if r.stopped[2*i] || r.stopped[2*i+1] {
					want = append(want, p.Evals[0].Line)
				}
			}
			for _, b := range v.out.RejectedBlocks {
				got = append(got, b.Line)
				if !strings.Contains(b.Answer, fmt.Sprintf("remote write answered %d: refused by the liar", status)) {
					msg += fmt.Sprintf("rejected block %+v: want the answer quoted; ", b)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				msg += fmt.Sprintf("rejected blocks: those with a request refused (-want +got):\n%s", diff)
			}
			if v.out.WriteRetries != nil {
				msg += fmt.Sprintf("write retries %v: a %d is not retried; ", v.out.WriteRetries, status)
			}
			return msg + noDrop(v)
		},
	}
}

// refuseRetried is the cell of half the write requests refused with status, 503 or 429
// (Retry-After: 0): each refused request is sent again, as a run does, and taken, so the
// subset passes whole. The liar refuses every second request: the first is taken, and each
// later one is refused once and taken on its retry, the request after it; the retries are
// counted by status.
func refuseRetried(status int) lieCell {
	return lieCell{
		name: fmt.Sprintf("refuse%d", status),
		lies: liar.Lies{Lie: liar.LieRefuse, Share: 0.5, Status: status},
		check: func(v *lieVerdict) string {
			refused := len(requestsTold(v.liar))
			msg := wantCount("requests refused: every one but the first", int64(v.w.requests-1), int64(refused)) + noDrop(v)
			if diff := cmp.Diff(map[string]int{strconv.Itoa(status): refused}, v.out.WriteRetries); diff != "" {
				msg += fmt.Sprintf("write retries, the liar's refused requests (-want +got):\n%s", diff)
			}
			if len(v.out.RejectedBlocks) != 0 {
				msg += fmt.Sprintf("rejected blocks %+v, want none; ", v.out.RejectedBlocks)
			}
			return msg
		},
	}
}

// TestConformanceLies runs every cell of lieCells, in parallel: operators.test against a
// receiver behind a liar.
func TestConformanceLies(t *testing.T) {
	s := builtinFiles(t, "operators.test") // before any receiver parses a query
	w := countWritten(t, s, lieNow)
	ref := newReference(w)
	for _, c := range lieCells {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lieCellRun(t, s, w, ref, c)
		})
	}
}

func lieCellRun(t *testing.T, s *Suite, w written, ref *reference, c lieCell) {
	lr, err := liar.Start(startReceiver(t).URL, c.lies)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lr.Close(); err != nil {
			t.Error(err)
		}
	})
	st := config.Storage{WriteURL: lr.URL + liar.WritePath, ReadURL: lr.URL + "/"}
	out, err := Run(t.Context(), s, "liar", st, lieNow, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	v := &lieVerdict{out: out, liar: lr, lies: c.lies, w: w, ref: ref, told: record(lr), hid: map[string]bool{}}
	want := expected{failed: map[int]string{}}
	if c.effect != nil {
		want = v.expect(c.effect(v))
	}
	msg := verdictDiff(v, want) + c.check(v)
	if c.lies.Lie != "" && len(lr.Told()) == 0 {
		msg += "the liar told no lie: the cell could not fail; "
	}
	if c.effect != nil && len(want.failed) == 0 && want.addedPassed == 0 {
		msg += "the lie changes no answer of the reference: the cell could not fail; "
	}
	if msg != "" {
		t.Errorf("%s\n(liar's total %d, kinds %v, dropped %d, added labels %v, retries %v)", msg, lr.Total(), out.Kinds, out.DroppedSamples, out.AddedLabels, out.WriteRetries)
		for _, f := range out.Failures {
			t.Logf("%s:%d %s: %s\n  expected %s\n  got      %s", f.File, f.Line, f.Expr, f.Kind, f.Expected, f.Got)
		}
	}
}

// A storage that renames job is waited for by the metric name of the last series written,
// not by every label of it: the data shows, and the eval whose answer holds job fails as a
// wrong answer while count(a) passes. (Before, the wait asked for {__name__="a", job="x"},
// which such a storage never answers, and Run failed: "not visible after a minute".)
func TestRunRenamedLabelsVisible(t *testing.T) {
	f, err := ParseFile("x.test", "load 1m\n  a{job=\"x\"} 1 2 3\n\neval instant at 2m a\n  a{job=\"x\"} 3\n\neval instant at 2m count(a)\n  {} 1\n")
	if err != nil {
		t.Fatal(err)
	}
	lr, err := liar.Start(startReceiver(t).URL, liar.Lies{Lie: liar.LieRenameJobInstance})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lr.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	st := config.Storage{WriteURL: lr.URL + liar.WritePath, ReadURL: lr.URL + "/"}
	out, err := Run(ctx, &Suite{Files: []*File{f}}, "renamer", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if out.Passed != 1 || out.Failed != 1 || out.Kinds[results.KindWrongAnswer] != 1 || lr.Total() != 3 {
		t.Errorf("passed %d, failed %d %v, liar's record %d: want count(a) passed, a a wrong answer, 3 samples renamed", out.Passed, out.Failed, out.Kinds, lr.Total())
	}
}
