package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"
)

// Charts are inline SVG drawn here: the report must open offline as one file, and a line
// chart of a few hundred points needs ~100 lines of Go, not a JavaScript bundle or a plotting
// library with fonts to embed.

// chartSeries is one line of a chart: a storage's values over time.
type chartSeries struct {
	Name   string
	Points []chartPoint
}

type chartPoint struct {
	T time.Time
	V float64
}

// chart is one chart of the report.
type chart struct {
	Title  string
	Unit   string
	Series []chartSeries
}

// palette colours storages in report order.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

// svg renders the chart; a chart without points says so.
func (c chart) svg() template.HTML {
	const w, h, left, right, top, bottom = 560.0, 220.0, 64.0, 12.0, 24.0, 36.0
	var tmin, tmax time.Time
	vmax, n := 0.0, 0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
				continue
			}
			if n == 0 || p.T.Before(tmin) {
				tmin = p.T
			}
			if n == 0 || p.T.After(tmax) {
				tmax = p.T
			}
			vmax = math.Max(vmax, p.V)
			n++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-points="%d" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s">`, n, w, h, w, h, template.HTMLEscapeString(c.Title))
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="title">%s (%s)</text>`, left, template.HTMLEscapeString(c.Title), template.HTMLEscapeString(c.Unit))
	if n == 0 {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="nodata">no data in this run</text></svg>`, w/2-60, h/2)
		return template.HTML(b.String())
	}
	if vmax == 0 {
		vmax = 1
	}
	span := tmax.Sub(tmin).Seconds()
	if span == 0 {
		span = 1
	}
	x := func(t time.Time) float64 { return left + (w-left-right)*t.Sub(tmin).Seconds()/span }
	y := func(v float64) float64 { return h - bottom - (h-top-bottom)*v/vmax }
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" class="axis"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" class="axis"/>`, left, top, left, h-bottom)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="tick" text-anchor="end">%s</text>`, left-4, top+4, shortNumber(vmax))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="tick" text-anchor="end">0</text>`, left-4, h-bottom+4)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="tick">0s</text>`, left, h-bottom+16)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="tick" text-anchor="end">%s</text>`, w-right, h-bottom+16, time.Duration(span*float64(time.Second)).Round(time.Second))
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		var pts []string
		for _, p := range s.Points {
			if !math.IsNaN(p.V) && !math.IsInf(p.V, 0) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.T), y(p.V)))
			}
		}
		if len(pts) == 1 { // a single point draws no line: mark it
			fmt.Fprintf(&b, `<circle cx="%s" r="3" fill="%s"/>`, strings.Replace(pts[0], ",", `" cy="`, 1), color)
		}
		fmt.Fprintf(&b, `<polyline class="line" fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, color, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="legend" fill="%s">%s</text>`, w-right-120, top+14*float64(i+1), color, template.HTMLEscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func shortNumber(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

// charts builds the report's charts from the timelines.
func charts(r *Results) []chart {
	type def struct {
		title, unit string
		get         func(s *Storage) []chartPoint
	}
	writePts := func(f func(WritePoint) float64) func(*Storage) []chartPoint {
		return func(s *Storage) []chartPoint {
			if s.Write == nil {
				return nil
			}
			var out []chartPoint
			for _, p := range s.Write.Timeline {
				out = append(out, chartPoint{p.Time, f(p)})
			}
			return out
		}
	}
	queryPts := func(f func(QueryPoint) float64) func(*Storage) []chartPoint {
		return func(s *Storage) []chartPoint {
			if s.Query == nil {
				return nil
			}
			var out []chartPoint
			for _, p := range s.Query.Timeline {
				if t, err := time.Parse(time.RFC3339Nano, p.Time); err == nil {
					out = append(out, chartPoint{t, f(p)})
				}
			}
			return out
		}
	}
	resPts := func(f func(ResourcePoint) *float64) func(*Storage) []chartPoint {
		return func(s *Storage) []chartPoint {
			if s.Resources == nil {
				return nil
			}
			var out []chartPoint
			for _, p := range s.Resources.Timeline {
				t, err := time.Parse(time.RFC3339Nano, p.Time)
				if v := f(p); v != nil && err == nil {
					out = append(out, chartPoint{t, *v})
				}
			}
			return out
		}
	}
	defs := []def{
		{"ingestion rate", "samples/s", writePts(func(p WritePoint) float64 { return p.SamplesPerSecs })},
		{"lag", "s", writePts(func(p WritePoint) float64 { return p.LagSeconds })},
		{"pending", "samples", writePts(func(p WritePoint) float64 { return float64(p.Pending) })},
		{"dropped", "samples", writePts(func(p WritePoint) float64 { return float64(p.Dropped) })},
		{"query latency p50", "s", queryPts(func(p QueryPoint) float64 { return p.P50 })},
		{"query latency p99", "s", queryPts(func(p QueryPoint) float64 { return p.P99 })},
		{"query errors", "errors", queryPts(func(p QueryPoint) float64 { return float64(p.Errors) })},
		{"CPU", "cores", resPts(func(p ResourcePoint) *float64 { return p.CPUCores })},
		{"RSS", "bytes", resPts(func(p ResourcePoint) *float64 { return p.RSSBytes })},
		{"disk", "bytes", resPts(func(p ResourcePoint) *float64 { return p.DiskBytes })},
		{"bytes per sample", "bytes", resPts(func(p ResourcePoint) *float64 { return p.BytesPerSample })},
	}
	var out []chart
	for _, d := range defs {
		c := chart{Title: d.title, Unit: d.unit}
		for i := range r.Storages {
			c.Series = append(c.Series, chartSeries{Name: r.Storages[i].Name, Points: d.get(&r.Storages[i])})
		}
		out = append(out, c)
	}
	return out
}

const htmlPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>tsbench report {{.Start}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
td,th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:right}
td:first-child,th:first-child{text-align:left}
tr.sec td{font-weight:600;background:#f4f4f4;text-align:left}
td.best{font-weight:700;color:#0a6b2d}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{border:1px solid #ddd;background:#fff}
.title{font-size:13px;font-weight:600}.tick,.legend{font-size:11px}.nodata{font-size:13px;fill:#888}
.axis{stroke:#999}.ok{color:#0a6b2d}.fail{color:#b00020}
</style></head><body>
<h1>tsbench: {{len .R.Storages}} storages, {{.R.Workload.Targets}} targets × {{.R.Workload.SeriesPerTarget}} series</h1>
<p>{{.Start}} → {{.End}} · seed {{.R.Workload.Seed}} · {{.R.Workload.SeriesCreated}} series created by churn · {{.R.Workload.StaleMarkers}} stale markers</p>
<table><tr><th></th>{{range .R.Storages}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Sections}}<tr class="sec"><td colspan="{{$.Cols}}">{{.Title}}</td></tr>
{{range .Rows}}<tr><td>{{.Label}}</td>{{range .Cells}}<td{{if .Best}} class="best"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}{{end}}</table>
<p>Bold green: the best value of the row.</p>
{{if .R.Thresholds}}<h2>Thresholds</h2><ul>{{range .R.Thresholds}}<li class="{{if .OK}}ok{{else}}fail{{end}}">{{if .OK}}✓{{else}}✗{{end}} {{.Storage}}: {{.Check}}{{if .Reason}} ({{.Reason}}){{end}}</li>{{end}}</ul>{{end}}
{{range .R.AccountingErrors}}<p class="fail">Accounting error: {{.}}</p>{{end}}
<h2>Over time</h2><div class="charts">{{range .Charts}}{{.}}{{end}}</div>
</body></html>
`

type htmlCell struct {
	Text string
	Best bool
}

type htmlRow struct {
	Label string
	Cells []htmlCell
}

type htmlSection struct {
	Title string
	Rows  []htmlRow
}

// WriteHTML writes report.html: one self-contained page, no script, no external resource.
func WriteHTML(w io.Writer, r *Results) error {
	tmpl, err := template.New("report").Parse(htmlPage)
	if err != nil {
		return err
	}
	var secs []htmlSection
	for _, sec := range table(r) {
		hs := htmlSection{Title: sec.title}
		for _, rw := range sec.rows {
			best := rw.bestIndex()
			hr := htmlRow{Label: rw.label}
			for i, c := range rw.cells {
				hr.Cells = append(hr.Cells, htmlCell{Text: c, Best: i == best})
			}
			hs.Rows = append(hs.Rows, hr)
		}
		secs = append(secs, hs)
	}
	var svgs []template.HTML
	for _, c := range charts(r) {
		svgs = append(svgs, c.svg())
	}
	return tmpl.Execute(w, map[string]any{
		"R": r, "Sections": secs, "Charts": svgs, "Cols": len(r.Storages) + 1,
		"Start": r.StartTime.UTC().Format("2006-01-02 15:04:05Z"), "End": r.EndTime.UTC().Format("2006-01-02 15:04:05Z"),
	})
}
