package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// Headline judges the run's table (threshold.Judge): each row's medians over the rounds,
// their intervals, its best storage where the difference holds at confidence (family-wise),
// and every pair's ratio. tsbench run stores it in results.json.
func Headline(r *results.Run, confidence float64) *results.Headline {
	return judge(r, sections(r), confidence)
}

// judge makes a contest of every row that has a better direction.
func judge(r *results.Run, secs []section, confidence float64) *results.Headline {
	names := make([]string, len(r.Storages))
	for i, s := range r.Storages {
		names[i] = s.Name
	}
	var contests []threshold.Contest
	for _, sec := range secs {
		for _, rw := range sec.rows {
			if rw.best != noBest {
				contests = append(contests, rw.contest(r))
			}
		}
	}
	return threshold.Judge(names, contests, max(1, len(r.Rounds)), confidence)
}

// contest is the row's values per storage and round, for threshold.Judge.
func (rw row) contest(r *results.Run) threshold.Contest {
	n := len(r.Storages)
	c := threshold.Contest{
		Figure: rw.figure, Label: rw.label, Higher: rw.best == higher, Exact: threshold.ExactFigure(rw.figure),
		Values: make([][]float64, n), SE: make([]float64, n), Ranked: make([]bool, n), Printed: make([]string, n),
	}
	for i := range r.Storages {
		s := &r.Storages[i]
		c.Ranked[i] = s.Status != results.StatusFailed && (!rw.latency || s.RankedOnLatency())
		c.Values[i] = rw.roundValues(r, s.Name)
		c.SE[i] = math.NaN()
		if v := rw.get(s); v != nil {
			c.SE[i] = threshold.WithinRunSE(rw.figure, s, v)
		}
		c.Printed[i] = rw.cells[i]
		if len(r.Rounds) > 1 && rw.format != "" {
			c.Printed[i] = rw.medianText(c.Values[i])
		}
	}
	return c
}

// roundValues is the storage's value in each round (NaN where unknown): the rounds' when the
// run was repeated, else the run's own.
func (rw row) roundValues(r *results.Run, name string) []float64 {
	value := func(s *results.Storage) float64 {
		if s == nil {
			return math.NaN()
		}
		if v := rw.get(s); v != nil {
			return *v
		}
		return math.NaN()
	}
	if len(r.Rounds) < 2 {
		return []float64{value(r.Storage(name))}
	}
	out := make([]float64, len(r.Rounds))
	for i := range r.Rounds {
		out[i] = value(r.Rounds[i].Storage(name))
	}
	return out
}

// medianText is the median of the known values as the row prints it, "?" when none is.
func (rw row) medianText(xs []float64) string {
	var known []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			known = append(known, x)
		}
	}
	if len(known) == 0 {
		return "?"
	}
	return rw.text(threshold.Median(known))
}

// mark sets each judged row's best from h and, with rounds, prints each cell as the median
// with its interval's half-width in percent of it.
func mark(r *results.Run, secs []section, h *results.Headline) {
	byFigure := map[string]*results.HeadlineRow{}
	for i := range h.Rows {
		byFigure[h.Rows[i].Figure] = &h.Rows[i]
	}
	for si := range secs {
		for ri := range secs[si].rows {
			rw := &secs[si].rows[ri]
			hr := byFigure[rw.figure]
			if hr == nil || rw.best == noBest {
				continue
			}
			for i, v := range hr.Values {
				if v.Storage == hr.Best {
					rw.bestAt = i
				}
				if len(r.Rounds) > 1 && rw.format != "" && i < len(rw.cells) {
					rw.cells[i] = rw.intervalText(v)
				}
			}
		}
	}
}

// intervalText is "median ±h%", h the interval's larger distance from the median in percent
// of it; the median alone when the interval is unknown.
func (rw row) intervalText(v results.HeadlineValue) string {
	if v.Median == nil {
		return "?"
	}
	text := rw.text(*v.Median)
	if v.Low == nil || v.High == nil || *v.Median == 0 {
		return text
	}
	half := max(*v.High-*v.Median, *v.Median-*v.Low)
	return fmt.Sprintf("%s ±%.0f%%", text, 100*half/math.Abs(*v.Median))
}

// headlineLines are "what this run says": each row with a best, the best's ratio to the next
// storage with its interval, then how many rows show no difference beyond the noise.
func headlineLines(h *results.Headline) []string {
	var lines []string
	none := 0
	for _, row := range h.Rows {
		if row.Best == "" {
			if row.P != nil {
				none++
			}
			continue
		}
		lines = append(lines, strings.TrimSpace(row.Label)+": "+bestText(row))
	}
	if none > 0 {
		lines = append(lines, fmt.Sprintf("%d rows tested show no difference beyond the noise", none))
	}
	return lines
}

// bestText says how much better the best is than each other storage: "victoriametrics,
// 0.45× prometheus [0.40–0.51]", or where a ratio says nothing (a count of 0 against
// another), the medians: "prometheus 0, victoriametrics 1200".
func bestText(row results.HeadlineRow) string {
	for _, v := range row.Values {
		if v.Storage == row.Best && (v.Median == nil || *v.Median == 0) {
			var parts []string
			for _, v := range row.Values {
				if v.Median != nil {
					parts = append(parts, fmt.Sprintf("%s %.4g", v.Storage, *v.Median))
				}
			}
			return strings.Join(parts, ", ")
		}
	}
	var parts []string
	for _, q := range row.Ratios {
		a, b, ratio, low, high := q.A, q.B, q.Ratio, q.Low, q.High
		if b == row.Best {
			a, b = b, a
			ratio, low, high = inverse(q.Ratio), inverse(q.High), inverse(q.Low)
		}
		if a != row.Best || ratio == nil {
			continue
		}
		part := ratioText(*ratio) + "× " + b
		if low != nil && high != nil {
			part += " [" + ratioText(*low) + "–" + ratioText(*high) + "]"
		}
		parts = append(parts, part)
	}
	return row.Best + ", " + strings.Join(parts, ", ")
}

// ratioText is a ratio to three digits, or four decimals near 1, where three digits would
// read 1 for a difference that holds.
func ratioText(x float64) string {
	if math.Abs(x-1) < 0.01 {
		return fmt.Sprintf("%.4f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func inverse(v *float64) *float64 {
	if v == nil || *v == 0 {
		return nil
	}
	return new(1 / *v)
}

// headlineOf is the run's headline, judged now for results written before it had one.
func headlineOf(r *results.Run) *results.Headline {
	if r.Headline != nil {
		return r.Headline
	}
	return Headline(r, Confidence(r))
}

// Confidence is the confidence the run's config asked for (its `confidence` key, as
// results.json keeps the config), the default when it names none: what a merged or
// re-rendered run is judged at.
func Confidence(r *results.Run) float64 {
	if c, ok := r.Config.(map[string]any); ok {
		if v, ok := c["confidence"].(float64); ok && v > 0 && v < 1 {
			return v
		}
	}
	return threshold.DefaultConfidence
}

// Legend says what the table's "*" and "±" mean, at what level.
func Legend(r *results.Run) string {
	h := headlineOf(r)
	var b strings.Builder
	if h.Rounds > 1 {
		fmt.Fprintf(&b, "each figure is the median of %d rounds, ± the %.0f %% interval (Student's t over the rounds); ", h.Rounds, 100*h.Confidence)
	}
	fmt.Fprintf(&b, "* better than every other storage beyond the noise, at a family-wise %.0f %% over the %d rows tested (Bonferroni: an A/A run shows a * on some row in at most %.0f %% of runs); no * where no difference holds",
		100*h.Confidence, h.Judged, 100*(1-h.Confidence))
	if len(r.Failed()) > 0 {
		b.WriteString("; a failed storage is ranked on nothing")
	}
	return b.String()
}

// writeHeadline writes the legend and "what this run says".
func writeHeadline(b *strings.Builder, r *results.Run) {
	b.WriteString(Legend(r) + "\n")
	if note := BytesPerSampleSpan(r); note != "" {
		b.WriteString(note + "\n")
	}
	if lines := headlineLines(headlineOf(r)); len(lines) > 0 {
		b.WriteString("\nwhat this run says (best, its ratio to each other storage [interval])\n")
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
	}
	if len(r.NotFresh) > 0 {
		fmt.Fprintf(b, "\nnot fresh: %s held the earlier rounds' data (tsbench did not start them); each round wrote under its own round label\n",
			strings.Join(r.NotFresh, ", "))
	}
}

// saysLines are "what this run says" for report.html: the rows with a best, or that no row
// shows a difference beyond the noise.
func saysLines(r *results.Run) []string {
	if conformanceOnly(r) || len(r.Storages) < 2 {
		return nil
	}
	lines := headlineLines(headlineOf(r))
	if len(lines) == 0 {
		return []string{"no difference beyond the noise on any row"}
	}
	return lines
}

// StatusLines are one line per storage whose status is not ok, in words.
func StatusLines(r *results.Run) []string {
	var lines []string
	for i := range r.Storages {
		if l := r.Storages[i].StatusLine(); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// InterruptedLine says that the run was stopped before its end, "" when it was not.
func InterruptedLine(r *results.Run) string {
	if r.Interrupted == nil {
		return ""
	}
	round := ""
	if r.Interrupted.Round != "" {
		round = " in round " + r.Interrupted.Round + " (no later round was run)"
	}
	return fmt.Sprintf("INTERRUPTED at %s of %s%s: the figures cover the run until then", r.Interrupted.At, r.Interrupted.Of, round)
}

// BytesPerSampleSpan says what span of data the bytes-per-sample figures cover: they fall as
// a storage holds more time (compression and index amortise), so a short run reads high.
func BytesPerSampleSpan(r *results.Run) string {
	start, end := r.StartTime, r.EndTime
	if n := len(r.Rounds); n > 0 { // each round's storages hold that round's data
		start, end = r.Rounds[n-1].StartTime, r.Rounds[n-1].EndTime
	}
	if end.IsZero() || start.IsZero() {
		return ""
	}
	live := end.Sub(start).Round(time.Second)
	span := live.String() + " of data"
	if h := time.Duration(r.Workload.HistorySeconds * float64(time.Second)); h > 0 {
		span = fmt.Sprintf("%s of data (%s of history, %s live)", (h + live).String(), h, live)
	}
	return "bytes/sample covers " + span + ": it falls as a storage holds more time, so a short run reads high; compare storages over the same span (docs/results.md)"
}
