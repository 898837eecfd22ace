package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// freshnessProbes names the canary's probes in the order shown, with how to read them.
var freshnessProbes = []struct {
	label string
	get   func(*results.Freshness) *results.FreshnessProbe
}{
	{"instant query", func(f *results.Freshness) *results.FreshnessProbe { return f.Instant }},
	{"range query, last 5m", func(f *results.Freshness) *results.FreshnessProbe { return f.Range }},
	{"/api/v1/series", func(f *results.Freshness) *results.FreshnessProbe { return f.Series }},
}

// FreshnessRows are the freshness table: a header row (the storages), one row per probe with
// p50 / p90 / p99 / max seconds from a write's ack to the first query that returns it (each
// after the last query that did not, the resolution the polls bought) and the samples never
// seen, the canary writes acked, and the polling's own load beside the workload's. None
// without a canary.
func FreshnessRows(r *results.Run) [][]string {
	var interval float64
	header := []string{"query"}
	for _, s := range r.Storages {
		if s.Freshness != nil {
			header = append(header, s.Name)
			interval = s.Freshness.IntervalSeconds
		}
	}
	if interval == 0 {
		return nil
	}
	rows := [][]string{header}
	for _, p := range freshnessProbes {
		row := []string{p.label}
		for _, s := range r.Storages {
			if s.Freshness != nil {
				row = append(row, freshnessCell(p.get(s.Freshness)))
			}
		}
		rows = append(rows, row)
	}
	writes, load := []string{"canary writes acked"}, []string{"polling load"}
	for _, s := range r.Storages {
		if f := s.Freshness; f != nil {
			writes = append(writes, fmt.Sprintf("%d of %d", f.Acked, f.Written))
			load = append(load, freshnessLoad(f))
		}
	}
	return append(rows, writes, load)
}

// freshnessLoad is the canary's queries per second and, where the workload's read load is
// known, its share of it.
func freshnessLoad(f *results.Freshness) string {
	if f.ReadLoadQueriesPerSecond <= 0 { // written before issue 29, or a workload that reads nothing
		return fmt.Sprintf("%.1f queries/s", f.QueriesPerSecond)
	}
	return fmt.Sprintf("%.2f queries/s, %.1f%% of the workload's %.1f", f.QueriesPerSecond, 100*f.QueriesPerSecond/f.ReadLoadQueriesPerSecond, f.ReadLoadQueriesPerSecond)
}

// freshnessCell is "p50 / p90 / p99 / max s", each "lower-upper" where the lower bounds are
// known, then what was not seen.
func freshnessCell(p *results.FreshnessProbe) string {
	if p == nil {
		return "?"
	}
	var parts []string
	if l, lo := p.Seconds, p.LowerBoundSeconds; l.P50 != nil && lo.P50 != nil {
		parts = append(parts, fmt.Sprintf("%.2f-%.2f / %.2f-%.2f / %.2f-%.2f / %.2f-%.2f s",
			*lo.P50, *l.P50, *lo.P90, *l.P90, *lo.P99, *l.P99, *lo.Max, *l.Max))
	} else if l.P50 != nil {
		parts = append(parts, fmt.Sprintf("%.2f / %.2f / %.2f / %.2f s", *l.P50, *l.P90, *l.P99, *l.Max))
	} else {
		parts = append(parts, "none seen")
	}
	if p.NeverVisible > 0 {
		parts = append(parts, fmt.Sprintf("%d never seen", p.NeverVisible))
	}
	if p.Abandoned > 0 {
		parts = append(parts, fmt.Sprintf("%d unwatched over a restart", p.Abandoned))
	}
	if n := sumErrors(p.Errors); n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d queries failed", n, p.Queries))
	}
	switch {
	case p.MergedPolls == 1:
		parts = append(parts, "1 poll merged into the next")
	case p.MergedPolls > 1:
		parts = append(parts, fmt.Sprintf("%d polls merged into the next", p.MergedPolls))
	}
	return strings.Join(parts, ", ")
}

func sumErrors(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// FreshnessTitle heads the freshness table, saying how to read it.
func FreshnessTitle(r *results.Run) string {
	for _, s := range r.Storages {
		f := s.Freshness
		if f != nil && len(f.PollSeconds) > 0 { // every storage has the same schedule
			polls := make([]string, len(f.PollSeconds))
			for i, p := range f.PollSeconds {
				polls[i] = strconv.FormatFloat(p, 'f', -1, 64)
			}
			when := strings.Join(polls, ", ") + " s after its ack"
			if placed(f) { // issue 37: the polls between the ends go where the probe's latest samples showed
				when = fmt.Sprintf("its first at %s, every later one at %s and %s s and %d times between, where its latest samples showed",
					when, polls[0], polls[len(polls)-1], len(polls)-2)
			}
			return fmt.Sprintf("freshness: seconds from a write's ack to the last query that did not return it - the first that did, p50 / p90 / p99 / max "+
				"(a canary sample every %s; each probe asks for each sample %d times on every storage, %s)",
				time.Duration(f.WriteIntervalSeconds*float64(time.Second)), len(f.PollSeconds), when)
		}
		if f != nil {
			return fmt.Sprintf("freshness: seconds from a write's ack to the first query that returns it, p50 / p90 / p99 / max (canary written every %s, looked for every %s)",
				time.Duration(f.WriteIntervalSeconds*float64(time.Second)), time.Duration(f.IntervalSeconds*float64(time.Second)))
		}
	}
	return ""
}

// placed says whether the canary placed each probe's later polls from its earlier samples
// (lastPollSeconds, issue 37), rather than asking for every sample at pollSeconds.
func placed(f *results.Freshness) bool {
	for _, p := range freshnessProbes {
		if pr := p.get(f); pr != nil && len(pr.LastPollSeconds) > 0 {
			return true
		}
	}
	return false
}

// writeFreshness prints the freshness table after a blank line.
func writeFreshness(b *strings.Builder, r *results.Run) {
	rows := FreshnessRows(r)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n" + FreshnessTitle(r) + "\n")
	writeGrid(b, rows, 1)
}

// freshnessCharts are the canary's figures over time, none without a canary: for each probe,
// the slowest sample of every interval (a merged point's largest, so a spike survives a long
// run's downsampling), and the samples never seen, all probes together.
func freshnessCharts(r *results.Run) []chart {
	if len(FreshnessRows(r)) == 0 {
		return nil
	}
	var out []chart
	for _, p := range freshnessProbes {
		c := chart{Title: "freshness, " + p.label + ": slowest per interval", Unit: "s", Start: r.StartTime}
		for _, s := range r.Storages {
			var pts []chartPoint
			if s.Freshness != nil && p.get(s.Freshness) != nil {
				for _, pt := range p.get(s.Freshness).Timeline {
					if t, err := time.Parse(time.RFC3339Nano, pt.Time); err == nil && pt.Max != nil {
						pts = append(pts, chartPoint{t, *pt.Max})
					}
				}
			}
			c.Series = append(c.Series, chartSeries{Name: s.Name, Points: pts})
		}
		out = append(out, c)
	}
	never := chart{Title: "freshness: samples never seen, all probes", Unit: "samples", Start: r.StartTime}
	for _, s := range r.Storages {
		never.Series = append(never.Series, chartSeries{Name: s.Name, Points: neverSeen(s.Freshness)})
	}
	return append(out, never)
}

// neverSeen adds up, per interval, the samples every probe gave up on; an interval in which
// some probe saw a sample and none gave up is a 0.
func neverSeen(f *results.Freshness) []chartPoint {
	if f == nil {
		return nil
	}
	sum := map[time.Time]float64{}
	for _, p := range freshnessProbes {
		if pr := p.get(f); pr != nil {
			for _, pt := range pr.Timeline {
				if t, err := time.Parse(time.RFC3339Nano, pt.Time); err == nil {
					sum[t] += float64(pt.NeverVisible)
				}
			}
		}
	}
	out := make([]chartPoint, 0, len(sum))
	for t, v := range sum {
		out = append(out, chartPoint{t, v})
	}
	slices.SortFunc(out, func(a, b chartPoint) int { return a.T.Compare(b.T) })
	return out
}
