package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// TestCompareSeveralRunsGolden (issue 35): against three old runs the table's old column is
// each figure's median, a runs column says how many old runs it comes from (two for
// Prometheus' read-back, missing from one run), and the noise is their spread ("t, 3 runs");
// compare.html has the same column.
func TestCompareSeveralRunsGolden(t *testing.T) {
	var olds []*results.Run
	for i, f := range []float64{1, 1.05, 0.97} {
		r := loadFixture(t, "full", fixture)
		r.StartTime = r.StartTime.AddDate(0, 0, i-3)
		*r.Storages[0].Query.LatencySeconds.P99 *= f
		r.Storages[1].Write.AchievedSamplesPerSecond *= 2 - f
		if i == 1 {
			r.Storages[0].Verify = nil
		}
		olds = append(olds, r)
	}
	cur := loadFixture(t, "full", fixture)
	*cur.Storages[0].Query.LatencySeconds.P99 *= 1.3
	c := Compare(olds, cur)
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare-runs", b.Bytes())
	var h bytes.Buffer
	if err := c.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<th>old</th><th>runs</th><th>new</th>",
		`<tr class="flag"><td>prometheus</td><td>query.p99</td><td>0.12</td><td>3</td><td>0.156</td><td>&#43;30.0%</td>`,
		"<td>prometheus</td><td>verify.checkedSamples</td><td>10800</td><td>2</td>",
	} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
}

// TestWriteGateUnknown: a check on a figure unknown in the old runs says so and why; with ?ok
// it passes and its limit shows the ?ok; a baseline of several runs is called their median.
func TestWriteGateUnknown(t *testing.T) {
	old := func(rate float64, checked int64) *results.Run {
		return &results.Run{Storages: []results.Storage{{
			Name:   "vm",
			Write:  &results.Write{DroppedSamples: map[string]int64{}, AchievedSamplesPerSecond: rate},
			Verify: &results.Verify{CheckedSamples: checked},
		}}}
	}
	rules, err := threshold.ParseCompareRules("-fail-on", []string{"verify.missingSamples>+0", "missingSamples>+0~noise?ok", "achievedSamplesPerSecond<-5%"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteGate(&b, threshold.Gate([]*results.Run{old(100, 0), old(104, 0)}, old(101, 10), rules)); err != nil {
		t.Fatal(err)
	}
	want := `
compare thresholds:
  ✗ vm: verify.missingSamples > +0: ? → 0 (—): unknown in the old runs: the read-back checked no samples
  ✓ vm: verify.missingSamples > +0~noise?ok: ? → 0 (—): unknown in the old runs: the read-back checked no samples; passed by ?ok
  ✓ vm: write.achievedSamplesPerSecond < -5%: 102 (median of 2 runs) → 101 (-1.0%): within the limit; noise of the old runs ±44.0156 (t, 2 runs)
1 of 3 checks failed
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
