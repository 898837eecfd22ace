package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// better says which way a row's values are better, to mark the best storage.
type better int

const (
	noBest better = iota
	lower
	higher
)

// row is one line of the side-by-side table: a label and one cell per storage.
type row struct {
	label  string
	cells  []string
	values []*float64 // for marking the best; nil: not comparable
	best   better
}

// section is a titled group of rows.
type section struct {
	title string
	rows  []row
}

// table builds the side-by-side table shared by the summary and report.html.
func table(r *Results) []section {
	n := len(r.Storages)
	mk := func(label string, best better, f func(s *Storage) (string, *float64)) row {
		rw := row{label: label, best: best, cells: make([]string, n), values: make([]*float64, n)}
		for i := range r.Storages {
			rw.cells[i], rw.values[i] = f(&r.Storages[i])
		}
		return rw
	}
	count := func(label string, best better, get func(s *Storage) (int64, bool)) row {
		return mk(label, best, func(s *Storage) (string, *float64) {
			v, ok := get(s)
			if !ok {
				return "?", nil
			}
			return fmt.Sprintf("%d", v), new(float64(v))
		})
	}
	num := func(label, format string, best better, get func(s *Storage) *float64) row {
		return mk(label, best, func(s *Storage) (string, *float64) {
			v := get(s)
			if v == nil {
				return "?", nil
			}
			return fmt.Sprintf(format, *v), v
		})
	}
	w := func(f func(*Write) int64) func(*Storage) (int64, bool) {
		return func(s *Storage) (int64, bool) {
			if s.Write == nil {
				return 0, false
			}
			return f(s.Write), true
		}
	}
	wf := func(f func(*Write) float64) func(*Storage) *float64 {
		return func(s *Storage) *float64 {
			if s.Write == nil {
				return nil
			}
			return new(f(s.Write))
		}
	}
	fig := func(name string) func(*Storage) *float64 { return Figures()[name] }

	write := section{title: "ingestion", rows: []row{
		num("target samples/s", "%.1f", noBest, wf(func(w *Write) float64 { return w.TargetSamplesPerSecond })),
		num("achieved samples/s", "%.1f", higher, wf(func(w *Write) float64 { return w.AchievedSamplesPerSecond })),
		num("max lag (s)", "%.3f", lower, wf(func(w *Write) float64 { return w.MaxLagSeconds })),
		count("generated", noBest, w(func(w *Write) int64 { return w.GeneratedSamples })),
		count("acked", higher, w(func(w *Write) int64 { return w.AckedSamples })),
		count("dropped", lower, w(func(w *Write) int64 { return w.Dropped() })),
	}}
	for _, reason := range dropReasons(r) {
		write.rows = append(write.rows, count("  dropped "+reason, lower, w(func(w *Write) int64 { return w.DroppedSamples[reason] })))
	}
	write.rows = append(write.rows,
		count("pending", lower, w(func(w *Write) int64 { return w.PendingSamples })),
		count("retries", lower, w(func(w *Write) int64 { return w.Retries })))

	query := section{title: "queries", rows: []row{
		count("executed", noBest, func(s *Storage) (int64, bool) {
			if s.Query == nil {
				return 0, false
			}
			return s.Query.Executed, true
		}),
		num("errors", "%.0f", lower, fig("query.errors")),
		num("missed", "%.0f", lower, fig("query.missed")),
		num("latency p50 (s)", "%.3f", lower, fig("query.p50")),
		num("latency p99 (s)", "%.3f", lower, fig("query.p99")),
		num("latency max (s)", "%.3f", lower, fig("query.max")),
	}}

	mib := func(name string) func(*Storage) *float64 {
		return func(s *Storage) *float64 {
			if v := fig(name)(s); v != nil {
				return new(*v / (1 << 20))
			}
			return nil
		}
	}
	resources := section{title: "resources", rows: []row{
		num("cpu cores mean", "%.3f", lower, fig("resources.cpuCoresMean")),
		num("cpu cores max", "%.3f", lower, fig("resources.cpuCoresMax")),
		num("rss mean (MiB)", "%.1f", lower, mib("resources.rssBytesMean")),
		num("rss max (MiB)", "%.1f", lower, mib("resources.rssBytesMax")),
		num("disk at end (MiB)", "%.2f", lower, mib("resources.diskBytesEnd")),
		num("bytes/sample (live)", "%.3f", lower, fig("resources.bytesPerSample")),
		num("bytes/sample (snapshot)", "%.3f", lower, fig("resources.snapshotBytesPerSample")),
	}}

	verify := section{title: "read-back", rows: []row{
		mk("verdict", noBest, func(s *Storage) (string, *float64) {
			if s.Verify == nil {
				return "?", nil
			}
			if s.Verify.Exact() {
				return "exact", nil
			}
			return "differs", nil
		}),
		num("checked samples", "%.0f", noBest, fig("verify.checkedSamples")),
		num("missing", "%.0f", lower, fig("verify.missingSamples")),
		num("duplicate", "%.0f", lower, fig("verify.duplicateSamples")),
		num("unexpected", "%.0f", lower, fig("verify.unexpectedSamples")),
		num("changed values", "%.0f", lower, fig("verify.changedValues")),
		num("max relative error", "%.3g", lower, fig("verify.maxRelativeError")),
		num("NaN altered", "%.0f", lower, fig("verify.nanAltered")),
		num("staleness ignored", "%.0f", lower, fig("verify.stalenessIgnored")),
		num("shifted timestamps", "%.0f", lower, fig("verify.shiftedTimestamps")),
		mk("probes differing", lower, func(s *Storage) (string, *float64) {
			if s.Verify == nil {
				return "?", nil
			}
			d := 0
			for _, p := range s.Verify.Probes {
				if !p.Same {
					d++
				}
			}
			return fmt.Sprintf("%d of %d", d, len(s.Verify.Probes)), new(float64(d))
		}),
	}}
	var out []section
	for _, sec := range []section{write, query, resources, verify} {
		if sec.hasData() {
			out = append(out, sec)
		}
	}
	return out
}

func (s section) hasData() bool {
	for _, r := range s.rows {
		for _, c := range r.cells {
			if c != "?" {
				return true
			}
		}
	}
	return false
}

func dropReasons(r *Results) []string {
	seen := map[string]bool{}
	var reasons []string
	for _, s := range r.Storages {
		if s.Write == nil {
			continue
		}
		for reason := range s.Write.DroppedSamples {
			if !seen[reason] {
				seen[reason] = true
				reasons = append(reasons, reason)
			}
		}
	}
	sort.Strings(reasons)
	return reasons
}

// bestIndex is the index of the best value of a row, or -1 when there is no single best.
func (rw row) bestIndex() int {
	if rw.best == noBest {
		return -1
	}
	best, idx, known := 0.0, -1, 0
	for i, v := range rw.values {
		if v == nil || math.IsNaN(*v) {
			continue
		}
		known++
		switch {
		case idx == -1, rw.best == lower && *v < best, rw.best == higher && *v > best:
			best, idx = *v, i
		case *v == best:
			idx = -2 // a tie: no single best
		}
	}
	if known < 2 || idx < 0 {
		return -1
	}
	return idx
}

// WriteSummary writes the end-of-run summary: the side-by-side table with the best value per
// row marked "*", the slowest queries, tsbench's own usage and the thresholds.
func WriteSummary(w io.Writer, r *Results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tsbench %s → %s, %d targets × %d series, %d series created by churn, %d stale markers\n\n",
		r.StartTime.UTC().Format("2006-01-02 15:04:05Z"), r.EndTime.UTC().Format("15:04:05Z"),
		r.Workload.Targets, r.Workload.SeriesPerTarget, r.Workload.SeriesCreated, r.Workload.StaleMarkers)
	writeTable(&b, r)
	b.WriteString("* best of the storages\n")
	writeSlowest(&b, r)
	writeVerdicts(&b, r)
	if g := r.Generator; g != nil {
		fmt.Fprintf(&b, "\ntsbench itself: cpu %s cores mean, %s max; rss %s MiB max\n",
			fmtPtr("%.3f", g.CPUCoresMean, 1), fmtPtr("%.3f", g.CPUCoresMax, 1), fmtPtr("%.1f", g.RSSBytesMax, 1<<20))
	}
	if len(r.Thresholds) > 0 {
		b.WriteString("\nthresholds\n")
		for _, t := range r.Thresholds {
			mark, detail := "✓", ""
			if !t.OK {
				mark = "✗"
			}
			if t.Value != nil {
				detail = fmt.Sprintf(" (is %g)", *t.Value)
			} else if t.Reason != "" {
				detail = " (" + t.Reason + ")"
			}
			fmt.Fprintf(&b, "  %s %-16s %s%s\n", mark, t.Storage, t.Check(), detail)
		}
	}
	for _, s := range r.Storages {
		for _, p := range s.Problems {
			fmt.Fprintf(&b, "\nproblem %s: %s\n", s.Name, p)
		}
	}
	for _, e := range r.AccountingErrors {
		fmt.Fprintf(&b, "\nACCOUNTING ERROR: %s\n", e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable lays the sections out: labels left-aligned, one right-aligned column per
// storage, the best cell of a row followed by "*".
func writeTable(b *strings.Builder, r *Results) {
	secs := table(r)
	labelW, cellW := 0, 8
	for _, s := range r.Storages {
		cellW = max(cellW, len(s.Name))
	}
	for _, sec := range secs {
		for _, rw := range sec.rows {
			labelW = max(labelW, len(rw.label))
			for _, c := range rw.cells {
				cellW = max(cellW, len(c))
			}
		}
	}
	fmt.Fprintf(b, "%-*s", labelW, "")
	for _, s := range r.Storages {
		fmt.Fprintf(b, "  %*s  ", cellW, s.Name)
	}
	b.WriteString("\n")
	for _, sec := range secs {
		b.WriteString(strings.ToUpper(sec.title) + "\n")
		for _, rw := range sec.rows {
			best := rw.bestIndex()
			var lb strings.Builder
			fmt.Fprintf(&lb, "%-*s", labelW, rw.label)
			for i, c := range rw.cells {
				mark := "  "
				if i == best {
					mark = " *"
				}
				fmt.Fprintf(&lb, "  %*s%s", cellW, c, mark)
			}
			b.WriteString(strings.TrimRight(lb.String(), " ") + "\n")
		}
	}
}

func fmtPtr(format string, v *float64, div float64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprintf(format, *v/div)
}

// writeSlowest lists each storage's three slowest queries by p99.
func writeSlowest(b *strings.Builder, r *Results) {
	header := false
	for _, s := range r.Storages {
		if s.Query == nil || len(s.Query.PerQuery) == 0 {
			continue
		}
		if !header {
			b.WriteString("\nslowest queries (p99, from the scheduled time)\n")
			header = true
		}
		qs := append([]QueryStat(nil), s.Query.PerQuery...)
		sort.SliceStable(qs, func(i, j int) bool { return qs[i].LatencySeconds.P99 > qs[j].LatencySeconds.P99 })
		for _, q := range qs[:min(3, len(qs))] {
			fmt.Fprintf(b, "  %-16s %8.3fs  %-11s %s (%d errors)\n", s.Name, q.LatencySeconds.P99, q.Kind, q.Name, sumCounts(q.Errors))
		}
	}
}

// writeVerdicts prints each storage's read-back verdict in one line.
func writeVerdicts(b *strings.Builder, r *Results) {
	for _, s := range r.Storages {
		if s.Verify != nil {
			fmt.Fprintf(b, "read-back %s: %s\n", s.Name, s.Verify.Verdict())
		}
	}
}
