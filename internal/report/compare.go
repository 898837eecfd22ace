package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Comparison is two runs side by side, per storage and figure.
type Comparison struct {
	Old, New time.Time
	Rows     []CompareRow
}

// CompareRow is one figure of one storage in both runs.
type CompareRow struct {
	Storage string
	Figure  string
	Old     *float64
	New     *float64
	Change  *float64 // percent; nil when a side is unknown or old is 0
	Noise   float64  // the change that noise alone can make, in the figure's unit
	Method  string   // how Noise was estimated
	Flagged bool     // |new-old| > Noise
}

// noiseSource gives a figure's per-interval values in one run, whose spread is its noise.
func noiseSource(figure string) func(s *Storage) []float64 {
	write := func(f func(WritePoint) float64) func(*Storage) []float64 {
		return func(s *Storage) []float64 {
			if s.Write == nil {
				return nil
			}
			var v []float64
			for _, p := range s.Write.Timeline {
				v = append(v, f(p))
			}
			return v
		}
	}
	query := func(f func(QueryPoint) float64) func(*Storage) []float64 {
		return func(s *Storage) []float64 {
			if s.Query == nil {
				return nil
			}
			var v []float64
			for _, p := range s.Query.Timeline {
				v = append(v, f(p))
			}
			return v
		}
	}
	res := func(f func(ResourcePoint) *float64) func(*Storage) []float64 {
		return func(s *Storage) []float64 {
			if s.Resources == nil {
				return nil
			}
			var v []float64
			for _, p := range s.Resources.Timeline {
				if x := f(p); x != nil {
					v = append(v, *x)
				}
			}
			return v
		}
	}
	switch figure {
	case "write.achievedSamplesPerSecond":
		return write(func(p WritePoint) float64 { return p.SamplesPerSecs })
	case "write.maxLagSeconds":
		return write(func(p WritePoint) float64 { return p.LagSeconds })
	case "query.p50":
		return query(func(p QueryPoint) float64 { return p.P50 })
	case "query.p90", "query.p99", "query.max":
		return query(func(p QueryPoint) float64 { return p.P99 })
	case "resources.cpuCoresMean", "resources.cpuCoresMax":
		return res(func(p ResourcePoint) *float64 { return p.CPUCores })
	case "resources.rssBytesMean", "resources.rssBytesMax":
		return res(func(p ResourcePoint) *float64 { return p.RSSBytes })
	case "resources.bytesPerSample":
		return res(func(p ResourcePoint) *float64 { return p.BytesPerSample })
	}
	return nil
}

// exactFigure reports whether a figure is an exact count: any change is real.
func exactFigure(figure string) bool {
	return strings.HasPrefix(figure, "verify.") && figure != "verify.maxRelativeError" ||
		figure == "write.droppedSamples" || figure == "write.pendingSamples" ||
		figure == "query.errors" || figure == "query.missed"
}

// fallbackNoise is the relative change flagged for figures without a timeline to measure
// their spread, and that are not exact counts (sizes, totals that scale with run length).
const fallbackNoise = 0.05

// Compare compares every figure of every storage present in both runs.
func Compare(old, cur *Results) *Comparison {
	c := &Comparison{Old: old.StartTime, New: cur.StartTime}
	figures := Figures()
	for i := range cur.Storages {
		ns := &cur.Storages[i]
		var os *Storage
		for j := range old.Storages {
			if old.Storages[j].Name == ns.Name {
				os = &old.Storages[j]
			}
		}
		if os == nil {
			continue
		}
		for _, name := range FigureNames() {
			ov, nv := figures[name](os), figures[name](ns)
			if ov == nil && nv == nil {
				continue
			}
			row := CompareRow{Storage: ns.Name, Figure: name, Old: ov, New: nv}
			row.Noise, row.Method = noise(name, os, ns, ov, nv)
			if ov != nil && nv != nil {
				if *ov != 0 {
					row.Change = new(100 * (*nv - *ov) / math.Abs(*ov))
				}
				row.Flagged = math.Abs(*nv-*ov) > row.Noise
			} else {
				row.Flagged = true // a figure appeared or disappeared
			}
			c.Rows = append(c.Rows, row)
		}
	}
	return c
}

// noise estimates how much a figure moves by chance: twice the pooled standard deviation of
// its per-interval values in the two runs; exact counts have none; others 5%.
func noise(figure string, os, ns *Storage, ov, nv *float64) (float64, string) {
	if exactFigure(figure) {
		return 0, "exact count"
	}
	if src := noiseSource(figure); src != nil {
		a, b := src(os), src(ns)
		if len(a) >= 3 && len(b) >= 3 {
			return 2 * math.Sqrt(variance(a)+variance(b)), "2σ of per-interval values"
		}
	}
	ref := 0.0
	if ov != nil {
		ref = math.Abs(*ov)
	}
	if nv != nil {
		ref = math.Max(ref, math.Abs(*nv))
	}
	return fallbackNoise * ref, "5% (no per-interval data)"
}

func variance(v []float64) float64 {
	var mean float64
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var s float64
	for _, x := range v {
		s += (x - mean) * (x - mean)
	}
	return s / float64(len(v)-1)
}

func fmtCompare(v *float64) string {
	if v == nil {
		return "?"
	}
	if *v == math.Trunc(*v) && math.Abs(*v) < 1e15 {
		return fmt.Sprintf("%.0f", *v) // counts and byte sizes exactly
	}
	return fmt.Sprintf("%.6g", *v)
}

func fmtChange(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

// WriteText writes the comparison as a table; flagged rows are marked "!".
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "old run %s, new run %s\n\n", c.Old.UTC().Format(time.RFC3339), c.New.UTC().Format(time.RFC3339))
	fmt.Fprintln(tw, "storage\tfigure\told\tnew\tchange\tnoise\t")
	for _, r := range c.Rows {
		flag := ""
		if r.Flagged {
			flag = "!"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3g\t%s\n", r.Storage, r.Figure, fmtCompare(r.Old), fmtCompare(r.New), fmtChange(r.Change), r.Noise, flag)
	}
	fmt.Fprintln(tw, "\n! the change is larger than the figure's noise. Noise: twice the pooled standard deviation")
	fmt.Fprintln(tw, "  of the figure's per-interval values in both runs (rates, lag, latency, CPU, RSS, bytes/sample);")
	fmt.Fprintln(tw, "  none for exact counts (drops, errors, read-back counts); 5% for figures without per-interval data.")
	return tw.Flush()
}

const compareHTML = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>tsbench compare</title><style>
body{font-family:system-ui,sans-serif;margin:24px}table{border-collapse:collapse;font-variant-numeric:tabular-nums}
td,th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:right}td:nth-child(-n+2),th:nth-child(-n+2){text-align:left}
tr.flag td{background:#fff3cd;font-weight:600}</style></head><body>
<h1>tsbench: {{.Old}} → {{.New}}</h1>
<table><tr><th>storage</th><th>figure</th><th>old</th><th>new</th><th>change</th><th>noise</th><th>noise estimate</th></tr>
{{range .Rows}}<tr{{if .Flagged}} class="flag"{{end}}><td>{{.Storage}}</td><td>{{.Figure}}</td><td>{{.OldS}}</td><td>{{.NewS}}</td><td>{{.ChangeS}}</td><td>{{.NoiseS}}</td><td>{{.Method}}</td></tr>
{{end}}</table><p>Highlighted: the change is larger than the figure's noise (twice the pooled per-interval standard deviation; none for exact counts; 5% without per-interval data).</p></body></html>
`

// WriteHTML writes the comparison as a self-contained page.
func (c *Comparison) WriteHTML(w io.Writer) error {
	tmpl, err := template.New("compare").Parse(compareHTML)
	if err != nil {
		return err
	}
	type row struct {
		CompareRow
		OldS, NewS, ChangeS, NoiseS string
	}
	var rows []row
	for _, r := range c.Rows {
		rows = append(rows, row{r, fmtCompare(r.Old), fmtCompare(r.New), fmtChange(r.Change), fmt.Sprintf("%.3g", r.Noise)})
	}
	return tmpl.Execute(w, map[string]any{
		"Old": c.Old.UTC().Format(time.RFC3339), "New": c.New.UTC().Format(time.RFC3339), "Rows": rows,
	})
}
