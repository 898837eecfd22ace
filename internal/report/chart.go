package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// Charts are inline SVG drawn here: the report must open offline as one file, and a line
// chart of a few hundred points needs ~200 lines of Go, not a JavaScript bundle or a plotting
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
	Title string
	Unit  string // "s" and "bytes" are scaled on the ticks (ms, MiB); others go in the title
	// Start and End are the span of the x axis, the run's, so every chart of a run has the
	// same; zero: the points' own.
	Start, End time.Time
	// Held is set when x is the workload's time a storage holds, not the clock (heldChart).
	Held   bool
	Empty  string // what an empty plot says; "" is "no data in this run"
	Series []chartSeries
	Events []results.Event // cardinality events, shaded (series.go)
}

// palette colours storages in report order.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

// dashes tell series apart where their lines overlap: the first is solid and widest, each
// later one is dashed and drawn on top, so both colours show when two storages match. Lines
// are at least 2px wide: one pixel row of each is its pure colour wherever it falls.
var dashes = []string{"", "7 4", "2 3", "10 3 2 3"}

// plotBackground fills each plot area; the browser test finds the plot areas by it.
const plotBackground = "#e9eef5"

// Chart geometry in CSS pixels: the title, the legend above the plot (a row per series),
// the plot, and below it the x tick labels, each over its clock time.
const (
	chartWidth = 580.0
	plotLeft   = 62.0
	plotRight  = 30.0 // half a clock label: the last one is centred on the plot's edge
	legendTop  = 33.0
	legendRow  = 15.0
	plotHeight = 150.0
	axisBelow  = 38.0
	// markerSpacing is the mean distance between a series' points below which its markers
	// are not drawn (they would merge into a band); their tooltips stay, one per hoverSpacing
	// at most: a pointer picks nothing finer, and a long run's 540 points a series would
	// make the page ten times larger.
	markerSpacing = 8.0
	hoverSpacing  = 3.0
)

// svg renders the chart; a chart without points says so inside an empty plot.
func (c chart) svg() template.HTML {
	top := legendTop + float64(len(c.Series))*legendRow
	h := top + plotHeight + axisBelow
	pw := chartWidth - plotLeft - plotRight
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-title="%s" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%[1]s">`,
		template.HTMLEscapeString(c.Title), chartWidth, h, chartWidth, h)
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="title">%s</text>`, plotLeft, template.HTMLEscapeString(c.heading()))
	fmt.Fprintf(&b, `<rect class="plot" x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="%s"/>`, plotLeft, top, pw, plotHeight, plotBackground)
	origin, end, lo, hi, ok := c.bounds()
	if !ok {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="nodata" text-anchor="middle">%s</text></svg>`,
			plotLeft+pw/2, top+plotHeight/2, template.HTMLEscapeString(cmp.Or(c.Empty, "no data in this run")))
		return template.HTML(b.String())
	}
	yt := valueTicks(lo, hi, c.Unit)
	xt := timeTicks(end)
	x := func(t time.Time) float64 { return plotLeft + pw*t.Sub(origin).Seconds()/xt.max }
	y := func(v float64) float64 { return top + plotHeight*(yt.max-v)/(yt.max-yt.min) }
	c.drawTicks(&b, xt, yt, origin, top, y)
	c.markEvents(&b, x, top)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" class="axis"/>`, plotLeft, top+plotHeight, plotLeft+pw, top+plotHeight)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" class="axis"/>`, plotLeft, top, plotLeft, top+plotHeight)
	for i, s := range c.Series {
		c.drawSeries(&b, i, s, origin, x, y)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// drawTicks draws the grid and the tick labels: values on the y axis, and on the x axis the
// time since the start over its clock time (UTC), or the data held on the held chart.
func (c chart) drawTicks(b *strings.Builder, xt, yt ticks, origin time.Time, top float64, y func(float64) float64) {
	pw := chartWidth - plotLeft - plotRight
	for i, v := range yt.at {
		if i > 0 && i < len(yt.at)-1 { // the ends are the plot's edges
			fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" class="grid"/>`, plotLeft, y(v), plotLeft+pw, y(v))
		}
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" class="tick" text-anchor="end">%s</text>`, plotLeft-6, y(v)+4, yt.labels[i])
	}
	clock := "15:04:05Z"
	if len(xt.at) > 1 && xt.at[1]-xt.at[0] >= 60 {
		clock = "15:04Z"
	}
	for i, s := range xt.at {
		at := plotLeft + pw*s/xt.max
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" class="tick" text-anchor="middle">%s</text>`, at, top+plotHeight+16, xt.labels[i])
		if !c.Held {
			t := origin.Add(time.Duration(s * float64(time.Second))).UTC()
			fmt.Fprintf(b, `<text x="%.1f" y="%.0f" class="clock" text-anchor="middle">%s</text>`, at, top+plotHeight+30, t.Format(clock))
		}
	}
}

// drawSeries draws the i-th series: its line, a marker of the series' own shape at each
// point, whose tooltip (an SVG title, no script) is the point's time and value (where the
// points are too dense for markers, one point's per hoverSpacing), and its legend entry
// above the plot.
func (c chart) drawSeries(b *strings.Builder, i int, s chartSeries, origin time.Time, x func(time.Time) float64, y func(float64) float64) {
	color, stroke := palette[i%len(palette)], seriesStroke(i)
	var pts []string
	var finitePts []chartPoint
	for _, p := range s.Points {
		if finite(p.V) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.T), y(p.V)))
			finitePts = append(finitePts, p)
		}
	}
	name := template.HTMLEscapeString(s.Name)
	if len(pts) > 0 {
		fmt.Fprintf(b, `<polyline class="series" data-series="%s" fill="none" stroke="%s" %s points="%s"/>`, name, color, stroke, strings.Join(pts, " "))
	}
	shown := float64(len(finitePts)) <= (chartWidth-plotLeft-plotRight)/markerSpacing
	last := math.Inf(-1)
	for _, p := range finitePts {
		if px := x(p.T); shown || px-last >= hoverSpacing {
			b.WriteString(marker(i, px, y(p.V), color, shown, template.HTMLEscapeString(c.pointText(s.Name, p, origin))))
			last = px
		}
	}
	lx, ly := plotLeft, legendTop+float64(i)*legendRow
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" %s/>`, lx, ly-4, lx+22, ly-4, color, stroke)
	b.WriteString(marker(i, lx+11, ly-4, color, true, name))
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" class="legend">%s</text>`, lx+28, ly, template.HTMLEscapeString(s.Name+": "+c.legendText(s)))
}

// marker is the i-th series' marker at x, y: a hollow circle, square, triangle or diamond,
// so markers of series that overlap stay apart, with title as its tooltip. A marker not
// shown is transparent and keeps its tooltip.
func marker(i int, x, y float64, color string, shown bool, title string) string {
	paint := fmt.Sprintf(`stroke="%s"`, color) // the page's CSS: hollow, 1.5px, hoverable inside
	if !shown {
		paint += ` stroke-opacity="0"`
	}
	var shape string
	switch i % 4 {
	case 0:
		shape = fmt.Sprintf(`circle class="marker" cx="%.1f" cy="%.1f" r="3.5"`, x, y)
	case 1:
		shape = fmt.Sprintf(`rect class="marker" x="%.1f" y="%.1f" width="6" height="6"`, x-3, y-3)
	case 2:
		shape = fmt.Sprintf(`path class="marker" d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ"`, x, y-4.5, x+4, y+3, x-4, y+3)
	default:
		shape = fmt.Sprintf(`path class="marker" d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ"`, x, y-4.5, x+4.5, y, x, y+4.5, x-4.5, y)
	}
	tag, _, _ := strings.Cut(shape, " ")
	return fmt.Sprintf(`<%s %s><title>%s</title></%s>`, shape, paint, title, tag)
}

// pointText is a point's tooltip: the storage, when (clock time and time since the start,
// or on the held chart the data held) and the value with its unit, e.g.
// "victoriametrics 12:01:30Z (+1m30s): 30.1k samples/s".
func (c chart) pointText(name string, p chartPoint, origin time.Time) string {
	since := formatElapsed(p.T.Sub(origin).Seconds())
	when := p.T.UTC().Format("15:04:05Z") + " (+" + since + ")"
	if c.Held {
		when = "holding " + since + " of data"
	}
	value := formatValue(p.V, c.Unit)
	if c.Unit != "s" && c.Unit != "bytes" {
		value += " " + c.Unit
	}
	return name + " " + when + ": " + value
}

// heading is the chart's title, with its unit unless the ticks carry it.
func (c chart) heading() string {
	if c.Unit == "s" || c.Unit == "bytes" {
		return c.Title
	}
	return c.Title + " (" + c.Unit + ")"
}

// seriesStroke is the stroke of the i-th series, the same in the plot and in the legend.
func seriesStroke(i int) string {
	if i == 0 {
		return `stroke-width="3"`
	}
	return fmt.Sprintf(`stroke-width="2" stroke-dasharray="%s"`, dashes[1+(i-1)%(len(dashes)-1)])
}

// legendText is a series' mean and max for the legend, so series drawn on top of each other
// can still be told apart by their values.
func (c chart) legendText(s chartSeries) string {
	sum, n, top := 0.0, 0, math.Inf(-1)
	for _, p := range s.Points {
		if finite(p.V) {
			sum, n, top = sum+p.V, n+1, math.Max(top, p.V)
		}
	}
	if n == 0 {
		return "no data"
	}
	return "mean " + formatValue(sum/float64(n), c.Unit) + ", max " + formatValue(top, c.Unit)
}

// bounds is where the x axis starts, how many seconds after it it ends (the last point, or
// End when later), and the range of the values; ok is false when no series has a finite point.
func (c chart) bounds() (origin time.Time, end, lo, hi float64, ok bool) {
	var last time.Time
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !finite(p.V) {
				continue
			}
			if !ok || p.T.Before(origin) {
				origin = p.T
			}
			if !ok || p.T.After(last) {
				last = p.T
			}
			lo, hi, ok = math.Min(lo, p.V), math.Max(hi, p.V), true
		}
	}
	if !c.Start.IsZero() && c.Start.Before(origin) {
		origin = c.Start
	}
	if c.End.After(last) {
		last = c.End
	}
	return origin, last.Sub(origin).Seconds(), lo, hi, ok
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// ticks are an axis' labelled values, from min to max, the ends of the axis.
type ticks struct {
	at       []float64
	labels   []string
	min, max float64
}

// valueTicks spans lo..hi, and always 0, with 3 to 7 round ticks labelled in one scale of
// the unit: 0, 100MiB, 200MiB, ... or 0, 1ms, 2ms, ...
func valueTicks(lo, hi float64, unit string) ticks {
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	div, suffix := scale(unit, math.Max(-lo, hi))
	lo, hi = lo/div, hi/div
	if hi == lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var t ticks
	for k := first; k <= last; k++ {
		label := strconv.FormatFloat(k*step, 'f', decimals, 64)
		if k == 0 {
			label = "0"
		} else {
			label += suffix
		}
		t.at, t.labels = append(t.at, k*step*div), append(t.labels, label)
	}
	t.min, t.max = first*step*div, last*step*div
	return t
}

// niceStep is the smallest 1, 2 or 5 × 10^k not below raw.
func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// scale is the divisor and suffix that label values up to vmax of a unit: seconds as s, ms
// or µs, bytes in IEC units, anything else with k, M or G.
func scale(unit string, vmax float64) (float64, string) {
	type step struct {
		div    float64
		suffix string
	}
	var steps []step // largest first; the last one applies to anything smaller
	switch unit {
	case "s":
		steps = []step{{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}}
	case "bytes":
		steps = []step{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}, {1, "B"}}
	default:
		steps = []step{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}
	}
	for _, s := range steps {
		if vmax >= s.div {
			return s.div, s.suffix
		}
	}
	last := steps[len(steps)-1]
	return last.div, last.suffix
}

// formatValue writes one value with four significant digits in its own scale: "30.09k",
// "4.4ms", "310MiB".
func formatValue(v float64, unit string) string {
	div, suffix := scale(unit, math.Abs(v))
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v/div, 'g', 4, 64) + suffix
}

// timeTicks labels 0..span seconds since the start at round durations, at most 7 of them.
func timeTicks(span float64) ticks {
	span = math.Max(span, 1)
	step := 86400 * math.Ceil(span/6/86400)
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200} {
		if span/s <= 6 {
			step = s
			break
		}
	}
	t := ticks{max: span}
	for s := 0.0; s <= span+1e-9; s += step {
		t.at, t.labels = append(t.at, s), append(t.labels, formatElapsed(s))
	}
	return t
}

// formatElapsed writes whole seconds as a short duration: "0s", "45s", "1m30s", "2m", "1h".
func formatElapsed(s float64) string {
	return config.ShortDuration(time.Duration(math.Round(s)) * time.Second)
}

// charts builds the report's charts from the timelines.
func charts(r *results.Run) []chart {
	type def struct {
		title, unit string
		get         func(s *results.Storage) []chartPoint
	}
	writePts := func(f func(results.WritePoint) float64) func(*results.Storage) []chartPoint {
		return func(s *results.Storage) []chartPoint {
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
	queryPts := func(f func(results.QueryPoint) *float64) func(*results.Storage) []chartPoint {
		return func(s *results.Storage) []chartPoint {
			if s.Query == nil {
				return nil
			}
			var out []chartPoint
			for _, p := range s.Query.Timeline {
				t, err := time.Parse(time.RFC3339Nano, p.Time)
				if v := f(p); v != nil && err == nil { // no latency in an interval where nothing completed
					out = append(out, chartPoint{t, *v})
				}
			}
			return out
		}
	}
	resPts := func(f func(results.ResourcePoint) *float64) func(*results.Storage) []chartPoint {
		return func(s *results.Storage) []chartPoint {
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
		{"ingestion rate", "samples/s", writePts(func(p results.WritePoint) float64 { return p.SamplesPerSecs })},
		{"lag", "s", writePts(func(p results.WritePoint) float64 { return p.LagSeconds })},
		{"pending", "samples", writePts(func(p results.WritePoint) float64 { return float64(p.Pending) })},
		{"dropped", "samples", writePts(func(p results.WritePoint) float64 { return float64(p.Dropped) })},
		{"query latency p50", "s", queryPts(func(p results.QueryPoint) *float64 { return p.P50 })},
		{"query latency p99", "s", queryPts(func(p results.QueryPoint) *float64 { return p.P99 })},
		{"query errors", "errors", queryPts(func(p results.QueryPoint) *float64 { return new(float64(p.Errors)) })},
		{"CPU", "cores", resPts(func(p results.ResourcePoint) *float64 { return peak(p.CPUCores, p.Max, cpuOf) })},
		{"RSS", "bytes", resPts(func(p results.ResourcePoint) *float64 { return peak(p.RSSBytes, p.Max, rssOf) })},
		{"disk", "bytes", resPts(func(p results.ResourcePoint) *float64 { return p.DiskBytes })},
		{"bytes per sample", "bytes", resPts(func(p results.ResourcePoint) *float64 { return p.BytesPerSample })},
	}
	var out []chart
	for _, d := range defs {
		c := chart{Title: d.title, Unit: d.unit, Start: r.StartTime}
		if r.Workload.Series != nil {
			c.Events = r.Workload.Series.Events
		}
		for i := range r.Storages {
			c.Series = append(c.Series, chartSeries{Name: r.Storages[i].Name, Points: d.get(&r.Storages[i])})
		}
		out = append(out, c)
	}
	for _, c := range seriesCharts(r) {
		c.Events = r.Workload.Series.Events
		out = append(out, c)
	}
	out = slices.Concat(out, checkCharts(r), freshnessCharts(r))
	for i := range out { // one x axis for every chart of the run (issue 39)
		out[i].Start, out[i].End = r.StartTime, r.EndTime
	}
	if r.Workload.HistorySeconds > 0 { // without history, data held is the run's time: the chart above again
		out = slices.Insert(out, slices.IndexFunc(out, func(c chart) bool { return c.Title == "bytes per sample" })+1, heldChart(r))
	}
	return out
}

// heldChart plots bytes per sample against how much of the workload's time each storage
// holds (issue 12): at each observation, the samples it had acked over the target rate (the
// few staleness markers of churn counted in). With history, the first point already holds
// most of it; without, it is the run's time, and charts leaves it out.
func heldChart(r *results.Run) chart {
	origin := r.StartTime.Add(-time.Duration(r.Workload.HistorySeconds * float64(time.Second)))
	c := chart{Title: "bytes per sample by data held", Unit: "bytes", Start: origin, Held: true}
	for i := range r.Storages {
		s := &r.Storages[i]
		var pts []chartPoint
		if s.Resources != nil && s.Write != nil && s.Write.TargetSamplesPerSecond > 0 {
			for _, p := range s.Resources.Timeline {
				if p.BytesPerSample == nil || p.AckedSamples <= 0 {
					continue
				}
				held := float64(p.AckedSamples) / s.Write.TargetSamplesPerSecond
				pts = append(pts, chartPoint{origin.Add(time.Duration(held * float64(time.Second))), *p.BytesPerSample})
			}
		}
		c.Series = append(c.Series, chartSeries{Name: s.Name, Points: pts})
	}
	return c
}
