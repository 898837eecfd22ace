package report

import (
	"bytes"
	"html"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// checksRun is the fixture with checks every 10 minutes for an hour: prometheus kept
// everything, victoriametrics lost 1230 samples found by the check at 12:40.
func checksRun() *results.Run {
	r := fixture()
	for i := range r.Storages {
		v := r.Storages[i].Verify
		v.Continuous = &results.Continuous{IntervalSeconds: 600}
		for k := 1; k <= 6; k++ {
			c := results.Check{At: r.StartTime.Add(time.Duration(k) * 10 * time.Minute), Checked: 12_000, Rechecked: 4_000, Reads: 9, Seconds: 0.4, Checks: 1}
			if i == 1 && k == 4 {
				c.Missing, c.LostAfterAck = 1230, 1230
				v.LostAfterAck, v.LostAfterAckAt = 1230, &c.At
			}
			v.Checks = results.AddCheck(v.Checks, c)
			c.AddTo(&v.Continuous.Total)
		}
	}
	return r
}

// TestChecksInSummaryHTMLAndThresholds: the summary and the page say each storage's checks
// in one line, the page plots them, and verify.lostAfterAck is a threshold's figure.
func TestChecksInSummaryHTMLAndThresholds(t *testing.T) {
	r := checksRun()
	lines := []string{
		"read-back during the run prometheus: 6 checks every 10m0s: 72000 samples, all returned as written (24000 read again)",
		"read-back during the run victoriametrics: 6 checks every 10m0s: 72000 samples: 1230 lost after ack (first missed by the check at 2026-11-22T12:40:00Z)",
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if !strings.Contains(b.String(), l+"\n") {
			t.Errorf("summary lacks %q:\n%s", l, b.String())
		}
	}
	b.Reset()
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{
		"prometheus during the run: 6 checks every 10m0s",
		`class="fail">victoriametrics during the run: 6 checks every 10m0s: 72000 samples: 1230 lost after ack`,
		`data-title="read-back checks: lost after ack"`, `data-title="read-back checks: samples not as written"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	var lost chart
	for _, c := range checkCharts(r) {
		if c.Title == "read-back checks: lost after ack" {
			lost = c
		}
	}
	if n := len(lost.Series); n != 2 || len(lost.Series[1].Points) != 6 || lost.Series[1].Points[3].V != 1230 || lost.Series[0].Points[3].V != 0 {
		t.Errorf("lost after ack chart: %+v", lost.Series)
	}

	ts, err := threshold.Parse([]string{"verify.lostAfterAck == 0"}, []string{"prometheus", "victoriametrics"})
	if err != nil {
		t.Fatal(err)
	}
	got := threshold.Evaluate(ts, r)
	want := []results.ThresholdResult{
		{Expr: "verify.lostAfterAck == 0", Storage: "prometheus", Figure: "verify.lostAfterAck", Value: new(float64(0)), OK: true},
		{Expr: "verify.lostAfterAck == 0", Storage: "victoriametrics", Figure: "verify.lostAfterAck", Value: new(float64(1230))},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Without checks nothing was read again: lost after ack is unknown, not 0.
	got = threshold.Evaluate(ts, fixture())
	if got[0].OK || got[0].Reason != "verify.lostAfterAck is unknown for prometheus" {
		t.Errorf("without checks: %+v", got[0])
	}
}

// TestCheckChartUnknown (issue 29, item 4): a check whose reads all failed checked nothing: the
// chart has no "not as written" figure for it (not 0), nor a "lost after ack" one for a
// check that read nothing again.
func TestCheckChartUnknown(t *testing.T) {
	r := checksRun()
	v := r.Storages[1].Verify
	v.Checks[2].Checked, v.Checks[2].Rechecked, v.Checks[2].ReadErrors, v.Checks[2].Unchecked = 0, 0, 9, 16_000
	for _, c := range checkCharts(r) {
		p := c.Series[1].Points[2]
		if !math.IsNaN(p.V) {
			t.Errorf("%s: %v for a check that read nothing, want no figure (NaN)", c.Title, p.V)
		}
		if q := c.Series[1].Points[1]; math.IsNaN(q.V) {
			t.Errorf("%s: no figure for a check that read its samples", c.Title)
		}
	}
}
