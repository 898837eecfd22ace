package report

import (
	"fmt"
	"math"
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

// table builds the side-by-side table shared by the summary and report.html: its sections
// in this order, each only when some storage has a figure in it.
func table(r *results.Run) []section {
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
	histRes := func(f func(*results.Resources) *float64, div float64) threshold.Figure {
		return func(s *results.Storage) *float64 {
			if s.Resources == nil || s.Resources.History == nil {
				return nil
			}
			if v := f(s.Resources.History); v != nil {
				return new(*v / div)
			}
			return nil
		}
	}
	return section{title: "history (catch-up)", rows: []row{
		numRow(r, "catch-up samples/s", "%.1f", higher, hist(func(h *results.WriteHistory) float64 { return h.SamplesPerSecond })),
		numRow(r, "catch-up seconds", "%.1f", lower, hist(func(h *results.WriteHistory) float64 { return h.Seconds })),
		numRow(r, "history generated", "%.0f", noBest, hist(func(h *results.WriteHistory) float64 { return float64(h.GeneratedSamples) })),
		numRow(r, "history acked", "%.0f", higher, hist(func(h *results.WriteHistory) float64 { return float64(h.AckedSamples) })),
		numRow(r, "cpu cores mean", "%.3f", lower, histRes(func(r *results.Resources) *float64 { return r.CPUCoresMean }, 1)),
		numRow(r, "rss max (MiB)", "%.1f", lower, histRes(func(r *results.Resources) *float64 { return r.RSSBytesMax }, 1<<20)),
		numRow(r, "disk growth (MiB)", "%.2f", lower, histRes(func(r *results.Resources) *float64 { return r.DiskBytesGrowth }, 1<<20)),
		numRow(r, "bytes/sample", "%.3f", lower, histRes(func(r *results.Resources) *float64 { return r.BytesPerSample }, 1)),
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
		cells(r, "protocol", noBest, func(s *results.Storage) (string, *float64) {
			switch {
			case s.Write == nil:
				return "?", nil
			case s.Write.Protocol == "": // results from before protocols were a choice
				return "prometheus-rw1", nil
			}
			return s.Write.Protocol, nil
		}),
		numRow(r, "target samples/s", "%.1f", noBest, figure(func(w *results.Write) float64 { return w.TargetSamplesPerSecond })),
		numRow(r, "achieved samples/s", "%.1f", higher, figure(func(w *results.Write) float64 { return w.AchievedSamplesPerSecond })),
		numRow(r, "max lag (s)", "%.3f", lower, figure(func(w *results.Write) float64 { return w.MaxLagSeconds })),
		countRow(r, "generated", noBest, count(func(w *results.Write) int64 { return w.GeneratedSamples })),
		countRow(r, "acked", higher, count(func(w *results.Write) int64 { return w.AckedSamples })),
		countRow(r, "dropped", lower, count(func(w *results.Write) int64 { return w.Dropped() })),
	}}
	sec.rows = append(sec.rows, keyRows(r, "  dropped ", lower, func(s *results.Storage) (map[string]int64, bool) {
		if s.Write == nil {
			return nil, false
		}
		return s.Write.DroppedSamples, true
	})...)
	sec.rows = append(sec.rows,
		countRow(r, "pending", lower, count(func(w *results.Write) int64 { return w.PendingSamples })),
		countRow(r, "retries", lower, count(func(w *results.Write) int64 { return w.Retries })))
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
		cells(r, "executed", noBest, func(s *results.Storage) (string, *float64) {
			if s.Query == nil {
				if noQueryAPI(s) {
					return "no query API", nil
				}
				return "?", nil
			}
			return fmt.Sprintf("%d", s.Query.Executed), new(float64(s.Query.Executed))
		}),
		countRow(r, "errors", lower, count(func(q *results.Query) int64 { return sumCounts(q.Errors) })),
	}}
	sec.rows = append(sec.rows, keyRows(r, "  errors ", lower, func(s *results.Storage) (map[string]int64, bool) {
		if s.Query == nil {
			return nil, false
		}
		return s.Query.Errors, true
	})...)
	sec.rows = append(sec.rows,
		countRow(r, "missed", lower, count(func(q *results.Query) int64 { return q.Missed })),
		numRow(r, "latency p50 (s)", "%.3f", lower, figs["query.p50"]),
		numRow(r, "latency p90 (s)", "%.3f", lower, figs["query.p90"]),
		numRow(r, "latency p99 (s)", "%.3f", lower, figs["query.p99"]),
		numRow(r, "latency max (s)", "%.3f", lower, figs["query.max"]))
	return sec
}

// resourcesSection is each storage's CPU, memory and disk over the run.
func resourcesSection(r *results.Run, figs map[string]threshold.Figure) section {
	mib := func(name string) threshold.Figure {
		return func(s *results.Storage) *float64 {
			if v := figs[name](s); v != nil {
				return new(*v / (1 << 20))
			}
			return nil
		}
	}
	return section{title: "resources", rows: []row{
		numRow(r, "cpu cores mean", "%.3f", lower, figs["resources.cpuCoresMean"]),
		numRow(r, "cpu cores max", "%.3f", lower, figs["resources.cpuCoresMax"]),
		numRow(r, "rss mean (MiB)", "%.1f", lower, mib("resources.rssBytesMean")),
		numRow(r, "rss max (MiB)", "%.1f", lower, mib("resources.rssBytesMax")),
		numRow(r, "disk at end (MiB)", "%.2f", lower, mib("resources.diskBytesEnd")),
		numRow(r, "bytes/sample (live)", "%.3f", lower, figs["resources.bytesPerSample"]),
		numRow(r, "bytes/sample (snapshot)", "%.3f", lower, figs["resources.snapshotBytesPerSample"]),
	}}
}

// readBackSection is the read-back's verdict and counts, the probes and the rules that
// differ; a run with a storage read through remote read adds the stale markers not stored.
func readBackSection(r *results.Run, figs map[string]threshold.Figure) section {
	sec := section{title: "read-back", rows: []row{
		cells(r, "verdict", noBest, func(s *results.Storage) (string, *float64) {
			if s.Verify == nil {
				return "?", nil
			}
			if s.Verify.Exact() {
				return "exact", nil
			}
			return "differs", nil
		}),
		numRow(r, "checked samples", "%.0f", noBest, figs["verify.checkedSamples"]),
		numRow(r, "missing", "%.0f", lower, figs["verify.missingSamples"]),
		numRow(r, "duplicate", "%.0f", lower, figs["verify.duplicateSamples"]),
		numRow(r, "unexpected", "%.0f", lower, figs["verify.unexpectedSamples"]),
		numRow(r, "changed values", "%.0f", lower, figs["verify.changedValues"]),
		numRow(r, "max relative error", "%.3g", lower, figs["verify.maxRelativeError"]),
		numRow(r, "NaN altered", "%.0f", lower, figs["verify.nanAltered"]),
		numRow(r, "staleness ignored", "%.0f", lower, figs["verify.stalenessIgnored"]),
		numRow(r, "shifted timestamps", "%.0f", lower, figs["verify.shiftedTimestamps"]),
		cells(r, "probes differing", lower, func(s *results.Storage) (string, *float64) {
			if s.Verify == nil || viaRemoteRead(s) {
				return "?", nil
			}
			d := s.Verify.DifferentProbes()
			return fmt.Sprintf("%d of %d", d, len(s.Verify.Probes)), new(float64(d))
		}),
		numRow(r, "rules differing", "%.0f", lower, figs["verify.ruleDiffs"]),
	}}
	if slices.ContainsFunc(r.Storages, func(s results.Storage) bool { return viaRemoteRead(&s) }) {
		// Raw samples show markers stored or not; the query API shows them honoured or not.
		markers := numRow(r, "markers not stored", "%.0f", lower, figs["verify.missingStaleMarkers"])
		sec.rows = slices.Insert(sec.rows, slices.IndexFunc(sec.rows, func(rw row) bool { return rw.label == "staleness ignored" })+1, markers)
	}
	return sec
}

// cells makes a row of one cell per storage.
func cells(r *results.Run, label string, best better, f func(s *results.Storage) (string, *float64)) row {
	rw := row{label: label, best: best, cells: make([]string, len(r.Storages)), values: make([]*float64, len(r.Storages))}
	for i := range r.Storages {
		rw.cells[i], rw.values[i] = f(&r.Storages[i])
	}
	return rw
}

// countRow is a row of counts, "?" where get knows none.
func countRow(r *results.Run, label string, best better, get func(s *results.Storage) (int64, bool)) row {
	return cells(r, label, best, func(s *results.Storage) (string, *float64) {
		v, ok := get(s)
		if !ok {
			return "?", nil
		}
		return fmt.Sprintf("%d", v), new(float64(v))
	})
}

// numRow is a row of figures printed in format, "?" where get gives none.
func numRow(r *results.Run, label, format string, best better, get threshold.Figure) row {
	return cells(r, label, best, func(s *results.Storage) (string, *float64) {
		v := get(s)
		if v == nil {
			return "?", nil
		}
		return fmt.Sprintf(format, *v), v
	})
}

// keyRows is a row of counts per key of the storages' count maps (drop reasons, error
// kinds), in key order, labelled label+key: 0 where a storage's map lacks the key, "?" where
// get finds no map (ok false: the storage did not write, or was not queried).
func keyRows(r *results.Run, label string, best better, get func(*results.Storage) (m map[string]int64, ok bool)) []row {
	var rows []row
	for _, key := range unionKeys(r, get) {
		rows = append(rows, countRow(r, label+key, best, func(s *results.Storage) (int64, bool) {
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

// bestIndex is the index of the best value of a row, or -1 when no value is better than
// every other one as printed.
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
	for i, v := range rw.values {
		if i != idx && v != nil && rw.cells[i] == rw.cells[idx] {
			return -1 // equal at the printed precision (0.003 and 0.003): a tie, no best
		}
	}
	return idx
}

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
