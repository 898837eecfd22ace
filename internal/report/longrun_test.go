package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// TestPartialAndGapsSaid: a checkpoint's results say they are partial, and a resumed run's
// gaps are named, in the summary, the HTML and a comparison (issue 19).
func TestPartialAndGapsSaid(t *testing.T) {
	r := fixture()
	at := r.StartTime.Add(5 * time.Minute)
	r.Partial = &results.Partial{At: at, Reason: "checkpoint"}
	r.Gaps = []results.Gap{{From: at, To: at.Add(90 * time.Second), Reason: "restarted after the last checkpoint"}}
	wantPartial := "PARTIAL results (checkpoint at " + at.UTC().Format("2006-01-02 15:04:05Z")
	wantGap := "gap " + at.UTC().Format("2006-01-02 15:04:05Z") + " → " + at.Add(90*time.Second).UTC().Format("15:04:05Z") + " (1m30s, restarted after the last checkpoint)"
	var sum, html bytes.Buffer
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	var cmp bytes.Buffer
	if err := Compare([]*results.Run{fixture()}, r).WriteText(&cmp); err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"summary": sum.String(), "html": html.String(), "compare": cmp.String()} {
		for _, want := range []string{wantPartial, wantGap} {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not say %q", what, want)
			}
		}
	}
	if !strings.Contains(cmp.String(), "new run: PARTIAL") {
		t.Errorf("compare does not say which run is partial:\n%s", cmp.String())
	}
}

// TestDriftAboveScrapeIntervalSaid: a drift under one scrape interval is stated; one of a
// scrape interval or more is marked as tsbench falling behind its own schedule.
func TestDriftAboveScrapeIntervalSaid(t *testing.T) {
	r := fixture()
	r.Workload.ScrapeIntervalSeconds = 10
	for i := range r.Storages {
		if r.Storages[i].Write != nil {
			r.Storages[i].Write.MaxScheduleDriftSeconds = 1.5
		}
	}
	if got := longRunSelf(r); !strings.Contains(got, "1.50s") || strings.Contains(got, "✗") {
		t.Errorf("drift 1.5 s of 10 s: %q, want it stated, unmarked", got)
	}
	r.Storages[0].Write.MaxScheduleDriftSeconds = 12
	if got := longRunSelf(r); !strings.Contains(got, "✗ a drift of a scrape interval or more") {
		t.Errorf("drift 12 s of 10 s: %q, want it marked", got)
	}
}

// TestChartsDrawPeaks: a CPU spike merged into a long run's timeline point still shows in the
// chart, which draws the point's largest observation.
func TestChartsDrawPeaks(t *testing.T) {
	r := fixture()
	res := r.Storages[0].Resources
	res.Timeline = []results.ResourcePoint{{Time: r.StartTime.Format(time.RFC3339Nano), CPUCores: new(1.5), N: 16, Max: &results.ResourceExtremes{CPUCores: new(9.0)}}}
	for _, c := range charts(r) {
		if c.Title != "CPU" {
			continue
		}
		if pts := c.Series[0].Points; len(pts) != 1 || pts[0].V != 9 {
			t.Errorf("CPU chart points %+v, want the spike of 9 cores", pts)
		}
		return
	}
	t.Fatal("no CPU chart")
}

// TestMemorySlopeOnlyWhenMeaningful (issue 29, item 4): a run too short for tsbench's memory
// slopes says why it states none, instead of a slope that reads as a leak.
func TestMemorySlopeOnlyWhenMeaningful(t *testing.T) {
	r := fixture()
	r.Generator = &results.Generator{SlopeAfterSeconds: 39, Reasons: map[string]string{
		"heapLiveBytesPerHour": "not meaningful: 2m31s of the run after the first 39s (the warm-up), less than the 30m0s a slope needs",
	}}
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "tsbench memory over time: no slope, not meaningful: 2m31s of the run after the first 39s"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "MiB/h") {
		t.Errorf("summary states a slope:\n%s", b.String())
	}
}
