package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tsbench/tsbench/internal/results"
)

// viaRemoteRead reports whether the storage was read back through remote read, where no
// probe, rule or staleness query was run (their figures are unknown there).
func viaRemoteRead(s *results.Storage) bool {
	return s.Verify != nil && s.Verify.ReadBackVia == "remoteRead"
}

// WriteSummary writes the end-of-run summary: the side-by-side table with the best value per
// row marked "*", the slowest queries, tsbench's own usage and the thresholds.
func WriteSummary(w io.Writer, r *results.Run) error {
	if conformanceOnly(r) {
		return writeConformanceSummary(w, r)
	}
	var b strings.Builder
	if line := InterruptedLine(r); line != "" {
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "tsbench %s → %s, %d targets × %d series, %d series created by churn, %d stale markers\n\n",
		r.StartTime.UTC().Format("2006-01-02 15:04:05Z"), r.EndTime.UTC().Format("15:04:05Z"),
		r.Workload.Targets, r.Workload.SeriesPerTarget, r.Workload.SeriesCreated, r.Workload.StaleMarkers)
	if lines := StatusLines(r); len(lines) > 0 {
		b.WriteString(strings.Join(lines, "\n") + "\n\n")
	}
	for _, l := range LongRunLines(r) {
		b.WriteString(l + "\n\n")
	}
	writeHistoryLine(&b, r)
	writeSettings(&b, r)
	writeTable(&b, r)
	writeHeadline(&b, r)
	writeReproduction(&b, r)
	writeRefusedHistory(&b, r)
	for _, s := range r.Storages {
		if s.Write == nil {
			fmt.Fprintf(&b, "%s: no writes (no writeURL, or disableWrite): only queried, so it has no ingestion figures\n", s.Name)
		}
	}
	writeSlowest(&b, r)
	writeFreshness(&b, r)
	writeNoQueryAPI(&b, r)
	writeVerdicts(&b, r)
	writeNatives(&b, r)
	writeMetadata(&b, r)
	writeChecks(&b, r)
	writeProbes(&b, r)
	writeConformance(&b, r)
	writeRuleDiffs(&b, r)
	writeRulesNotCompared(&b, r)
	writeSeries(&b, r)
	writeHA(&b, r)
	writeSender(&b, r)
	if g := r.Generator; g != nil {
		fmt.Fprintf(&b, "\ntsbench itself: cpu %s cores mean, %s max; rss %s MiB max\n",
			fmtPtr("%.3f", g.CPUCoresMean, 1), fmtPtr("%.3f", g.CPUCoresMax, 1), fmtPtr("%.1f", g.RSSBytesMax, 1<<20))
		b.WriteString(longRunSelf(r))
	}
	if len(r.Thresholds) > 0 {
		b.WriteString("\nthresholds\n")
		for _, t := range r.Thresholds {
			mark, detail := "✓", ""
			if !t.OK {
				mark = "✗"
			}
			if t.Value != nil {
				detail = " (is " + ValueText(t) + ")"
			} else if t.Reason != "" {
				detail = " (" + t.Reason + ")"
			}
			fmt.Fprintf(&b, "  %s %-16s %s%s\n", mark, t.Storage, t.Check(), detail)
		}
	}
	for _, s := range r.Storages {
		if s.Write != nil {
			for _, n := range s.Write.Notes {
				fmt.Fprintf(&b, "\nnote %s: %s\n", s.Name, n)
			}
			for _, l := range s.Write.Limits { // issue 31: which limit, and how it is raised
				value := ""
				if l.Value != "" {
					value = " (" + l.Value + ")"
				}
				fmt.Fprintf(&b, "\nlimit %s: %s refused %d requests (HTTP %d) at its %s limit%s; raise %s\n",
					s.Name, l.Family, l.Requests, l.Status, l.Limit, value, l.Raise)
			}
		}
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

// sumCounts is the total of counts by reason or kind.
func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func fmtPtr(format string, v *float64, div float64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprintf(format, *v/div)
}

// slowestPerStorage is how many of each storage's slowest queries the summary and
// report.html list.
const slowestPerStorage = 3

// slowestQueries is the storage's slowestPerStorage slowest queries by p99, slowest first.
func slowestQueries(s *results.Storage) []results.QueryStat {
	if s.Query == nil {
		return nil
	}
	qs := slices.Clone(s.Query.PerQuery)
	sort.SliceStable(qs, func(i, j int) bool { return p99(qs[i]) > p99(qs[j]) })
	return qs[:min(slowestPerStorage, len(qs))]
}

// p99 is a query's p99 for ordering: -1, below every latency, when it never completed.
func p99(q results.QueryStat) float64 {
	if v := q.LatencySeconds.P99; v != nil {
		return *v
	}
	return -1
}

// writeSlowest lists the slowest queries side by side: the union of each storage's
// slowestQueries, one row per query with every storage's p99, slowest first.
func writeSlowest(b *strings.Builder, r *results.Run) {
	var keys []queryKey
	seen := map[queryKey]bool{}
	stats := make([]map[queryKey]results.QueryStat, len(r.Storages))
	for i := range r.Storages {
		s := &r.Storages[i]
		stats[i] = map[queryKey]results.QueryStat{}
		if s.Query == nil {
			continue
		}
		for _, q := range s.Query.PerQuery {
			stats[i][queryKey{q.Kind, q.Name}] = q
		}
		for _, q := range slowestQueries(s) {
			if k := (queryKey{q.Kind, q.Name}); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	slowest := func(k queryKey) float64 {
		m := 0.0
		for i := range stats {
			m = max(m, p99(stats[i][k]))
		}
		return m
	}
	sort.SliceStable(keys, func(i, j int) bool { return slowest(keys[i]) > slowest(keys[j]) })
	rows := [][]string{{"kind", "query"}}
	for _, s := range r.Storages {
		rows[0] = append(rows[0], s.Name)
	}
	for _, k := range keys {
		rw := []string{k.kind, clip(k.name, 48)}
		for i := range r.Storages {
			rw = append(rw, slowCell(stats[i], k))
		}
		rows = append(rows, rw)
	}
	fmt.Fprintf(b, "\nslowest queries: p99 from the scheduled time, the %d slowest of each storage\n", slowestPerStorage)
	writeGrid(b, rows, 2)
}

// queryKey names a query within a storage's PerQuery.
type queryKey struct{ kind, name string }

// slowCell is one storage's p99 of a query, with its errors; "?" when it did not run it.
func slowCell(stats map[queryKey]results.QueryStat, k queryKey) string {
	q, ok := stats[k]
	if !ok {
		return "?"
	}
	cell := "?" // it never completed
	if v := q.LatencySeconds.P99; v != nil {
		cell = fmt.Sprintf("%.3fs", *v)
	}
	if n := sumCounts(q.Errors); n > 0 {
		cell += fmt.Sprintf(" (%d errors)", n)
	}
	return cell
}

// writeGrid writes rows as columns two spaces apart, each as wide as its widest cell: the
// first left columns left-aligned, the others right-aligned.
func writeGrid(b *strings.Builder, rows [][]string, left int) {
	var widths []int
	for _, rw := range rows {
		for i, c := range rw {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, rw := range rows {
		var lb strings.Builder
		for i, c := range rw {
			if i < left {
				fmt.Fprintf(&lb, "  %-*s", widths[i], c)
			} else {
				fmt.Fprintf(&lb, "  %*s", widths[i], c)
			}
		}
		b.WriteString(strings.TrimRight(lb.String(), " ") + "\n")
	}
}

// clip shortens s to at most n runes, ending it with "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// noQueryAPI reports whether the storage's readURL failed the query API check at the start.
func noQueryAPI(s *results.Storage) bool { return s.QueryAPI != nil && !s.QueryAPI.Available }

// noQueryAPIText says what a storage without the query API answered and what it missed.
func noQueryAPIText(s *results.Storage) string {
	return fmt.Sprintf("no query API at %s (answered %s): no read load, probes or rule comparison",
		s.QueryAPI.URL, clip(s.QueryAPI.Answer, 100))
}

// writeNoQueryAPI names each storage whose readURL has no query API, with what it answered.
func writeNoQueryAPI(b *strings.Builder, r *results.Run) {
	sep := "\n"
	for _, s := range r.Storages {
		if noQueryAPI(&s) {
			fmt.Fprintf(b, "%s%s: %s\n", sep, s.Name, noQueryAPIText(&s))
			sep = ""
		}
	}
}

// readBackName is the storage's name as its read-back verdict shows it, saying when it was
// read through remote read.
func readBackName(s *results.Storage) string {
	if viaRemoteRead(s) {
		return s.Name + " (through remote read)"
	}
	return s.Name
}

// writeVerdicts prints each storage's read-back verdict in one line.
func writeVerdicts(b *strings.Builder, r *results.Run) {
	sep := "\n"
	for _, s := range r.Storages {
		if s.Verify != nil {
			fmt.Fprintf(b, "%sread-back %s: %s\n", sep, readBackName(&s), s.Verify.Verdict())
			sep = ""
		}
	}
}

// ProbeRow is one PromQL probe across the storages: Prometheus' answer and each storage's.
// The summary's probes table is made of these rows, and report.html can show the same.
type ProbeRow struct {
	Name     string
	Query    string
	Expected string
	Got      []string // per storage, in Run.Storages order; "?" when not probed
	Differs  []bool   // per storage: the answer is not the expected one
}

// ProbeRows lists every probe any storage answered, in the order the storages ran them.
// The expected answer is the first storage's: every storage gets the same probes.
func ProbeRows(r *results.Run) []ProbeRow {
	var rows []ProbeRow
	index := map[string]int{}
	for i, s := range r.Storages {
		if s.Verify == nil {
			continue
		}
		for _, p := range s.Verify.Probes {
			j, ok := index[p.Name]
			if !ok {
				j = len(rows)
				index[p.Name] = j
				rw := ProbeRow{Name: p.Name, Query: p.Query, Expected: p.Expected, Got: make([]string, len(r.Storages)), Differs: make([]bool, len(r.Storages))}
				for k := range rw.Got {
					rw.Got[k] = "?"
				}
				rows = append(rows, rw)
			}
			rows[j].Got[i], rows[j].Differs[i] = p.Got, !p.Same
		}
	}
	return rows
}

// probeCellWidth caps the width of an answer in the summary; results.json has it whole.
const probeCellWidth = 40

// writeProbes prints the probes table: the expected answer, then each storage's, "=" when it
// is the expected text and "✗" when it differs.
func writeProbes(b *strings.Builder, r *results.Run) {
	probes := ProbeRows(r)
	if len(probes) == 0 {
		return
	}
	rows := [][]string{{"probe", "expected"}}
	for _, s := range r.Storages {
		rows[0] = append(rows[0], s.Name)
	}
	for _, p := range probes {
		rw := []string{p.Name, clip(p.Expected, probeCellWidth)}
		for i, got := range p.Got {
			cell := clip(got, probeCellWidth)
			if got == p.Expected {
				cell = "="
			}
			if p.Differs[i] {
				cell += " ✗"
			}
			rw = append(rw, cell)
		}
		rows = append(rows, rw)
	}
	b.WriteString("\nPromQL probes: the answer Prometheus gives, then each storage's (= the same, ✗ differs)\n")
	writeGrid(b, rows, len(rows[0]))
}

// writeHistoryLine says how far back the workload's clock began and the bound on the
// catch-up's order.
func writeHistoryLine(b *strings.Builder, r *results.Run) {
	h := r.Workload.HistorySeconds
	if h <= 0 {
		return
	}
	order := ""
	if skew := r.Workload.HistorySkewSeconds; skew > 0 {
		order = fmt.Sprintf(" in time order (no sample more than %s older than the newest sent before it)", time.Duration(skew*float64(time.Second)))
	}
	fmt.Fprintf(b, "history: the workload's clock began %s before the start; each storage caught up%s, then ran live (the figures below cover both phases, \"history\" the catch-up alone)\n\n",
		time.Duration(h*float64(time.Second)), order)
}

// writeSettings lists each storage's version and settings that change what tsbench measures
// (the flags it was started with, those read from it), then a warning for each that hides data from the
// checks (issue 39).
func writeSettings(b *strings.Builder, r *results.Run) {
	width, shown := 0, false
	for _, s := range r.Storages {
		width, shown = max(width, len(s.Name)), shown || len(s.Settings) > 0 || len(s.SettingsWarnings) > 0 || s.Version != ""
	}
	if !shown {
		return
	}
	b.WriteString("settings of the storages that change what tsbench measures:\n")
	for _, s := range r.Storages {
		line := strings.Join(s.Settings, " ")
		if s.Version != "" {
			line = strings.TrimSpace("version " + s.Version + "  " + line)
		}
		if line != "" {
			fmt.Fprintf(b, "  %-*s  %s\n", width, s.Name, line)
		}
	}
	for _, s := range r.Storages {
		for _, w := range s.SettingsWarnings {
			fmt.Fprintf(b, "warning %s: %s\n", s.Name, w)
		}
	}
	b.WriteString("\n")
}

// writeRefusedHistory says why a storage refused history: samples older than what it holds
// of a series, or than its head accepts. An earlier run of the same workload is named only
// when the storage held data when first observed.
func writeRefusedHistory(b *strings.Builder, r *results.Run) {
	for _, s := range r.Storages {
		if s.Write == nil || s.Write.History == nil {
			continue
		}
		reasons := slices.Sorted(maps.Keys(s.Write.DroppedSamples))
		for _, reason := range reasons {
			if !strings.HasPrefix(reason, "http_4") || s.Write.DroppedSamples[reason] == 0 {
				continue
			}
			fmt.Fprintf(b, "%s: %d samples refused (%s) with history: %s\n", s.Name, s.Write.DroppedSamples[reason], reason, whyRefused(s.Resources))
		}
	}
}

// whyRefused explains refused history by what the storage held when first observed.
func whyRefused(res *results.Resources) string {
	const refuses = "a storage refuses samples older than what it already holds of a series, or than its head accepts " +
		"(Prometheus: out of order, or out of bounds: more than half a block range, 1h by default, behind its newest sample)"
	start := res.DiskBytesStart()
	switch {
	case start == nil:
		return refuses + "; whether it held data before the run is unknown (no disk figure): if it holds an earlier run of the same workload, start it empty to compare"
	case *start >= results.HeldDataBytes:
		return fmt.Sprintf("it held %.1f MiB before the run, as when it holds an earlier run of the same workload: %s; start it empty to compare",
			*start/(1<<20), refuses)
	}
	return fmt.Sprintf("it held no data before the run (%.0f bytes on disk when first observed), so not an earlier run: %s; "+
		"newer samples than the history reached it during the catch-up (from another writer, or history sent out of order): see its log", *start, refuses)
}
