package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
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
	label string
	// figure names the row in the headline (threshold's figure name where it has one).
	figure string
	cells  []string
	// get is one storage's value, of the last round or any other, in the figure's unit; the
	// cell prints it divided by scale in format ("" for rows whose cells are words).
	get    func(*results.Storage) *float64
	format string
	scale  float64
	best   better
	// latency rows rank only the storages whose queries mostly succeeded.
	latency bool
	// bestAt is the best storage's index, -1 for none: set from the headline by table.
	bestAt int
}

// section is a titled group of rows.
type section struct {
	title string
	rows  []row
}

// table builds the side-by-side table shared by the summary and report.html: its sections
// in this order, each only when some storage has a figure in it, each row's best marked from
// the run's headline (judged now for results written before it had one), and with rounds,
// each figure the median of its rounds with its interval.
func table(r *results.Run) []section {
	secs := sections(r)
	h := r.Headline
	if h == nil {
		h = judge(r, secs, Confidence(r))
	}
	mark(r, secs, h)
	return secs
}

// sections are the table's rows with the last round's cells, no best marked.
func sections(r *results.Run) []section {
	figs := threshold.Figures()
	var out []section
	for _, sec := range []section{
		historySection(r), ingestionSection(r), querySection(r, figs), resourcesSection(r, figs),
		readBackSection(r, figs), seriesSection(r), haSection(r),
	} {
		if sec.hasData() {
			out = append(out, sec)
		}
	}
	return out
}

// historySection is the catch-up of a run with history: its rate, its account and the
// storages' resources over it.
func historySection(r *results.Run) section {
	hist := func(f func(*results.WriteHistory) float64) threshold.Figure {
		return func(s *results.Storage) *float64 {
			if s.Write == nil || s.Write.History == nil {
				return nil
			}
			return new(f(s.Write.History))
		}
	}
	histRes := func(f func(*results.Resources) *float64) threshold.Figure {
		return func(s *results.Storage) *float64 {
			if s.Resources == nil || s.Resources.History == nil {
				return nil
			}
			return f(s.Resources.History)
		}
	}
	return section{title: "history (catch-up)", rows: []row{
		numRow(r, "catch-up samples/s", "history.samplesPerSecond", "%.1f", higher, hist(func(h *results.WriteHistory) float64 { return h.SamplesPerSecond })),
		numRow(r, "catch-up seconds", "history.seconds", "%.1f", lower, hist(func(h *results.WriteHistory) float64 { return h.Seconds })),
		numRow(r, "history generated", "history.generatedSamples", "%.0f", noBest, hist(func(h *results.WriteHistory) float64 { return float64(h.GeneratedSamples) })),
		numRow(r, "history acked", "history.ackedSamples", "%.0f", higher, hist(func(h *results.WriteHistory) float64 { return float64(h.AckedSamples) })),
		numRow(r, "cpu cores mean", "history.cpuCoresMean", "%.3f", lower, histRes(func(r *results.Resources) *float64 { return r.CPUCoresMean })),
		scaled(r, numRow(r, "rss max (MiB)", "history.rssBytesMax", "%.1f", lower, histRes(func(r *results.Resources) *float64 { return r.RSSBytesMax })), 1<<20),
		scaled(r, numRow(r, "disk growth (MiB)", "history.diskBytesGrowth", "%.2f", lower, histRes(func(r *results.Resources) *float64 { return r.DiskBytesGrowth })), 1<<20),
		numRow(r, "bytes/sample", "history.bytesPerSample", "%.3f", lower, histRes(func(r *results.Resources) *float64 { return r.BytesPerSample })),
	}}
}

// ingestionSection is the write account: protocol, rates, lag, and the samples generated,
// acked, dropped (by reason) and pending.
func ingestionSection(r *results.Run) section {
	count := func(f func(*results.Write) int64) func(*results.Storage) (int64, bool) {
		return func(s *results.Storage) (int64, bool) {
			if s.Write == nil {
				return 0, false
			}
			return f(s.Write), true
		}
	}
	figure := func(f func(*results.Write) float64) threshold.Figure {
		return func(s *results.Storage) *float64 {
			if s.Write == nil {
				return nil
			}
			return new(f(s.Write))
		}
	}
	sec := section{title: "ingestion", rows: []row{
		cells(r, "protocol", "write.protocol", noBest, func(s *results.Storage) (string, *float64) {
			switch {
			case s.Write == nil:
				return "?", nil
			case s.Write.Protocol == "": // results from before protocols were a choice
				return "prometheus-rw1", nil
			}
			return s.Write.Protocol, nil
		}),
		numRow(r, "target samples/s", "write.targetSamplesPerSecond", "%.1f", noBest, figure(func(w *results.Write) float64 { return w.TargetSamplesPerSecond })),
		numRow(r, "achieved samples/s", "write.achievedSamplesPerSecond", "%.1f", higher, figure(func(w *results.Write) float64 { return w.AchievedSamplesPerSecond })),
		numRow(r, "max lag (s)", "write.maxLagSeconds", "%.3f", lower, figure(func(w *results.Write) float64 { return w.MaxLagSeconds })),
		countRow(r, "generated", "write.generatedSamples", noBest, count(func(w *results.Write) int64 { return w.GeneratedSamples })),
		countRow(r, "acked", "write.ackedSamples", higher, count(func(w *results.Write) int64 { return w.AckedSamples })),
		countRow(r, "dropped", "write.droppedSamples", lower, count(func(w *results.Write) int64 { return w.Dropped() })),
	}}
	sec.rows = append(sec.rows, keyRows(r, "  dropped ", "write.droppedSamples.", lower, func(s *results.Storage) (map[string]int64, bool) {
		if s.Write == nil {
			return nil, false
		}
		return s.Write.DroppedSamples, true
	})...)
	sec.rows = append(sec.rows,
		countRow(r, "pending", "write.pendingSamples", lower, count(func(w *results.Write) int64 { return w.PendingSamples })),
		countRow(r, "retries", "write.retries", lower, count(func(w *results.Write) int64 { return w.Retries })))
	return sec
}

// querySection is the read load: queries executed, errors (by kind), ticks missed and the
// latency percentiles.
func querySection(r *results.Run, figs map[string]threshold.Figure) section {
	count := func(f func(*results.Query) int64) func(*results.Storage) (int64, bool) {
		return func(s *results.Storage) (int64, bool) {
			if s.Query == nil {
				return 0, false
			}
			return f(s.Query), true
		}
	}
	sec := section{title: "queries", rows: []row{
		cells(r, "executed", "query.executed", noBest, func(s *results.Storage) (string, *float64) {
			if s.Query == nil {
				if noQueryAPI(s) {
					return "no query API", nil
				}
				return "?", nil
			}
			return fmt.Sprintf("%d", s.Query.Executed), new(float64(s.Query.Executed))
		}),
		countRow(r, "errors", "query.errors", lower, count(func(q *results.Query) int64 { return sumCounts(q.Errors) })),
	}}
	sec.rows = append(sec.rows, keyRows(r, "  errors ", "query.errors.", lower, func(s *results.Storage) (map[string]int64, bool) {
		if s.Query == nil {
			return nil, false
		}
		return s.Query.Errors, true
	})...)
	sec.rows = append(sec.rows,
		countRow(r, "missed", "query.missed", lower, count(func(q *results.Query) int64 { return q.Missed })))
	for _, q := range []string{"p50", "p90", "p99", "max"} {
		rw := figRow(r, figs, "latency "+q+" (s)", "query."+q, "%.3f", lower)
		rw.latency = true
		sec.rows = append(sec.rows, rw)
	}
	return sec
}

// resourcesSection is each storage's CPU, memory and disk over the run.
func resourcesSection(r *results.Run, figs map[string]threshold.Figure) section {
	mib := func(label, name, format string) row {
		return scaled(r, figRow(r, figs, label, name, format, lower), 1<<20)
	}
	return section{title: "resources", rows: []row{
		figRow(r, figs, "cpu cores mean", "resources.cpuCoresMean", "%.3f", lower),
		figRow(r, figs, "cpu cores max", "resources.cpuCoresMax", "%.3f", lower),
		mib("rss mean (MiB)", "resources.rssBytesMean", "%.1f"),
		mib("rss max (MiB)", "resources.rssBytesMax", "%.1f"),
		mib("disk at end (MiB)", "resources.diskBytesEnd", "%.2f"),
		figRow(r, figs, "bytes/sample (live)", "resources.bytesPerSample", "%.3f", lower),
		figRow(r, figs, "bytes/sample (snapshot)", "resources.snapshotBytesPerSample", "%.3f", lower),
	}}
}

// readBackSection is the read-back's verdict and counts, the probes and the rules that
// differ; a run with a storage read through remote read adds the stale markers not stored.
func readBackSection(r *results.Run, figs map[string]threshold.Figure) section {
	sec := section{title: "read-back", rows: []row{
		cells(r, "verdict", "verify.verdict", noBest, func(s *results.Storage) (string, *float64) {
			if s.Verify == nil {
				return "?", nil
			}
			if s.Verify.Exact() {
				return "exact", nil
			}
			return "differs", nil
		}),
		figRow(r, figs, "checked samples", "verify.checkedSamples", "%.0f", noBest),
		figRow(r, figs, "missing", "verify.missingSamples", "%.0f", lower),
		figRow(r, figs, "duplicate", "verify.duplicateSamples", "%.0f", lower),
		figRow(r, figs, "unexpected", "verify.unexpectedSamples", "%.0f", lower),
		figRow(r, figs, "changed values", "verify.changedValues", "%.0f", lower),
		figRow(r, figs, "max relative error", "verify.maxRelativeError", "%.3g", lower),
		figRow(r, figs, "NaN altered", "verify.nanAltered", "%.0f", lower),
		figRow(r, figs, "staleness ignored", "verify.stalenessIgnored", "%.0f", lower),
		figRow(r, figs, "shifted timestamps", "verify.shiftedTimestamps", "%.0f", lower),
		cells(r, "probes differing", "verify.differentProbes", lower, func(s *results.Storage) (string, *float64) {
			if s.Verify == nil || viaRemoteRead(s) {
				return "?", nil
			}
			d := s.Verify.DifferentProbes()
			return fmt.Sprintf("%d of %d", d, len(s.Verify.Probes)), new(float64(d))
		}),
		figRow(r, figs, "rules differing", "verify.ruleDiffs", "%.0f", lower),
	}}
	if slices.ContainsFunc(r.Storages, func(s results.Storage) bool { return viaRemoteRead(&s) }) {
		// Raw samples show markers stored or not; the query API shows them honoured or not.
		markers := figRow(r, figs, "markers not stored", "verify.missingStaleMarkers", "%.0f", lower)
		sec.rows = slices.Insert(sec.rows, slices.IndexFunc(sec.rows, func(rw row) bool { return rw.label == "staleness ignored" })+1, markers)
	}
	return sec
}

// cells makes a row of one cell per storage; f gives a cell's text and its value (nil: not
// comparable).
func cells(r *results.Run, label, figure string, best better, f func(s *results.Storage) (string, *float64)) row {
	rw := row{label: label, figure: figure, best: best, scale: 1, bestAt: -1, cells: make([]string, len(r.Storages))}
	rw.get = func(s *results.Storage) *float64 { _, v := f(s); return v }
	for i := range r.Storages {
		rw.cells[i], _ = f(&r.Storages[i])
	}
	return rw
}

// countRow is a row of counts, "?" where get knows none.
func countRow(r *results.Run, label, figure string, best better, get func(s *results.Storage) (int64, bool)) row {
	rw := cells(r, label, figure, best, func(s *results.Storage) (string, *float64) {
		v, ok := get(s)
		if !ok {
			return "?", nil
		}
		return fmt.Sprintf("%d", v), new(float64(v))
	})
	rw.format = "%.0f"
	return rw
}

// numRow is a row of figures printed in format, "?" where get gives none.
func numRow(r *results.Run, label, figure, format string, best better, get threshold.Figure) row {
	rw := cells(r, label, figure, best, func(s *results.Storage) (string, *float64) {
		v := get(s)
		if v == nil {
			return "?", nil
		}
		return fmt.Sprintf(format, *v), v
	})
	rw.format = format
	return rw
}

// figRow is numRow of a figure threshold names.
func figRow(r *results.Run, figs map[string]threshold.Figure, label, figure, format string, best better) row {
	return numRow(r, label, figure, format, best, figs[figure])
}

// scaled prints rw's values divided by scale (bytes as MiB); the headline keeps the figure's
// own unit.
func scaled(r *results.Run, rw row, scale float64) row {
	rw.scale = scale
	for i := range r.Storages {
		if v := rw.get(&r.Storages[i]); v != nil {
			rw.cells[i] = rw.text(*v)
		}
	}
	return rw
}

// text is a value as the row prints it.
func (rw row) text(v float64) string { return fmt.Sprintf(rw.format, v/rw.scale) }

// keyRows is a row of counts per key of the storages' count maps (drop reasons, error
// kinds), in key order, labelled label+key and named figure+key: 0 where a storage's map
// lacks the key, "?" where get finds no map (ok false: the storage did not write, or was not
// queried).
func keyRows(r *results.Run, label, figure string, best better, get func(*results.Storage) (m map[string]int64, ok bool)) []row {
	var rows []row
	for _, key := range unionKeys(r, get) {
		rows = append(rows, countRow(r, label+key, figure+key, best, func(s *results.Storage) (int64, bool) {
			m, ok := get(s)
			return m[key], ok
		}))
	}
	return rows
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

// unionKeys is every key of the storages' count maps (drop reasons, error kinds), sorted.
func unionKeys(r *results.Run, get func(*results.Storage) (map[string]int64, bool)) []string {
	seen := map[string]bool{}
	var keys []string
	for i := range r.Storages {
		m, _ := get(&r.Storages[i])
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// bestIndex is the index of the row's best storage, or -1 when no storage is better than
// the others beyond the noise (headline.go).
func (rw row) bestIndex() int { return rw.bestAt }

// writeTable lays the sections out: labels left-aligned, one right-aligned column per
// storage, the best cell of a row followed by "*".
func writeTable(b *strings.Builder, r *results.Run) {
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
