package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// conformanceFixture is tsbench conformance's results for two storages: one tested, one not.
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
				Functions:            []results.ConformanceCount{{Name: "rate()", Passed: 1, Failed: 1}, {Name: "sum()", Passed: 2}},
				Kinds:                map[string]int{results.KindWrongAnswer: 1, results.KindDataRejected: 1},
				NotApplicableReasons: map[string]int{"depends on absolute time": 1},
				Failures: []results.ConformanceFailure{
					{File: "a.test", Line: 7, Expr: `rate(x[5m])`, Kind: results.KindWrongAnswer, Expected: "{} 1", Got: "{} 2 <b>"},
					{File: "b.test", Line: 3, Expr: `sum(y)`, Kind: results.KindDataRejected, Expected: "the block's samples stored", Got: "remote write answered 400: out of bounds"},
				},
				RejectedBlocks: []results.ConformanceBlock{{File: "b.test", Line: 3, Answer: "remote write answered 400: out of bounds"}},
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

// The report has the PromQL section alone: the table, each file's failures expandable (their
// text escaped), the features per file, and no empty charts of a load that did not run.
func TestConformanceHTML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, conformanceFixture()); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		"<h1>tsbench conformance: 2 storages</h1>",
		"<td>prom</td><td>3</td><td>2</td><td>1</td><td>60.0%</td><td>2.0</td>",
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
