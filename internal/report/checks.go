package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// checkCharts plot the read-back checks made while the load ran (issue 19), one point per
// entry of verify.checks at its time: what each check found not as written, and what it
// found lost after the storage had returned it. A check that checked nothing (or read
// nothing again) has no point: its figure is unknown. None when no storage has checks.
func checkCharts(r *results.Run) []chart {
	if !hasChecks(r) {
		return nil
	}
	defs := []struct {
		title string
		get   func(c results.Check) float64
	}{
		{"read-back checks: samples not as written", func(c results.Check) float64 {
			if c.Checked == 0 { // every read failed, or none was made: unknown, not 0 (issue 29)
				return math.NaN()
			}
			return float64(c.Missing + c.Changed + c.Duplicate + c.Unexpected + c.NaNAltered)
		}},
		{"read-back checks: lost after ack", func(c results.Check) float64 {
			if c.Rechecked == 0 { // nothing read again: nothing could be found lost
				return math.NaN()
			}
			return float64(c.LostAfterAck)
		}},
	}
	var out []chart
	for _, d := range defs {
		c := chart{Title: d.title, Unit: "samples", Start: r.StartTime}
		for _, s := range r.Storages {
			var pts []chartPoint
			if s.Verify != nil {
				for _, ch := range s.Verify.Checks {
					pts = append(pts, chartPoint{ch.At, d.get(ch)})
				}
			}
			c.Series = append(c.Series, chartSeries{Name: s.Name, Points: pts})
		}
		out = append(out, c)
	}
	return out
}

func hasChecks(r *results.Run) bool {
	for _, s := range r.Storages {
		if s.Verify != nil && len(s.Verify.Checks) > 0 {
			return true
		}
	}
	return false
}

// checkVerdicts are the one-line outcomes of each storage's checks during the run.
func checkVerdicts(r *results.Run) []htmlVerdict {
	var out []htmlVerdict
	for _, s := range r.Storages {
		if v := s.Verify.ContinuousVerdict(); v != "" {
			out = append(out, htmlVerdict{Storage: s.Name, Text: v, Class: okOrFail(s.Verify.Continuous.Total.Clean() && s.Verify.LostAfterAck == 0)})
		}
	}
	return out
}

// writeChecks prints each storage's checks during the run in one line.
func writeChecks(b *strings.Builder, r *results.Run) {
	for _, v := range checkVerdicts(r) {
		fmt.Fprintf(b, "read-back during the run %s: %s\n", v.Storage, v.Text)
	}
}
