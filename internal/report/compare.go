package report

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// Comparison is two runs side by side, per storage and figure.
type Comparison struct {
	Old, New time.Time
	Rows     []threshold.Row
	// Notes say when either run is partial (a checkpoint) or was resumed with gaps.
	Notes []string
}

// Compare puts two runs side by side: threshold.Compare's rows, and notes on partial or
// resumed runs and on HA pairs.
func Compare(old, cur *results.Run) *Comparison {
	c := &Comparison{Old: old.StartTime, New: cur.StartTime, Rows: threshold.Compare(old, cur)}
	for _, l := range LongRunLines(old) {
		c.Notes = append(c.Notes, "old run: "+l)
	}
	for _, l := range LongRunLines(cur) {
		c.Notes = append(c.Notes, "new run: "+l)
	}
	var names []string // every storage with a figure in either run, in order
	for _, r := range c.Rows {
		if len(names) == 0 || names[len(names)-1] != r.Storage {
			names = append(names, r.Storage)
		}
	}
	c.Notes = append(c.Notes, haNotes(old, cur, names)...)
	return c
}

func fmtCompare(v *float64) string {
	if v == nil {
		return "?"
	}
	return threshold.FormatPlain(*v)
}

func fmtChange(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

// compareNote explains the flags and the noise; the text and the HTML both show it.
var compareNote = []string{
	"! the change is larger than the figure's noise; ? the storage or figure is not in that run (flagged).",
	"Noise is estimated from the old run's per-interval values alone (one per progress or observe interval),",
	"as the change two runs like it can show by chance; a new run that is uneven does not widen it:",
	"  SE     means and quantiles over the run: 2·sqrt(2·s²/n_eff), twice the standard error of the",
	"         difference of two means, where n_eff = n·(1−ρ)/(1+ρ) in [1, n] and ρ is the lag-1",
	"         autocorrelation of the intervals (neighbouring intervals move together);",
	"  σ      maxima and end values: 2·sqrt(2·s²), the spread of the difference of single intervals;",
	"  exact  counts that chance does not move (drops, errors, read-back counts): any change is flagged;",
	"  5%     figures without per-interval values (totals that scale with the run's length, sizes on disk).",
	"  \"of p99\": query.p90 and query.max use the p99 timeline, as results.json keeps no p90 or max per interval.",
}

// WriteText writes the comparison as a table under a header that states how noise is
// estimated; flagged rows are marked "!".
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "old run %s, new run %s\n", c.Old.UTC().Format(time.RFC3339), c.New.UTC().Format(time.RFC3339))
	fmt.Fprintln(tw, strings.Join(slices.Concat(c.Notes, compareNote), "\n")+"\n")
	fmt.Fprintln(tw, "storage\tfigure\told\tnew\tchange\tnoise\tmethod\t")
	for _, r := range c.Rows {
		flag := ""
		if r.Flagged {
			flag = "!"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Storage, r.Figure, fmtCompare(r.Old), fmtCompare(r.New), fmtChange(r.Change), threshold.FormatPlain(r.Noise), r.Method, flag)
	}
	return tw.Flush()
}

const compareHTML = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>tsbench compare</title><style>
body{font-family:system-ui,sans-serif;margin:24px}table{border-collapse:collapse;font-variant-numeric:tabular-nums}
td,th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:right}td:nth-child(-n+2),th:nth-child(-n+2){text-align:left}
tr.flag td{background:#fff3cd;font-weight:600}pre{font-size:13px}</style></head><body>
<h1>tsbench: {{.Old}} → {{.New}}</h1>
<p>Highlighted: flagged.</p><pre>{{.Note}}</pre>
<table><tr><th>storage</th><th>figure</th><th>old</th><th>new</th><th>change</th><th>noise</th><th>noise estimate</th><th></th></tr>
{{range .Rows}}<tr{{if .Flagged}} class="flag"{{end}}><td>{{.Storage}}</td><td>{{.Figure}}</td><td>{{.OldS}}</td><td>{{.NewS}}</td><td>{{.ChangeS}}</td><td>{{.NoiseS}}</td><td>{{.Method}}</td><td>{{if .Flagged}}!{{end}}</td></tr>
{{end}}</table></body></html>
`

// WriteHTML writes the comparison as a self-contained page.
func (c *Comparison) WriteHTML(w io.Writer) error {
	tmpl, err := template.New("compare").Parse(compareHTML)
	if err != nil {
		return err
	}
	type row struct {
		threshold.Row
		OldS, NewS, ChangeS, NoiseS string
	}
	var rows []row
	for _, r := range c.Rows {
		rows = append(rows, row{r, fmtCompare(r.Old), fmtCompare(r.New), fmtChange(r.Change), threshold.FormatPlain(r.Noise)})
	}
	return tmpl.Execute(w, map[string]any{
		"Old": c.Old.UTC().Format(time.RFC3339), "New": c.New.UTC().Format(time.RFC3339), "Rows": rows,
		"Note": strings.Join(slices.Concat(c.Notes, compareNote), "\n"),
	})
}
