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

// Comparison is old runs and a new one side by side, per storage and figure.
type Comparison struct {
	Olds []time.Time // each old run's start
	New  time.Time
	Rows []threshold.Row
	// Notes say when a run is partial (a checkpoint) or was resumed with gaps.
	Notes []string
}

// Compare puts the old runs and the new one side by side: threshold.Compare's rows (each
// figure's baseline the old runs' median), and notes on partial or resumed runs and on HA
// pairs.
func Compare(olds []*results.Run, cur *results.Run) *Comparison {
	c := &Comparison{New: cur.StartTime, Rows: threshold.Compare(olds, cur)}
	for _, old := range olds {
		c.Olds = append(c.Olds, old.StartTime)
		name := "old run"
		if len(olds) > 1 {
			name += " " + stamp(old.StartTime)
		}
		for _, l := range LongRunLines(old) {
			c.Notes = append(c.Notes, name+": "+l)
		}
	}
	for _, l := range LongRunLines(cur) {
		c.Notes = append(c.Notes, "new run: "+l)
	}
	var names []string // every storage with a figure in either side, in order
	for _, r := range c.Rows {
		if len(names) == 0 || names[len(names)-1] != r.Storage {
			names = append(names, r.Storage)
		}
	}
	c.Notes = append(c.Notes, haNotes(olds, cur, names)...)
	return c
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// several reports whether the baseline comes from more than one old run: the table then has
// a runs column and the note explains the noise across runs.
func (c *Comparison) several() bool { return len(c.Olds) > 1 }

// oldText names the old side: its start, or the runs' starts.
func (c *Comparison) oldText() string {
	if !c.several() {
		return "old run " + stamp(c.Olds[0])
	}
	var starts []string
	for _, t := range c.Olds {
		starts = append(starts, stamp(t))
	}
	return fmt.Sprintf("%d old runs %s (each figure's baseline: their median)", len(c.Olds), strings.Join(starts, ", "))
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

// flagNote says what the marks mean; withinRunNote how the noise of one run is estimated.
var (
	flagNote      = "! the change is larger than the figure's noise; ? the storage or figure is not in that run (flagged)."
	withinRunNote = []string{
		"  SE     means and quantiles over the run: 2·sqrt(2·s²/n_eff), twice the standard error of the",
		"         difference of two means, where n_eff = n·(1−ρ)/(1+ρ) in [1, n] and ρ is the lag-1",
		"         autocorrelation of the intervals (neighbouring intervals move together);",
		"  σ      maxima and end values: 2·sqrt(2·s²), the spread of the difference of single intervals;",
		"  exact  counts that chance does not move (drops, errors, read-back counts): any change is flagged;",
		"  5%     figures without per-interval values (totals that scale with the run's length, sizes on disk).",
		"  \"of p99\": query.p90 and query.max use the p99 timeline, as results.json keeps no p90 or max per interval.",
	}
)

// note explains the flags and the noise; the text and the HTML both show it.
func (c *Comparison) note() []string {
	if !c.several() {
		return slices.Concat([]string{
			flagNote,
			"Noise is estimated from the old run's per-interval values alone (one per progress or observe interval),",
			"as the change two runs like it can show by chance; a new run that is uneven does not widen it:",
		}, withinRunNote)
	}
	return slices.Concat([]string{
		flagNote,
		"old is the median of the old runs that know the figure (runs: how many), and the noise their spread:",
		"  t      t(0.975, n−1)·s·sqrt(1+1/n), the 95 % prediction half-width of one new run around the old",
		"         runs' mean, s their standard deviation over n runs: a new run like them is flagged 1 time in",
		"         20 (a figure about normal from run to run); wide for few runs (15.6·s for 2, 5.0·s for 3);",
		"  exact  counts that chance does not move (drops, errors, read-back counts): any change is flagged.",
		"A figure only one old run knows has that run's noise, from its per-interval values alone:",
	}, withinRunNote)
}

// header is the table's column names, the noise's method named method: a runs column with
// several old runs.
func (c *Comparison) header(method string) []string {
	if c.several() {
		return []string{"storage", "figure", "old", "runs", "new", "change", "noise", method, ""}
	}
	return []string{"storage", "figure", "old", "new", "change", "noise", method, ""}
}

// cells is a row's cells under header, "!" last for a flagged one.
func (c *Comparison) cells(r threshold.Row) []string {
	flag := ""
	if r.Flagged {
		flag = "!"
	}
	out := []string{r.Storage, r.Figure, fmtCompare(r.Old)}
	if c.several() {
		out = append(out, fmt.Sprint(r.Runs))
	}
	return append(out, fmtCompare(r.New), fmtChange(r.Change), threshold.FormatPlain(r.Noise), r.Method, flag)
}

// WriteText writes the comparison as a table under a header that states how noise is
// estimated; flagged rows are marked "!".
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s, new run %s\n", c.oldText(), stamp(c.New))
	fmt.Fprintln(tw, strings.Join(slices.Concat(c.Notes, c.note()), "\n")+"\n")
	fmt.Fprintln(tw, strings.Join(c.header("method"), "\t"))
	for _, r := range c.Rows {
		fmt.Fprintln(tw, strings.Join(c.cells(r), "\t"))
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
<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Flagged}} class="flag"{{end}}>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></body></html>
`

// WriteHTML writes the comparison as a self-contained page.
func (c *Comparison) WriteHTML(w io.Writer) error {
	tmpl, err := template.New("compare").Parse(compareHTML)
	if err != nil {
		return err
	}
	type row struct {
		Flagged bool
		Cells   []string
	}
	var rows []row
	for _, r := range c.Rows {
		rows = append(rows, row{r.Flagged, c.cells(r)})
	}
	old := stamp(c.Olds[0])
	if c.several() {
		old = c.oldText()
	}
	return tmpl.Execute(w, map[string]any{
		"Old": old, "New": stamp(c.New), "Rows": rows, "Header": c.header("noise estimate"),
		"Note": strings.Join(slices.Concat(c.Notes, c.note()), "\n"),
	})
}
