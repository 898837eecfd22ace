package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// conformanceFixture is tsbench conformance's results for three storages: one tested, one
// that adds a label to every series and dropped the native histograms it acknowledged, one
// not tested.
func conformanceFixture() *results.Run {
	start := time.Date(2026, 11, 25, 5, 6, 57, 0, time.UTC)
	return &results.Run{
		SchemaVersion: results.SchemaVersion, StartTime: start, EndTime: start.Add(11 * time.Second),
		Storages: []results.Storage{
			{Name: "prom", Conformance: &results.Conformance{
				Passed: 3, Failed: 2, NotApplicable: 1, Seconds: 2.04, SpanHours: 196.6, Suite: "suite v1",
				Files: []results.ConformanceFile{
					{File: "a.test", Passed: 2, Failed: 1, Features: []string{"promql-delayed-name-removal"}},
					{File: "b.test", Passed: 1, Failed: 1, NotApplicable: 1, Features: []string{"promql-duration-expr"}},
				},
				Functions: []results.ConformanceCount{{Name: "rate()", Passed: 1, Failed: 1}, {Name: "sum()", Passed: 2}},
				Features: []results.ConformanceCount{
					{Name: results.FeatureFloats, Passed: 2, Failed: 1},
					{Name: results.FeatureNative, Passed: 1, Failed: 1, NotApplicable: 1},
					{Name: results.FeatureExperimental},
				},
				Kinds:                map[string]int{results.KindWrongAnswer: 1, results.KindDataRejected: 1},
				NotApplicableReasons: map[string]int{"depends on absolute time": 1},
				Failures: []results.ConformanceFailure{
					{File: "a.test", Line: 7, Expr: `rate(x[5m])`, Kind: results.KindWrongAnswer, Expected: "{} 1", Got: "{} 2 <b>"},
					{File: "b.test", Line: 3, Expr: `sum(y)`, Kind: results.KindDataRejected, Expected: "the block's samples stored", Got: "remote write answered 400: out of bounds"},
				},
				RejectedBlocks: []results.ConformanceBlock{{File: "b.test", Line: 3, Answer: "remote write answered 400: out of bounds"}},
			}},
			{Name: "thanos", Conformance: &results.Conformance{
				Passed: 4, Failed: 2, Seconds: 3.5, SpanHours: 196.6, Suite: "suite v1",
				Files: []results.ConformanceFile{
					{File: "a.test", Passed: 3, Failed: 0, Features: []string{"promql-delayed-name-removal"}},
					{File: "b.test", Passed: 1, Failed: 2, Features: []string{"promql-duration-expr"}},
				},
				Features: []results.ConformanceCount{
					{Name: results.FeatureFloats, Passed: 3},
					{Name: results.FeatureNative, Failed: 1},
					{Name: results.FeatureExperimental, Passed: 1, Failed: 1},
				},
				AddedLabels:           map[string]string{"tenant_id": "default-tenant"},
				PassedWithAddedLabels: 3,
				Kinds:                 map[string]int{results.KindDataDropped: 1, results.KindRejected: 1},
				Failures: []results.ConformanceFailure{
					{File: "b.test", Line: 3, Expr: `sum(h)`, Kind: results.KindDataDropped, Expected: "{} {{count:1}}", Got: "no series; the native histograms written were acknowledged and are not answered"},
					{File: "b.test", Line: 5, Expr: `x[1m+1m]`, Kind: results.KindRejected, Expected: "{} 1 (needs --enable-feature=promql-duration-expr)", Got: "parse error"},
				},
			}},
			{Name: "ro", Problems: []string{"conformance: storage ro: conformance needs both a writeURL and a readURL"}},
		},
	}
}

func TestConformanceSummaryGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSummary(&b, conformanceFixture()); err != nil {
		t.Fatal(err)
	}
	golden(t, "conformance.summary", b.Bytes())
}

// The report has the PromQL section alone: the table with the pass rate per feature, the
// labels a storage adds, each file's failures expandable (their text escaped), the features
// per file, and no empty charts of a load that did not run.
func TestConformanceHTML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, conformanceFixture()); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		"<h1>tsbench conformance: 3 storages</h1>",
		"<td>prom</td><td>3</td><td>2</td><td>1</td><td>60.0%</td><td>66.7%</td><td>50.0%</td><td>-</td><td>2.0</td>",
		"<td>thanos</td><td>4</td><td>2</td><td>0</td><td>66.7%</td><td>100.0%</td><td>0.0%</td><td>50.0%</td><td>3.5</td>",
		"<p>thanos adds tenant_id=&#34;default-tenant&#34; to every series: its answers are compared without it (3 evals passed so)</p>",
		"data dropped after ack 1",
		"<summary>1 failures</summary>",
		"<code>a.test:7</code> <code>rate(x[5m])</code> — wrong answer<br>expected: {} 1<br>got: {} 2 &lt;b&gt;",
		"promql-duration-expr",
		"<td>rate()</td><td class=\"text\">1/1/0</td><td class=\"text\">-</td>",
		"Problem with ro: conformance: storage ro",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html has no %q", want)
		}
	}
	if strings.Contains(html, "Over time") {
		t.Error("report.html of conformance alone has the load's charts")
	}
}

// A read-back that failed says so, with its reason, where the count of samples acknowledged
// and not answered would be (issue 37): "could not read" is never "nothing dropped".
func TestConformanceNotesReadBackFailed(t *testing.T) {
	r := conformanceFixture()
	c := r.Storages[0].Conformance
	c.ReadBackError = "2 of 9 reads of the data written failed, the first of the block at operators.test:18: http 503: busy"
	name := r.Storages[0].Name
	var sum strings.Builder
	writeConformance(&sum, r)
	var html bytes.Buffer
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	want := name + ": the float samples it acknowledged and does not answer are unknown: " + c.ReadBackError
	if !strings.Contains(sum.String(), want) {
		t.Errorf("summary has no %q:\n%s", want, sum.String())
	}
	if !strings.Contains(html.String(), "<p>"+want+"</p>") {
		t.Errorf("report.html has no %q", want)
	}
}

// Two added labels (Thanos receive with an external label and query without a replica label)
// read as them, not it.
func TestAddedLabelsTextTwo(t *testing.T) {
	c := &results.Conformance{AddedLabels: map[string]string{"tenant_id": "default-tenant", "receive_replica": "0"}, PassedWithAddedLabels: 981}
	want := `thanos adds receive_replica="0", tenant_id="default-tenant" to every series: its answers are compared without them (981 evals passed so)`
	if got := addedLabelsText("thanos", c); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// What the conformance run found the storage did to the data written is said beside its
// failures, in the summary and the report: the samples it acknowledged and does not answer,
// the writes it asked to be sent again.
func TestConformanceNotesDroppedAndRetried(t *testing.T) {
	r := conformanceFixture()
	c := r.Storages[0].Conformance
	c.DroppedSamples, c.WriteRetries = 9, map[string]int{"503": 20, "429": 4}
	name := r.Storages[0].Name
	var sum strings.Builder
	writeConformance(&sum, r)
	var html bytes.Buffer
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		name + " acknowledged 9 float samples it does not answer (read back by metric name and time): the evals that read them failed as data dropped after ack",
		name + " asked for 24 writes to be sent again (by status: 429 4, 503 20): each was retried, for at most 30 s",
	} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary has no %q:\n%s", want, sum.String())
		}
		if !strings.Contains(html.String(), "<p>"+want+"</p>") {
			t.Errorf("report.html has no %q", want)
		}
	}
}
