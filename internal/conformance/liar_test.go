package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// The conformance column of issue 29's matrix: each lie storagetest.Liar tells that
// conformance can see, against operators.test (213 evals: 141 over floats, 72 over native
// histograms; Prometheus' own receiver passes them all), with the verdict conformance must
// give and the exact count it must give it with, from the liar's own record or from the
// data the subset writes. A cell whose liar told no lie fails: none can pass without being
// able to fail.

// lieNow places the data: a fixed time, so that the samples a share-lie picks (a hash of
// the series and the timestamp) are the same in every run, and with them the evals that
// fail. The receiver takes data of any age into an empty TSDB.
var lieNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// written is what the subset writes, counted as the liar counts.
type written struct {
	floats    int64 // float samples with a number (not NaN, not a staleness marker)
	nans      int64 // float samples that are NaN or a staleness marker
	hists     int64 // native histogram samples
	jobOrInst int64 // samples of series with a job or instance label
	newest    int64 // the newest sample's time, ms
	byTime    map[int64]int64
	requests  int        // write requests an honest storage takes: one per block, kind and slice
	data      [][]series // as writeAll takes them: block i's floats at 2i, its histograms at 2i+1
}

// countWritten counts the samples Run writes of s at now (every eval of operators.test
// applies, so every block is written).
func countWritten(t *testing.T, s *Suite, now time.Time) written {
	t.Helper()
	var blocks []*Block
	for _, f := range s.Files {
		blocks = append(blocks, f.Blocks...)
	}
	placed, _ := Layout(blocks, now)
	w := written{byTime: map[int64]int64{}}
	var data [][]series
	for _, p := range placed {
		for _, e := range p.Evals {
			if evalReason(e) != "" {
				t.Fatalf("%s:%d is not applicable: the counts assume every eval is", p.File, e.Line)
			}
		}
		floats, hists := splitKinds(blockSeries(p, intervals(p.Block)))
		data = append(data, floats, hists)
		for _, ss := range [][]series{floats, hists} {
			for _, x := range ss {
				named := x.labels.Has("job") || x.labels.Has("instance")
				for _, smp := range x.samples {
					switch {
					case smp.H != nil:
						w.hists++
					case math.IsNaN(smp.V):
						w.nans++
					default:
						w.floats++
					}
					if named {
						w.jobOrInst++
					}
					w.newest = max(w.newest, smp.T)
					w.byTime[smp.T]++
				}
			}
		}
	}
	w.data = data
	w.requests, _, _ = refusals(data, 0)
	return w
}

// refusals replays writeAll's requests (one per block's kind and slice that holds samples,
// slice after slice; a block's kind refused is not sent further) to a storage that refuses
// every nth (none for 0), as the liar's LieRefuse with Share 1/n does, and returns the
// requests sent, those refused, and the blocks with a kind refused.
func refusals(data [][]series, n int) (sent, refused, blocks int) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, ss := range data {
		for _, x := range ss {
			lo, hi = min(lo, x.samples[0].T), max(hi, x.samples[len(x.samples)-1].T)
		}
	}
	stopped := make([]bool, len(data))
	for from := lo; from <= hi; from += slice.Milliseconds() {
		for i, ss := range data {
			if stopped[i] || len(cut(ss, from, from+slice.Milliseconds())) == 0 {
				continue
			}
			sent++
			if n > 0 && sent%n == 0 {
				refused++
				stopped[i] = true
			}
		}
	}
	for i := 0; i < len(data); i += 2 {
		if stopped[i] || stopped[i+1] {
			blocks++
		}
	}
	return sent, refused, blocks
}

// lieVerdict is what a cell's check reads.
type lieVerdict struct {
	out  *results.Conformance
	liar *storagetest.Liar
	lies storagetest.Lies
	w    written
}

// lieCell is one lie and the verdict conformance must give on it: check returns what
// differs, "" when the cell holds.
type lieCell struct {
	name  string
	lies  func(w written) storagetest.Lies
	check func(v lieVerdict) string
}

// counts compares the outcome's figures with the wanted ones.
func counts(out *results.Conformance, passed, failed int, kinds map[string]int) string {
	msg := ""
	if out.Passed != passed || out.Failed != failed || out.NotApplicable != 0 || len(out.NotApplicableReasons) != 0 {
		msg += fmt.Sprintf("passed %d, failed %d, not applicable %d %v: want %d, %d, 0; ", out.Passed, out.Failed, out.NotApplicable, out.NotApplicableReasons, passed, failed)
	}
	if kinds == nil {
		kinds = map[string]int{}
	}
	if diff := cmp.Diff(kinds, out.Kinds); diff != "" {
		msg += fmt.Sprintf("failures by kind (-want +got):\n%s", diff)
	}
	return msg
}

func wantCount(what string, want, got int64) string {
	if want != got {
		return fmt.Sprintf("%s: want %d, got %d; ", what, want, got)
	}
	return ""
}

// refusedRequests is how many write requests the liar refused.
func refusedRequests(l *storagetest.Liar) int {
	n := 0
	for _, t := range l.Told() {
		if t.Series == "" {
			n++
		}
	}
	return n
}

// failedLines are the lines of the failed evals of one kind.
func failedLines(out *results.Conformance, kind string) []int {
	var lines []int
	for _, f := range out.Failures {
		if f.Kind == kind {
			lines = append(lines, f.Line)
		}
	}
	return lines
}

// everyFailure returns what differs when a failure of out does not hold ok.
func everyFailure(out *results.Conformance, what string, ok func(f results.ConformanceFailure) bool) string {
	for _, f := range out.Failures {
		if !ok(f) {
			return fmt.Sprintf("%s:%d %s (%s, got %s): %s; ", f.File, f.Line, f.Expr, f.Kind, f.Got, what)
		}
	}
	return ""
}

var tenant = labels.Label{Name: "tenant_id", Value: "default-tenant"}

var lieCells = []lieCell{
	{
		// An honest liar: the subset passes whole, and the liar records nothing.
		name: "none",
		lies: func(written) storagetest.Lies { return storagetest.Lies{} },
		check: func(v lieVerdict) string {
			return counts(v.out, 213, 0, nil) + wantCount("liar's record", 0, v.liar.Total()) +
				wantCount("droppedSamples", 0, int64(v.out.DroppedSamples))
		},
	},
	{
		// Thanos receive's tenant_id on every series: found once, taken off every answer,
		// the 98 answers that held it counted as passed with it. The one failure is real:
		// `http_requests_total AND IGNORING (group, instance, job) vector(1)` (line 243)
		// matches nothing once tenant_id is in the left side's labels, a wrong answer.
		name: "addLabel",
		lies: func(written) storagetest.Lies { return storagetest.Lies{Lie: storagetest.LieAddLabel, Label: tenant} },
		check: func(v lieVerdict) string {
			msg := counts(v.out, 212, 1, map[string]int{results.KindWrongAnswer: 1}) +
				wantCount("liar's record: every sample written", v.w.floats+v.w.nans+v.w.hists, v.liar.Total()) +
				wantCount("passedWithAddedLabels", 98, int64(v.out.PassedWithAddedLabels)) +
				wantCount("droppedSamples", 0, int64(v.out.DroppedSamples))
			if diff := cmp.Diff(map[string]string{tenant.Name: tenant.Value}, v.out.AddedLabels); diff != "" {
				msg += fmt.Sprintf("added labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int{243}, failedLines(v.out, results.KindWrongAnswer)); diff != "" {
				msg += fmt.Sprintf("wrong answers (-want +got):\n%s", diff)
			}
			return msg
		},
	},
	{
		// job and instance stored as service_name and service_instance_id: not labels
		// added (no answer is compared without them), nor data lost (every sample is
		// answered, under other labels): the evals whose answer holds job or instance, or
		// selects or groups by them, fail as wrong answers (84); line 214's division on
		// (instance, job) finds many series on each side and the engine answers an error
		// (rejected, the storage's own answer). The rest (128) pass.
		name: "renameJobInstance",
		lies: func(written) storagetest.Lies { return storagetest.Lies{Lie: storagetest.LieRenameJobInstance} },
		check: func(v lieVerdict) string {
			msg := counts(v.out, 128, 85, map[string]int{results.KindWrongAnswer: 84, results.KindRejected: 1}) +
				wantCount("liar's record: the samples of series with job or instance", v.w.jobOrInst, v.liar.Total()) +
				wantCount("passedWithAddedLabels", 0, int64(v.out.PassedWithAddedLabels)) +
				wantCount("droppedSamples", 0, int64(v.out.DroppedSamples)) +
				everyFailure(v.out, "a failure that does not read job or instance", func(f results.ConformanceFailure) bool {
					return strings.Contains(f.Expr+f.Expected, "job") || strings.Contains(f.Expr+f.Expected, "instance")
				})
			if v.out.AddedLabels != nil {
				msg += fmt.Sprintf("added labels %v, want none; ", v.out.AddedLabels)
			}
			if diff := cmp.Diff([]int{214}, failedLines(v.out, results.KindRejected)); diff != "" {
				msg += fmt.Sprintf("rejected (-want +got):\n%s", diff)
			}
			return msg
		},
	},
	{
		// Native histograms acked and dropped (all 28 written): the last one never shows in
		// the 10 s it is waited for, and the 69 evals that read them and are answered wrong
		// fail as "data dropped after ack", in the pass rate; the float rate stays whole,
		// and no float is counted lost.
		name: "dropHistograms",
		lies: func(written) storagetest.Lies { return storagetest.Lies{Lie: storagetest.LieDropHistograms} },
		check: func(v lieVerdict) string {
			msg := counts(v.out, 144, 69, map[string]int{results.KindDataDropped: 69}) +
				wantCount("liar's record: every native histogram written", v.w.hists, v.liar.Total()) +
				wantCount("droppedSamples", 0, int64(v.out.DroppedSamples))
			want := []results.ConformanceCount{
				{Name: results.FeatureFloats, Passed: 141},
				{Name: results.FeatureNative, Passed: 3, Failed: 69},
				{Name: results.FeatureExperimental},
			}
			if diff := cmp.Diff(want, v.out.Features); diff != "" {
				msg += fmt.Sprintf("per feature (-want +got):\n%s", diff)
			}
			return msg
		},
	},
	{
		// 5 % of the float samples acked and dropped (9 at lieNow): the read-back finds
		// exactly the liar's count missing, and the 3 evals answered wrong for it fail as
		// "data dropped after ack", not as wrong answers.
		name: "dropSamples",
		lies: func(written) storagetest.Lies { return storagetest.Lies{Lie: storagetest.LieDropSamples, Share: 0.05} },
		check: func(v lieVerdict) string {
			return counts(v.out, 210, 3, map[string]int{results.KindDataDropped: 3}) +
				wantCount("droppedSamples (the liar's count)", v.liar.Total(), int64(v.out.DroppedSamples)) +
				wantCount("liar's record", 9, v.liar.Total())
		},
	},
	{
		// 10 % of the series left out of every answer: the stored ones the liar hides
		// (their 9 samples with a number) are read back as not answered, and the 12 evals
		// over them fail as "data dropped after ack". The liar hides an answer's series by
		// its labels, computed ones too: {} is among them (vector(1) through it answers no
		// series), so the 25 evals whose answer is one series without labels fail as wrong
		// answers, no series answered, as a storage that computed it and left it out.
		name: "partial",
		lies: func(written) storagetest.Lies { return storagetest.Lies{Lie: storagetest.LiePartial, Share: 0.1} },
		check: func(v lieVerdict) string {
			msg := counts(v.out, 176, 37, map[string]int{results.KindDataDropped: 12, results.KindWrongAnswer: 25}) +
				wantCount("droppedSamples (the liar's count)", v.liar.Total(), int64(v.out.DroppedSamples)) +
				wantCount("liar's record", 9, v.liar.Total()) +
				everyFailure(v.out, "a wrong answer that is not a series left out", func(f results.ConformanceFailure) bool {
					return f.Kind != results.KindWrongAnswer || strings.HasSuffix(f.Got, "no series")
				})
			if n := answeredSeries(v, "vector(1)"); n != 0 {
				msg += fmt.Sprintf("vector(1) through the liar answers %d series: want {} hidden; ", n)
			}
			return msg
		},
	},
	refuseRejected(http.StatusBadRequest),
	refuseRejected(http.StatusInternalServerError),
	refuseRetried(http.StatusServiceUnavailable),
	refuseRetried(http.StatusTooManyRequests),
	{
		// 50 % of the float samples one ulp up: every one within the runner's tolerance
		// (1e-6 relative), so wrong answers only where PromQL itself is exact: the
		// comparisons (==, !=, <, >=, as filters and with bool) and a remainder near 0
		// (8+ulp % 2 is 1.8e-15, not 0). No data is lost.
		name: "ulp",
		lies: func(written) storagetest.Lies { return storagetest.Lies{Lie: storagetest.LieULP, Share: 0.5} },
		check: func(v lieVerdict) string {
			msg := counts(v.out, 203, 10, map[string]int{results.KindWrongAnswer: 10}) +
				wantCount("liar's record", 119, v.liar.Total()) +
				wantCount("droppedSamples", 0, int64(v.out.DroppedSamples)) +
				everyFailure(v.out, "not an exact comparison or remainder", func(f results.ConformanceFailure) bool {
					return patExact.MatchString(f.Expr)
				})
			if diff := cmp.Diff([]int{292, 470, 552, 556, 580, 584, 628, 632, 652, 656}, failedLines(v.out, results.KindWrongAnswer)); diff != "" {
				msg += fmt.Sprintf("wrong answers (-want +got):\n%s", diff)
			}
			return msg
		},
	},
	{
		// Every write acknowledged at once and handed to the storage 3 s later, in order (a
		// storage that buffers what it acks): conformance waits until the last sample
		// written shows, and the whole subset passes; asked at once, the evals would read
		// nothing.
		name: "delay",
		lies: func(written) storagetest.Lies {
			return storagetest.Lies{Lie: storagetest.LieDelay, Delay: 3 * time.Second}
		},
		check: func(v lieVerdict) string {
			held := int64(len(v.liar.Told()))
			if held == 0 {
				return "no write held: the liar told no lie"
			}
			return counts(v.out, 213, 0, nil) + wantCount("droppedSamples", 0, int64(v.out.DroppedSamples)) +
				wantCount("write requests held", int64(v.w.requests), held)
		},
	},
}

// patExact matches the PromQL that is exact where the runner is not: a comparison or a
// remainder.
var patExact = regexp.MustCompile(`==|!=|<|>|%`)

// refuseRejected is the cell of half the write requests refused with status, 400 or 500 (the
// storage's answer to the data, as Prometheus 2.42 answers 500 to an invalid native
// histogram): not retried, as it would be refused again; each refused request's block kind
// is not sent further, and its block is refused (10 requests of 8 blocks at lieNow), its
// evals failed as "data rejected" (196: all of a block whose floats were refused, those over
// native histograms answered wrong without them where only those were).
func refuseRejected(status int) lieCell {
	return lieCell{
		name: fmt.Sprintf("refuse%d", status),
		lies: func(written) storagetest.Lies {
			return storagetest.Lies{Lie: storagetest.LieRefuse, Share: 0.5, Status: status}
		},
		check: func(v lieVerdict) string {
			_, refused, blocks := refusals(v.w.data, 2)
			msg := counts(v.out, 17, 196, map[string]int{results.KindDataRejected: 196}) +
				wantCount("requests refused, the liar's count", int64(refused), int64(refusedRequests(v.liar))) +
				wantCount("rejected blocks: those with a request refused", int64(blocks), int64(len(v.out.RejectedBlocks)))
			if v.out.WriteRetries != nil {
				msg += fmt.Sprintf("write retries %v: a %d is not retried; ", v.out.WriteRetries, status)
			}
			for _, b := range v.out.RejectedBlocks {
				if !strings.Contains(b.Answer, fmt.Sprintf("remote write answered %d: refused by the liar", status)) {
					msg += fmt.Sprintf("rejected block %+v: want the answer quoted; ", b)
				}
			}
			return msg
		},
	}
}

// refuseRetried is the cell of half the write requests refused with status, 503 or 429
// (Retry-After: 0): each refused request is sent again, as a run does, and taken; the
// retries are counted by status (every second of the 25 requests and their 24 retries is
// refused), and the subset passes whole.
func refuseRetried(status int) lieCell {
	return lieCell{
		name: fmt.Sprintf("refuse%d", status),
		lies: func(written) storagetest.Lies {
			return storagetest.Lies{Lie: storagetest.LieRefuse, Share: 0.5, Status: status}
		},
		check: func(v lieVerdict) string {
			refused := refusedRequests(v.liar)
			msg := counts(v.out, 213, 0, nil) +
				wantCount("requests refused", int64(v.w.requests-1), int64(refused))
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

// answeredSeries is how many series the liar answers to expr, -1 on an error.
func answeredSeries(v lieVerdict, expr string) int {
	u := v.liar.URL + "/api/v1/query?" + url.Values{"query": {expr}, "time": {strconv.FormatInt(lieNow.Unix(), 10)}}.Encode()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		return -1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var a struct {
		Data struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&a) != nil {
		return -1
	}
	return len(a.Data.Result)
}

// TestConformanceLies runs every cell of lieCells, in parallel: operators.test against a
// receiver behind a liar, with a front that records when the writes ended.
func TestConformanceLies(t *testing.T) {
	s := builtinFiles(t, "operators.test") // before any receiver parses a query
	w := countWritten(t, s, lieNow)
	for _, c := range lieCells {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lieCellRun(t, s, w, c)
		})
	}
}

func lieCellRun(t *testing.T, s *Suite, w written, c lieCell) {
	lies := c.lies(w)
	liar, err := storagetest.StartLiar(startReceiver(t).URL, lies)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := liar.Close(); err != nil {
			t.Error(err)
		}
	})
	st := config.Storage{WriteURL: liar.URL + storagetest.WritePath, ReadURL: liar.URL + "/"}
	out, err := Run(t.Context(), s, "liar", st, lieNow, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	v := lieVerdict{out: out, liar: liar, lies: lies, w: w}
	if msg := c.check(v); msg != "" {
		t.Errorf("%s\n(liar's total %d, kinds %v, dropped %d, added labels %v, retries %v)", msg, liar.Total(), out.Kinds, out.DroppedSamples, out.AddedLabels, out.WriteRetries)
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
	liar, err := storagetest.StartLiar(startReceiver(t).URL, storagetest.Lies{Lie: storagetest.LieRenameJobInstance})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = liar.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	st := config.Storage{WriteURL: liar.URL + storagetest.WritePath, ReadURL: liar.URL + "/"}
	out, err := Run(ctx, &Suite{Files: []*File{f}}, "renamer", st, time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if out.Passed != 1 || out.Failed != 1 || out.Kinds[results.KindWrongAnswer] != 1 || liar.Total() != 3 {
		t.Errorf("passed %d, failed %d %v, liar's record %d: want count(a) passed, a a wrong answer, 3 samples renamed", out.Passed, out.Failed, out.Kinds, liar.Total())
	}
}
