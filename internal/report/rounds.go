package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// roundFigures are the headline figures report.html draws round by round, when the run had
// rounds.
var roundFigures = []string{
	"write.achievedSamplesPerSecond", "query.p50", "query.p99", "resources.cpuCoresMean",
	"resources.rssBytesMax", "resources.bytesPerSample",
}

// roundCharts draws, per headline figure, each storage's rounds as points, its interval as a
// band and its median as a line; nil without rounds.
func roundCharts(r *results.Run) []template.HTML {
	if len(r.Rounds) < 2 {
		return nil
	}
	h := headlineOf(r)
	secs := sections(r)
	var out []template.HTML
	for _, name := range roundFigures {
		for _, row := range h.Rows {
			if row.Figure == name {
				out = append(out, roundChart(r, row, findRow(secs, name)))
			}
		}
	}
	return out
}

func findRow(secs []section, figure string) row {
	for _, sec := range secs {
		for _, rw := range sec.rows {
			if rw.figure == figure {
				return rw
			}
		}
	}
	return row{format: "%.3g", scale: 1}
}

const (
	roundW, roundH        = 360.0, 170.0
	roundTop, roundBottom = 28.0, 140.0
	roundLeft, roundAxis  = 8.0, 80.0 // the axis' labels, then the storages' columns
)

// roundChart is one figure's chart: a column per storage.
func roundChart(r *results.Run, hr results.HeadlineRow, rw row) template.HTML {
	lo, hi := math.Inf(1), math.Inf(-1)
	values := make([][]float64, len(hr.Values))
	for i, v := range hr.Values {
		values[i] = rw.roundValues(r, v.Storage)
		for _, x := range append(append([]float64{}, values[i]...), ptrOr(v.Low, math.NaN()), ptrOr(v.High, math.NaN())) {
			if !math.IsNaN(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-label="%s by round" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`,
		template.HTMLEscapeString(hr.Label), roundW, roundH, roundW, roundH)
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="title">%s</text>`, roundLeft, template.HTMLEscapeString(strings.TrimSpace(hr.Label)))
	if math.IsInf(lo, 0) {
		return template.HTML(b.String() + `</svg>`)
	}
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	y := func(v float64) float64 { return roundBottom - (v-lo)/(hi-lo)*(roundBottom-roundTop) }
	for _, v := range []float64{lo, hi} { // the value axis: its two ends
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" class="legend">%s</text>`, roundLeft, y(v)+4, rw.text(v))
	}
	colW := (roundW - roundAxis - roundLeft) / float64(max(1, len(hr.Values)))
	for i, v := range hr.Values {
		x := roundAxis + colW*(float64(i)+0.5)
		if v.Low != nil && v.High != nil {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" opacity="0.2"><title>%s: interval %s to %s</title></rect>`,
				x-colW/4, y(*v.High), colW/2, math.Max(1, y(*v.Low)-y(*v.High)), palette[i%len(palette)],
				template.HTMLEscapeString(v.Storage), rw.text(*v.Low), rw.text(*v.High))
		}
		if v.Median != nil {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"><title>%s: median %s</title></line>`,
				x-colW/4, x+colW/4, y(*v.Median), y(*v.Median), palette[i%len(palette)], template.HTMLEscapeString(v.Storage), rw.text(*v.Median))
		}
		for round, val := range values[i] {
			if !math.IsNaN(val) {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s round %d: %s</title></circle>`,
					x-colW/8+colW/4*float64(round)/float64(max(1, len(values[i])-1)), y(val), palette[i%len(palette)],
					template.HTMLEscapeString(v.Storage), round+1, rw.text(val))
			}
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" class="legend">%s</text>`, x, roundBottom+18, template.HTMLEscapeString(v.Storage))
	}
	return template.HTML(b.String() + `</svg>`)
}

func ptrOr(p *float64, otherwise float64) float64 {
	if p == nil {
		return otherwise
	}
	return *p
}
