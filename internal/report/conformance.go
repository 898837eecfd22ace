package report

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// conformanceOnly tells a results file of tsbench conformance alone (no load was run): its
// summary and report are the PromQL section only.
func conformanceOnly(r *results.Run) bool {
	if len(r.Storages) == 0 {
		return false
	}
	for _, s := range r.Storages {
		if s.Write != nil || s.Query != nil || s.Verify != nil {
			return false
		}
	}
	return true
}

// passRate is passed / (passed + failed) in percent, the applicable evals only; "-" when none.
func passRate(c *results.Conformance) string {
	if c == nil {
		return "-"
	}
	return rate(c.Passed, c.Failed)
}

// featureRate is passRate of one feature's evals; "-" when none (or results without them).
func featureRate(c *results.Conformance, feature string) string {
	if c == nil {
		return "-"
	}
	f := c.Feature(feature)
	return rate(f.Passed, f.Failed)
}

func rate(passed, failed int) string {
	if passed+failed == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(passed)/float64(passed+failed))
}

// addedLabelsText says once which labels a storage adds to every series, that its answers
// were compared without them, and how many evals passed so; "" when it adds none.
func addedLabelsText(name string, c *results.Conformance) string {
	if c == nil || len(c.AddedLabels) == 0 {
		return ""
	}
	var ls []string
	for _, k := range slices.Sorted(maps.Keys(c.AddedLabels)) {
		ls = append(ls, fmt.Sprintf("%s=%q", k, c.AddedLabels[k]))
	}
	them := "it"
	if len(ls) > 1 {
		them = "them"
	}
	return fmt.Sprintf("%s adds %s to every series: its answers are compared without %s (%d evals passed so)",
		name, strings.Join(ls, ", "), them, c.PassedWithAddedLabels)
}

// conformanceNotes says what a storage did to the data written, beside its failures: the
// labels it adds, the samples it acknowledged and does not answer (or that they are unknown,
// the read-back having failed), the writes it asked to be sent again.
func conformanceNotes(name string, c *results.Conformance) []string {
	var notes []string
	if t := addedLabelsText(name, c); t != "" {
		notes = append(notes, t)
	}
	switch {
	case c.ReadBackError != "":
		notes = append(notes, fmt.Sprintf("%s: the float samples it acknowledged and does not answer are unknown: %s", name, c.ReadBackError))
	case c.DroppedSamples > 0:
		notes = append(notes, fmt.Sprintf("%s acknowledged %d float samples it does not answer (read back by metric name and time): the evals that read them failed as data dropped after ack",
			name, c.DroppedSamples))
	}
	if len(c.WriteRetries) > 0 {
		var n int
		for _, v := range c.WriteRetries {
			n += v
		}
		notes = append(notes, fmt.Sprintf("%s asked for %d writes to be sent again (by status: %s): each was retried, for at most 30 s",
			name, n, countsText(c.WriteRetries)))
	}
	return notes
}

// probesText is the semantics probes' figure beside the suite's: how many differ from
// Prometheus' answer, or "-" when the results hold no probes (tsbench conformance alone).
func probesText(s results.Storage) string {
	if s.Verify == nil || len(s.Verify.Probes) == 0 {
		return "-"
	}
	return fmt.Sprintf("%d of %d differ", s.Verify.DifferentProbes(), len(s.Verify.Probes))
}

func hasConformance(r *results.Run) bool {
	return slices.ContainsFunc(r.Storages, func(s results.Storage) bool { return s.Conformance != nil })
}

// writeConformanceSummary is the summary of tsbench conformance alone.
func writeConformanceSummary(w io.Writer, r *results.Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tsbench conformance %s → %s\n", r.StartTime.UTC().Format("2006-01-02 15:04:05Z"), r.EndTime.UTC().Format("15:04:05Z"))
	writeConformance(&b, r)
	for _, s := range r.Storages {
		for _, p := range s.Problems {
			fmt.Fprintf(&b, "\nproblem %s: %s\n", s.Name, p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeConformance prints the PromQL section: one table of storage × pass rate, overall and
// per feature, with the probes beside it, the labels a storage adds, the failures by kind,
// the reasons for "n/a", and the per-file table.
func writeConformance(b *strings.Builder, r *results.Run) {
	if !hasConformance(r) {
		return
	}
	var suite string
	for _, s := range r.Storages {
		if c := s.Conformance; c != nil {
			suite = fmt.Sprintf("%s, %d evals; data from %.0f hours ago to now", c.Suite, c.Total(), c.SpanHours)
		}
	}
	fmt.Fprintf(b, "\nPromQL: Prometheus' own test files (%s)\n", suite)
	const row = "  %-18s %7s %7s %7s %10s %7s %7s %13s %9s  %s\n"
	fmt.Fprintf(b, row, "storage", "passed", "failed", "n/a", "pass rate", "floats", "native", "experimental", "seconds", "probes")
	for _, s := range r.Storages {
		c := s.Conformance
		if c == nil {
			fmt.Fprintf(b, row, s.Name, "-", "-", "-", "-", "-", "-", "-", "-", probesText(s))
			continue
		}
		fmt.Fprintf(b, row, s.Name, strconv.Itoa(c.Passed), strconv.Itoa(c.Failed), strconv.Itoa(c.NotApplicable), passRate(c),
			featureRate(c, results.FeatureFloats), featureRate(c, results.FeatureNative), featureRate(c, results.FeatureExperimental),
			fmt.Sprintf("%.1f", c.Seconds), probesText(s))
	}
	b.WriteString("  pass rate: passed / (passed + failed), data rejected or dropped after ack failed; n/a (what no storage answers over the query API) is not counted\n")
	b.WriteString("  floats, native, experimental: the pass rate of the evals over floats, of those that read or expect a native histogram, and of those that need an --enable-feature of PromQL\n")
	for _, s := range r.Storages {
		c := s.Conformance
		if c == nil {
			continue
		}
		for _, t := range conformanceNotes(s.Name, c) {
			fmt.Fprintf(b, "  %s\n", t)
		}
		if len(c.Kinds) > 0 {
			fmt.Fprintf(b, "  %s failed: %s\n", s.Name, countsText(c.Kinds))
		}
		if len(c.NotApplicableReasons) > 0 {
			fmt.Fprintf(b, "  %s n/a: %s\n", s.Name, countsText(c.NotApplicableReasons))
		}
		for i, blk := range c.RejectedBlocks {
			if i == maxRejectedShown {
				fmt.Fprintf(b, "  %s refused %d more blocks (results.json lists them)\n", s.Name, len(c.RejectedBlocks)-i)
				break
			}
			fmt.Fprintf(b, "  %s refused the block of %s:%d: %s\n", s.Name, blk.File, blk.Line, blk.Answer)
		}
	}
	writeConformanceFiles(b, r)
}

// maxRejectedShown is how many refused blocks the summary quotes per storage.
const maxRejectedShown = 3

func countsText(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// writeConformanceFiles prints passed/failed/n/a per file and storage, with the feature
// flags a Prometheus server needs for the file.
func writeConformanceFiles(b *strings.Builder, r *results.Run) {
	rows := conformanceFileRows(r)
	fmt.Fprintf(b, "\n  %-26s", "passed/failed/n/a")
	for _, s := range r.Storages {
		fmt.Fprintf(b, " %-18s", s.Name)
	}
	b.WriteString(" Prometheus --enable-feature\n")
	for _, row := range rows {
		fmt.Fprintf(b, "  %-26s", row.File)
		for _, c := range row.Cells {
			fmt.Fprintf(b, " %-18s", c)
		}
		fmt.Fprintf(b, " %s\n", strings.Join(row.Features, ","))
	}
}

// conformanceFileRow is one test file across the storages.
type conformanceFileRow struct {
	File     string
	Features []string
	Cells    []string // per storage: passed/failed/n/a, "-" when not run
	Failures [][]results.ConformanceFailure
}

func conformanceFileRows(r *results.Run) []conformanceFileRow {
	var rows []conformanceFileRow
	index := map[string]int{}
	for si, s := range r.Storages {
		c := s.Conformance
		if c == nil {
			continue
		}
		for _, f := range c.Files {
			i, ok := index[f.File]
			if !ok {
				i = len(rows)
				index[f.File] = i
				rows = append(rows, conformanceFileRow{
					File: f.File, Features: f.Features,
					Cells: slices.Repeat([]string{"-"}, len(r.Storages)), Failures: make([][]results.ConformanceFailure, len(r.Storages)),
				})
			}
			rows[i].Cells[si] = fmt.Sprintf("%d/%d/%d", f.Passed, f.Failed, f.NotApplicable)
		}
		for _, f := range c.Failures {
			if i, ok := index[f.File]; ok {
				rows[i].Failures[si] = append(rows[i].Failures[si], f)
			}
		}
	}
	return rows
}

const conformanceHTMLSection = `<h2>PromQL conformance</h2>
<p>Prometheus' own test files ({{.Suite}}): every eval's data written over remote write at a recent time base, the eval asked over the query API and compared as Prometheus' test runner compares. Pass rate: passed / (passed + failed); an eval over data the storage refused, or acknowledged and did not keep, is failed ("data rejected", "data dropped after ack"); "n/a" evals, which no storage answers over the query API, are not counted. Per feature: the pass rate of the evals over floats, of those that read or expect a native histogram, and of those that need an <code>--enable-feature</code> of PromQL (experimental functions and syntax).</p>
<table><tr><th>storage</th><th>passed</th><th>failed</th><th>n/a</th><th>pass rate</th><th>floats</th><th>native histograms</th><th>experimental</th><th>seconds</th><th class="text">probes</th><th class="text">failed by kind</th><th class="text">n/a by reason</th></tr>
{{range .Storages}}<tr><td>{{.Name}}</td><td>{{.Passed}}</td><td>{{.Failed}}</td><td>{{.NA}}</td><td>{{.Rate}}</td><td>{{.Floats}}</td><td>{{.Native}}</td><td>{{.Experimental}}</td><td>{{.Seconds}}</td><td class="text">{{.Probes}}</td><td class="text">{{.Kinds}}</td><td class="text">{{.Reasons}}</td></tr>
{{end}}</table>
{{range .Storages}}{{range .Notes}}<p>{{.}}</p>
{{end}}{{end}}
<h3>Per file (passed/failed/n/a)</h3>
<table class="probes"><tr><th>file</th>{{range .Storages}}<th class="text">{{.Name}}</th>{{end}}<th class="text">Prometheus --enable-feature</th></tr>
{{range .Files}}<tr><td>{{.File}}</td>{{$f := .}}{{range $i, $c := .Cells}}<td class="text">{{$c}}{{with index $f.Failures $i}}<details><summary>{{len .}} failures</summary><ul>{{range .}}<li><code>{{.File}}:{{.Line}}</code> <code>{{.Expr}}</code> — {{.Kind}}<br>expected: {{.Expected}}<br>got: {{.Got}}</li>{{end}}</ul></details>{{end}}</td>{{end}}<td class="text">{{range .Features}}{{.}} {{end}}</td></tr>
{{end}}</table>
<details><summary>Per function, aggregation and operator (passed/failed/n/a; an eval counts under each it uses)</summary>
<table><tr><th>name</th>{{range .Storages}}<th class="text">{{.Name}}</th>{{end}}</tr>
{{range .Functions}}<tr><td>{{.Name}}</td>{{range .Cells}}<td class="text">{{.}}</td>{{end}}</tr>
{{end}}</table></details>
`

// conformanceFuncRow is one function or operator across the storages.
type conformanceFuncRow struct {
	Name  string
	Cells []string
}

func conformanceFuncRows(r *results.Run) []conformanceFuncRow {
	var rows []conformanceFuncRow
	index := map[string]int{}
	for si, s := range r.Storages {
		if s.Conformance == nil {
			continue
		}
		for _, f := range s.Conformance.Functions {
			i, ok := index[f.Name]
			if !ok {
				i = len(rows)
				index[f.Name] = i
				rows = append(rows, conformanceFuncRow{Name: f.Name, Cells: slices.Repeat([]string{"-"}, len(r.Storages))})
			}
			rows[i].Cells[si] = fmt.Sprintf("%d/%d/%d", f.Passed, f.Failed, f.NotApplicable)
		}
	}
	slices.SortFunc(rows, func(a, b conformanceFuncRow) int { return strings.Compare(a.Name, b.Name) })
	return rows
}

type conformanceStorageRow struct {
	Name, Rate, Seconds, Probes, Kinds, Reasons string
	Floats, Native, Experimental                string
	Notes                                       []string
	Passed, Failed, NA                          int
}

// conformanceHTML renders the PromQL section of report.html; empty without conformance results.
func conformanceHTML(r *results.Run) (template.HTML, error) {
	if !hasConformance(r) {
		return "", nil
	}
	tmpl, err := template.New("conformance").Parse(conformanceHTMLSection)
	if err != nil {
		return "", err
	}
	data := struct {
		Suite     string
		Storages  []conformanceStorageRow
		Files     []conformanceFileRow
		Functions []conformanceFuncRow
	}{Files: conformanceFileRows(r), Functions: conformanceFuncRows(r)}
	for _, s := range r.Storages {
		row := conformanceStorageRow{Name: s.Name, Rate: "-", Seconds: "-", Probes: probesText(s), Floats: "-", Native: "-", Experimental: "-"}
		if c := s.Conformance; c != nil {
			data.Suite = c.Suite
			row.Passed, row.Failed, row.NA, row.Rate = c.Passed, c.Failed, c.NotApplicable, passRate(c)
			row.Floats, row.Native, row.Experimental = featureRate(c, results.FeatureFloats), featureRate(c, results.FeatureNative), featureRate(c, results.FeatureExperimental)
			row.Notes = conformanceNotes(s.Name, c)
			row.Seconds, row.Kinds, row.Reasons = fmt.Sprintf("%.1f", c.Seconds), countsText(c.Kinds), countsText(c.NotApplicableReasons)
		}
		data.Storages = append(data.Storages, row)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // rendered by html/template above
}
