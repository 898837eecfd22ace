package report

import (
	"fmt"
	"html/template"
	"strings"
	"text/tabwriter"

	"github.com/tsbench/tsbench/internal/results"
)

// verdictText is a row's verdict in words: the tolerance it held within, the measured
// figure's ratio to the published one, or why it is not comparable here.
func verdictText(row results.ReproductionRow) string {
	switch row.Verdict {
	case results.Holds:
		return fmt.Sprintf("holds (within %s)", toleranceText(row.Tolerance))
	case results.DoesNotHold:
		if row.Ratio != nil {
			return fmt.Sprintf("does not hold (measured %.3g× the published, tolerance %s)", *row.Ratio, toleranceText(row.Tolerance))
		}
		return "does not hold (measured " + row.Measured + ")"
	}
	return row.Verdict + ": " + row.Reason
}

func toleranceText(t float64) string {
	if t == 0 {
		return "exactly"
	}
	return fmt.Sprintf("×/÷ %.3g", 1+t)
}

// comparedText is the scale-free form and both figures in it.
func comparedText(row results.ReproductionRow) string {
	if row.MeasuredValue == nil {
		return fmt.Sprintf("%s: %.4g published", row.Compared, row.PublishedValue)
	}
	return fmt.Sprintf("%s: %.4g published, %.4g measured", row.Compared, row.PublishedValue, *row.MeasuredValue)
}

// reproductionHead is the scenario, its article and the scale, the versions published and
// measured, in lines.
func reproductionHead(r *results.Run) []string {
	p := r.Reproduction
	lines := []string{
		fmt.Sprintf("%s, article %s", p.Name, p.Article),
		fmt.Sprintf("scale %.3g", p.Scale),
		"published: " + p.Date + "; " + p.Versions + "; " + p.Hardware,
	}
	if v := versions(r); v != "" {
		lines = append(lines, "measured: "+v)
	}
	if p.ArticleScale > 0 {
		lines[1] += fmt.Sprintf(" (the article's setup is scale %.4g)", p.ArticleScale)
	}
	for _, s := range p.StandIns {
		lines = append(lines, "stands in: "+s)
	}
	return append(lines, p.Notes...)
}

// writeReproduction writes the published vs measured table of a tsbench reproduce run.
func writeReproduction(b *strings.Builder, r *results.Run) {
	p := r.Reproduction
	if p == nil {
		return
	}
	b.WriteString("\npublished vs measured: " + strings.Join(reproductionHead(r), "\n  ") + "\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  figure\tpublished\tmeasured\tverdict")
	for _, row := range p.Rows {
		measured := row.Measured
		if measured == "" {
			measured = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", row.Figure, row.Published, measured, verdictText(row))
	}
	_ = tw.Flush() // a strings.Builder does not fail
	for _, row := range p.Rows {
		if row.MeasuredValue != nil {
			fmt.Fprintf(b, "  %s: %s%s\n", row.Figure, comparedText(row), noteText(row))
		}
	}
}

func noteText(row results.ReproductionRow) string {
	if row.Reason == "" || row.Verdict == results.NotComparable {
		return ""
	}
	return " (" + row.Reason + ")"
}

const reproductionHTML = `<h2>Published vs measured</h2>{{range .Head}}<p>{{.}}</p>{{end}}
<div class="scroll"><table><tr><th>figure</th><th class="text">published</th><th class="text">measured</th><th class="text">compared (scale-free)</th><th class="text">verdict</th></tr>
{{range .Rows}}<tr><td>{{.Figure}}</td><td class="text">{{.Published}}</td><td class="text">{{if .Measured}}{{.Measured}}{{else}}-{{end}}</td><td class="text">{{.Compared}}</td><td class="text {{.Class}}">{{.Verdict}}</td></tr>
{{end}}</table></div>
`

// reproductionSection renders the published vs measured section of report.html; "" for a
// run that is not a reproduction.
func reproductionSection(r *results.Run) (template.HTML, error) {
	p := r.Reproduction
	if p == nil {
		return "", nil
	}
	type htmlRow struct{ Figure, Published, Measured, Compared, Verdict, Class string }
	var rows []htmlRow
	for _, row := range p.Rows {
		class := map[string]string{results.Holds: "ok", results.DoesNotHold: "fail", results.NotComparable: "note"}[row.Verdict]
		rows = append(rows, htmlRow{row.Figure, row.Published, row.Measured, comparedText(row), verdictText(row) + noteText(row), class})
	}
	t, err := template.New("reproduction").Parse(reproductionHTML)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, map[string]any{"Head": reproductionHead(r), "Rows": rows}); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // rendered by html/template above
}

// versions are the storages' versions as the run read them, "name version" each, "" when
// none is known.
func versions(r *results.Run) string {
	var out []string
	for _, s := range r.Storages {
		if s.Version != "" {
			out = append(out, s.Name+" "+s.Version)
		}
	}
	return strings.Join(out, ", ")
}
