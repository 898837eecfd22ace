package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
)

// withRounds is the fixture run three times, victoriametrics' CPU a little different in each.
func withRounds() *results.Run {
	r := fixture()
	for i, f := range []float64{1, 1.05, 0.95} {
		round := results.RoundOf(i+1, fixture())
		for j := range round.Storages {
			if res := round.Storages[j].Resources; j == 1 && res != nil && res.CPUCoresMean != nil {
				res.CPUCoresMean = new(*res.CPUCoresMean * f)
			}
		}
		r.Rounds = append(r.Rounds, round)
	}
	return r
}

// The summary with rounds: medians with their intervals, the legend naming the rounds and the
// level, "what this run says" with the ratio and its interval.
func TestSummaryWithRounds(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSummary(&b, withRounds()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"0.210 ±0%         0.080 ±12% *",
		"each figure is the median of 3 rounds, ± the 95 % interval",
		"cpu cores mean: victoriametrics, 0.381× prometheus [",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// report.html opens with a failed storage's status, says what the run says, and draws each
// headline figure round by round.
func TestHTMLStatusAndRounds(t *testing.T) {
	r := withRounds()
	r.Storages[1].Write.AckedSamples = 0
	r.Storages[1].Write.DroppedSamples = map[string]int64{"retry_timeout": r.Storages[1].Write.GeneratedSamples}
	r.SetStatuses()
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"victoriametrics: FAILED — acked 0 of 5400000 samples: 5400000 dropped retry_timeout",
		"<h2>What this run says</h2>",
		"<h2>Rounds</h2>",
		"<title>prometheus round 2: 0.210</title>",
		"a failed storage is ranked on nothing",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(out, `class="best"`) {
		for line := range strings.SplitSeq(out, "\n") {
			if strings.Contains(line, `class="best"`) && strings.Index(line, `class="best"`) > strings.LastIndex(line, "<td>") {
				t.Errorf("a failed storage's cell is marked best: %s", line)
			}
		}
	}
}

// A run written without a headline (merged, or from an older tsbench) is judged at the
// confidence its config asked for, as results.json keeps the config; the default without one.
func TestRerenderedRunKeepsItsConfidence(t *testing.T) {
	r := withRounds()
	r.Config = map[string]any{"confidence": 0.99}
	if got := Confidence(r); got != 0.99 {
		t.Errorf("Confidence = %g, want the config's 0.99", got)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "± the 99 % interval"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	r.Config = map[string]any{"targetsCount": 10.0}
	if got := Confidence(r); got != 0.95 {
		t.Errorf("Confidence without the key = %g, want 0.95", got)
	}
}
