package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// The series section's figures (issue 22): held samples' accounts and read-back, the series
// charts, the events marked on every chart and each storage's figures around them.

// seriesSection is the side-by-side rows of late and out-of-order samples: sent, acked,
// refused (by reason), and what the read-back found stored. Empty without them.
func seriesSection(r *results.Run) section {
	sec := section{title: "late and out-of-order samples"}
	kinds := []struct {
		name  string
		write func(*results.Write) *results.WriteHeld
		read  func(*results.Verify) *results.VerifyHeld
	}{
		{"late", func(w *results.Write) *results.WriteHeld { return w.Late }, func(v *results.Verify) *results.VerifyHeld { return v.Late }},
		{"out of order", func(w *results.Write) *results.WriteHeld { return w.OutOfOrder }, func(v *results.Verify) *results.VerifyHeld { return v.OutOfOrder }},
	}
	for _, k := range kinds {
		held := func(s *results.Storage) *results.WriteHeld {
			if s.Write == nil {
				return nil
			}
			return k.write(s.Write)
		}
		count := func(label string, best better, get func(*results.WriteHeld) int64) row {
			return cells(r, label, "series."+label, best, func(s *results.Storage) (string, *float64) {
				h := held(s)
				if h == nil {
					return "?", nil
				}
				v := float64(get(h))
				return fmt.Sprintf("%d", get(h)), &v
			})
		}
		sec.rows = append(sec.rows,
			count(k.name+" sent", noBest, func(h *results.WriteHeld) int64 { return h.Sent }),
			count(k.name+" acked", higher, func(h *results.WriteHeld) int64 { return h.Acked }))
		sec.rows = append(sec.rows, keyRows(r, "  "+k.name+" refused ", "series."+k.name+".refused.", noBest, func(s *results.Storage) (map[string]int64, bool) {
			if h := held(s); h != nil {
				return h.Refused, true
			}
			return nil, false
		})...)
		sec.rows = append(sec.rows, cells(r, k.name+" read back", "series."+k.name+".readBack", noBest, func(s *results.Storage) (string, *float64) {
			if s.Verify == nil || k.read(s.Verify) == nil {
				return "?", nil
			}
			h := k.read(s.Verify)
			return fmt.Sprintf("%s (%d of %d)", h.Verdict(), h.Stored, h.Checked), nil
		}))
	}
	return sec
}

// EventLines says, per cardinality event of the run, how each storage's CPU, RSS and query
// p99 during it compare with the calm of the same length before it.
func EventLines(r *results.Run) []string {
	ws := r.Workload.Series
	if ws == nil {
		return nil
	}
	var out []string
	for i, e := range ws.Events {
		line := fmt.Sprintf("%s at +%s for %s:", e.Name, e.Start.Sub(r.StartTime).Round(time.Second), e.End.Sub(e.Start).Round(time.Second))
		var parts []string
		for _, s := range r.Storages {
			if s.Series == nil || i >= len(s.Series.Events) {
				continue
			}
			f := s.Series.Events[i]
			parts = append(parts, fmt.Sprintf("%s cpu %s → %s cores, rss %s → %s MiB, query p99 %s → %s s", s.Name,
				fmtPtr("%.3f", f.CPUCores.Before, 1), fmtPtr("%.3f", f.CPUCores.During, 1),
				fmtPtr("%.1f", f.RSSBytes.Before, 1<<20), fmtPtr("%.1f", f.RSSBytes.During, 1<<20),
				fmtPtr("%.3f", f.QueryP99.Before, 1), fmtPtr("%.3f", f.QueryP99.During, 1)))
		}
		out = append(out, line+" "+strings.Join(parts, "; "))
	}
	return out
}

// writeSeries writes the series section's lines of the summary: what the workload wrote and
// each event's figures (the calm before → during).
func writeSeries(b *strings.Builder, r *results.Run) {
	ws := r.Workload.Series
	if ws == nil {
		return
	}
	fmt.Fprintf(b, "\nseries: %d written in all, %d active at the end\n", ws.SeriesWritten, r.Workload.ActiveSeries)
	for _, l := range EventLines(r) {
		b.WriteString("  " + l + "\n")
	}
}

// seriesCharts are the active series and the series created over time: each storage's own
// count beside the workload's ("expected").
func seriesCharts(r *results.Run) []chart {
	ws := r.Workload.Series
	if ws == nil {
		return nil
	}
	active := chart{Title: "active series", Unit: "series", Start: r.StartTime}
	created := chart{Title: "series created", Unit: "series", Start: r.StartTime}
	var expA, expC []chartPoint
	for _, p := range ws.Timeline {
		expA = append(expA, chartPoint{p.Time, float64(p.Active)})
		expC = append(expC, chartPoint{p.Time, float64(p.Created)})
	}
	active.Series = append(active.Series, chartSeries{Name: "expected", Points: expA})
	created.Series = append(created.Series, chartSeries{Name: "expected", Points: expC})
	for _, s := range r.Storages {
		var a, c []chartPoint
		var first *float64 // the storage's count at its first observation: created since
		if s.Resources != nil {
			for _, p := range s.Resources.Timeline {
				t, err := time.Parse(time.RFC3339Nano, p.Time)
				if err != nil {
					continue
				}
				if p.ActiveSeries != nil {
					a = append(a, chartPoint{t, *p.ActiveSeries})
				}
				if p.SeriesCreated != nil {
					if first == nil {
						first = p.SeriesCreated
					}
					c = append(c, chartPoint{t, *p.SeriesCreated - *first})
				}
			}
		}
		active.Series = append(active.Series, chartSeries{Name: s.Name, Points: a})
		created.Series = append(created.Series, chartSeries{Name: s.Name, Points: c})
	}
	return []chart{active, created}
}

// markEvents shades each event's span of the plot, clipped to it, and names the event.
func (c chart) markEvents(b *strings.Builder, x func(time.Time) float64, top float64) {
	right := chartWidth - plotRight
	for _, e := range c.Events {
		x0, x1 := max(plotLeft, x(e.Start)), min(right, x(e.End))
		if x1 <= x0 {
			continue
		}
		fmt.Fprintf(b, `<rect class="event" data-event="%s" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#f5a623" fill-opacity="0.18"/>`,
			e.Name, x0, top, x1-x0, plotHeight)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" class="tick">%s</text>`, x0+2, top+10, e.Name)
	}
}
