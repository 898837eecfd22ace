package report

import (
	"bytes"
	"encoding/xml"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

// svgDoc is what the tests read of a chart's SVG.
type svgDoc struct {
	Rects []struct {
		Class string  `xml:"class,attr"`
		Y     float64 `xml:"y,attr"`
	} `xml:"rect"`
	Texts []struct {
		Class  string  `xml:"class,attr"`
		Anchor string  `xml:"text-anchor,attr"`
		Y      float64 `xml:"y,attr"`
		Text   string  `xml:",chardata"`
	} `xml:"text"`
	Lines []struct {
		Series string `xml:"data-series,attr"`
		Width  string `xml:"stroke-width,attr"`
		Dash   string `xml:"stroke-dasharray,attr"`
		Points string `xml:"points,attr"`
	} `xml:"polyline"`
}

func parseSVG(t *testing.T, c chart) svgDoc {
	t.Helper()
	var doc svgDoc
	if err := xml.Unmarshal([]byte(c.svg()), &doc); err != nil {
		t.Fatalf("%v\n%s", err, c.svg())
	}
	return doc
}

// xTicks are the x axis' tick labels: the "tick" texts centred on their tick.
func (d svgDoc) xTicks() []string {
	var out []string
	for _, x := range d.Texts {
		if x.Class == "tick" && x.Anchor == "middle" {
			out = append(out, x.Text)
		}
	}
	return out
}

// texts are the contents of the chart's <text> elements of one class.
func (d svgDoc) texts(class string) []string {
	var out []string
	for _, x := range d.Texts {
		if x.Class == class {
			out = append(out, x.Text)
		}
	}
	return out
}

func (d svgDoc) plotTop(t *testing.T) float64 {
	t.Helper()
	for _, r := range d.Rects {
		if r.Class == "plot" {
			return r.Y
		}
	}
	t.Fatal("no plot area")
	return 0
}

// twoStorages is a chart where both storages ingest exactly the same, 3 minutes from start.
func twoStorages(unit string, v func(i int) float64) chart {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c := chart{Title: "ingestion rate", Unit: unit, Start: start}
	for _, name := range []string{"prometheus", "victoriametrics"} {
		s := chartSeries{Name: name}
		for i := 1; i <= 18; i++ {
			s.Points = append(s.Points, chartPoint{start.Add(time.Duration(i) * 10 * time.Second), v(i)})
		}
		c.Series = append(c.Series, s)
	}
	return c
}

func TestChartLegendAboveThePlot(t *testing.T) {
	doc := parseSVG(t, twoStorages("samples/s", func(int) float64 { return 30_000 }))
	top := doc.plotTop(t)
	legend := 0
	for _, x := range doc.Texts {
		if x.Class == "legend" {
			legend++
			if x.Y >= top {
				t.Errorf("legend %q at y=%v, inside the plot from y=%v", x.Text, x.Y, top)
			}
		}
	}
	if legend != 2 {
		t.Errorf("%d legend entries, want 2", legend)
	}
}

func TestChartOverlappingSeriesStayVisible(t *testing.T) {
	doc := parseSVG(t, twoStorages("samples/s", func(i int) float64 { return 30_000 + float64(i%3)*100 }))
	if len(doc.Lines) != 2 || doc.Lines[0].Points != doc.Lines[1].Points {
		t.Fatalf("want two lines on the same points: %+v", doc.Lines)
	}
	first, second := doc.Lines[0], doc.Lines[1]
	if first.Dash != "" || second.Dash == "" || first.Width <= second.Width {
		t.Errorf("the first line must be solid and wider, the second dashed on top: %+v", doc.Lines)
	}
	want := []string{"prometheus: mean 30.1k, max 30.2k", "victoriametrics: mean 30.1k, max 30.2k"}
	if diff := cmp.Diff(want, doc.texts("legend")); diff != "" {
		t.Errorf("legend (-want +got):\n%s", diff)
	}
}

func TestChartTicks(t *testing.T) {
	for name, tc := range map[string]struct {
		unit  string
		value float64
		want  []string // y ticks, then x ticks
	}{
		"latency": {"s", 0.0044, []string{"0", "1ms", "2ms", "3ms", "4ms", "5ms", "0s", "30s", "1m", "1m30s", "2m", "2m30s", "3m"}},
		"rss":     {"bytes", 325 << 20, []string{"0", "100MiB", "200MiB", "300MiB", "400MiB", "0s", "30s", "1m", "1m30s", "2m", "2m30s", "3m"}},
		"rate":    {"samples/s", 30_200, []string{"0", "10k", "20k", "30k", "40k", "0s", "30s", "1m", "1m30s", "2m", "2m30s", "3m"}},
		"zero":    {"samples", 0, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0", "0s", "30s", "1m", "1m30s", "2m", "2m30s", "3m"}},
		"cores":   {"cores", 0.294, []string{"0", "0.1", "0.2", "0.3", "0s", "30s", "1m", "1m30s", "2m", "2m30s", "3m"}},
	} {
		t.Run(name, func(t *testing.T) {
			doc := parseSVG(t, twoStorages(tc.unit, func(int) float64 { return tc.value }))
			if diff := cmp.Diff(tc.want, doc.texts("tick")); diff != "" {
				t.Errorf("ticks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimeTicksOfLongRuns(t *testing.T) {
	for span, want := range map[float64][]string{
		7200:  {"0s", "30m", "1h", "1h30m", "2h"},
		86400: {"0s", "6h", "12h", "18h", "24h"},
		0:     {"0s", "1s"},
	} {
		if diff := cmp.Diff(want, timeTicks(span).labels); diff != "" {
			t.Errorf("%vs (-want +got):\n%s", span, diff)
		}
	}
}

func TestChartWithoutData(t *testing.T) {
	c := twoStorages("s", func(int) float64 { return 1 })
	c.Series[0].Points = nil
	doc := parseSVG(t, c)
	if len(doc.Lines) != 1 || doc.Lines[0].Series != "victoriametrics" {
		t.Errorf("want only victoriametrics' line: %+v", doc.Lines)
	}
	if got := doc.texts("legend")[0]; got != "prometheus: no data" {
		t.Errorf("legend %q", got)
	}
	for i := range c.Series {
		c.Series[i].Points = nil
	}
	doc = parseSVG(t, c)
	if doc.plotTop(t) == 0 || len(doc.Lines) != 0 || len(doc.texts("nodata")) != 1 {
		t.Errorf("an empty chart draws its plot area and says it has no data: %+v", doc)
	}
}

// TestHTMLShowsWhatTheSummaryShows: the storage's problems, threshold values, slowest
// queries and read-back verdicts are on the page, not only in the terminal.
func TestHTMLShowsWhatTheSummaryShows(t *testing.T) {
	r := fixture()
	r.Storages[1].Problems = []string{"exited with status 2 at 12:01:10Z"}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{
		"Problem with victoriametrics: exited with status 2 at 12:01:10Z",
		"✗ prometheus: query.p99 < 100ms (is 120ms)",
		"✓ victoriametrics: query.p99 < 100ms (is 45ms)",
		"<td>prometheus</td><td class=\"text\">instant</td><td class=\"text\">NodeDiskWillFillIn24h</td><td>0.120</td>",
		"prometheus: returns exactly what it was given (10800 samples",
		"victoriametrics: 10800 samples checked: 6293 values changed",
		"tsbench itself used 0.050 cores on average",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// A storage without the query API shows on the page as in the summary: what its readURL
// answered, and that its read-back went through remote read.
func TestHTMLNoQueryAPI(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, withoutQueryAPI()); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{
		"victoriametrics: no query API at http://127.0.0.1:8086/?u=admin&p=<secret> (answered http_404 (http 404): 404 page not found)",
		"victoriametrics (through remote read): 10800 samples checked: 12 NaN dropped or altered, 40 of 40 staleness markers not stored",
		"no query API</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// The live page (issue 31) is report.html's page with a banner at its top and a meta
// refresh, nothing else: take both away and the bytes are report.html's.
func TestLiveHTMLIsTheReportWithABanner(t *testing.T) {
	r := fixture()
	var end, live bytes.Buffer
	if err := WriteHTML(&end, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteLiveHTML(&live, r, "live: run in progress <now>", 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(end.String(), "refresh") || strings.Contains(end.String(), `class="live"`) {
		t.Error("report.html has the live page's refresh or banner")
	}
	refresh := "<meta http-equiv=\"refresh\" content=\"2\">\n"
	banner := "<p class=\"live\" style=\"padding:8px 12px;background:#fff4d6;border:1px solid #e0b84c\">live: run in progress &lt;now&gt;</p>\n"
	for _, part := range []string{refresh, banner} {
		if !strings.Contains(live.String(), part) {
			t.Errorf("the live page lacks %q", part)
		}
	}
	got := strings.Replace(strings.Replace(live.String(), refresh, "", 1), banner, "", 1)
	if diff := cmp.Diff(end.String(), got); diff != "" {
		t.Errorf("the live page less its banner and refresh is not report.html (-want +got):\n%s", diff)
	}
}

// renderPage is report.html of r, its entities unescaped.
func renderPage(t *testing.T, r *results.Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return html.UnescapeString(b.String())
}

// A value equal to another at the printed precision is no best (issue 35: latency p50
// 0.003 vs 0.003 was painted best): neither bold green nor "*".
func TestTieAtThePrintedPrecisionIsNoBest(t *testing.T) {
	r := fixture()
	r.Storages[0].Query.LatencySeconds.P50 = new(0.0031)
	r.Storages[1].Query.LatencySeconds.P50 = new(0.0034)
	page := renderPage(t, r)
	if want := "<tr><td>latency p50 (s)</td><td>0.003</td><td>0.003</td></tr>"; !strings.Contains(page, want) {
		t.Errorf("report.html lacks %q", want)
	}
	if want := "<tr><td>cpu cores mean</td><td>0.210</td><td class=\"best\">0.080</td></tr>"; !strings.Contains(page, want) {
		t.Errorf("report.html lacks %q: a best that is one is still marked", want)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^latency p50 \(s\) +0\.003 +0\.003$`).MatchString(b.String()) {
		t.Errorf("the summary marks a tie at the printed precision:\n%s", b.String())
	}
}

// report.html names the rules that differ as the summary does: per storage, the first
// maxRuleDiffs with their detail, how many more, and the rules not compared.
func TestHTMLNamesTheRulesThatDiffer(t *testing.T) {
	page := renderPage(t, fixture())
	for _, want := range []string{
		"<h2>Rules whose range-query results differ across storages</h2>",
		`<li class="note">prometheus: 1<ul><li>NodeClockNotSynchronising: vs victoriametrics: 2 series only in victoriametrics</li></ul></li>`,
		`<li class="note">victoriametrics: 7<ul><li>NodeClockNotSynchronising: vs prometheus: 1 series differ (max relative error 3e-9)</li>`,
		"<li>NodeLoad15High: vs prometheus: 5 series differ (max relative error 3e-13)</li><li>… and 2 more</li></ul>",
		"<summary>2 rules not compared: the data written is shorter than their windows (run longer, or set history, to compare them)</summary><p>" +
			"NodeDiskWillFillIn24h (needs 6h0m0s of data), NodeCPUSaturatedForHours (needs 3h0m0s of data)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(page, "NodeMemoryHighUtilization") {
		t.Errorf("the 6th rule difference is listed, want at most %d per storage", maxRuleDiffs)
	}
}

// The read-back verdict is coloured by what it says of the data (issue 35): a difference of
// a few ulp is amber, not the red of lost or wrong data.
func TestReadBackVerdictSeverity(t *testing.T) {
	rounding := func() *results.Verify {
		return &results.Verify{CheckedSamples: 10_907, ChangedValues: 13, MaxRelativeError: 2.22e-16, ReadBackVia: "queryAPI"}
	}
	for name, tc := range map[string]struct {
		change func(v *results.Verify)
		want   severity
	}{
		"exact":                     {func(v *results.Verify) { v.ChangedValues, v.MaxRelativeError = 0, 0 }, sevOK},
		"1 ulp":                     {func(*results.Verify) {}, sevNote},
		"4 ulp":                     {func(v *results.Verify) { v.MaxRelativeError = 4 * 0x1p-52 }, sevNote},
		"a relative error of 1e-12": {func(v *results.Verify) { v.MaxRelativeError = 1e-12 }, sevFail},
		"a 0 returned as 1":         {func(v *results.Verify) { v.ChangedWithoutRelativeError = 1 }, sevFail},
		"and NaN altered":           {func(v *results.Verify) { v.NaNAltered = 39 }, sevFail},
		"and a sample missing":      {func(v *results.Verify) { v.MissingSamples = 1 }, sevFail},
		"and a read failed":         {func(v *results.Verify) { v.ReadErrors = 1 }, sevFail},
		"and changed in the checks during the run": {func(v *results.Verify) {
			v.Continuous = &results.Continuous{Total: results.Check{Checks: 1, Checked: 100, Changed: 2}}
		}, sevFail},
	} {
		t.Run(name, func(t *testing.T) {
			v := rounding()
			tc.change(v)
			got := readBackVerdict(&results.Storage{Name: "vm", Verify: v})
			if got.Class != tc.want {
				t.Errorf("%s: %q, want %s", got.Class, got.Text, tc.want)
			}
			if rounded := strings.Contains(got.Text, "float rounding"); rounded != (tc.want == sevNote) {
				t.Errorf("the verdict %q says float rounding: %v, want %v", got.Text, rounded, tc.want == sevNote)
			}
		})
	}
	r := fixture()
	r.Storages[1].Verify = rounding()
	want := `<li class="note">victoriametrics: 10907 samples checked: 13 values changed (max relative error 2.22e-16): float rounding of a few ulp (relative error at most 8.9e-16), no value lost or wrong</li>`
	if page := renderPage(t, r); !strings.Contains(page, want) {
		t.Errorf("report.html lacks %q", want)
	}
}

// Every point of a chart carries its storage, clock time, time since the start and value
// as a tooltip (an SVG title: no script), on a marker whose shape is its series' own
// (issue 39).
func TestChartPointsHaveTooltipsAndMarkers(t *testing.T) {
	var doc struct {
		Circles []struct {
			Class string `xml:"class,attr"`
			Title string `xml:"title"`
		} `xml:"circle"`
		Rects []struct {
			Class string `xml:"class,attr"`
			Title string `xml:"title"`
		} `xml:"rect"`
	}
	c := twoStorages("samples/s", func(i int) float64 { return 30_000 + float64(i%3)*100 })
	if err := xml.Unmarshal([]byte(c.svg()), &doc); err != nil {
		t.Fatal(err)
	}
	var circles, squares []string
	for _, m := range doc.Circles {
		circles = append(circles, m.Title)
	}
	for _, m := range doc.Rects {
		if m.Class == "marker" {
			squares = append(squares, m.Title)
		}
	}
	// 18 points each, and one marker in the legend.
	if len(circles) != 19 || len(squares) != 19 {
		t.Fatalf("%d circles and %d squares, want 19 each: prometheus' markers are circles, victoriametrics' squares", len(circles), len(squares))
	}
	for _, want := range []string{
		"prometheus 12:00:10Z (+10s): 30.1k samples/s",
		"prometheus 12:03:00Z (+3m): 30k samples/s",
	} {
		if !slices.Contains(circles, want) {
			t.Errorf("no point's tooltip is %q: %q", want, circles)
		}
	}
	if want := "victoriametrics 12:01:30Z (+1m30s): 30k samples/s"; !slices.Contains(squares, want) {
		t.Errorf("no point's tooltip is %q: %q", want, squares)
	}
	clocks := parseSVG(t, c).texts("clock")
	if diff := cmp.Diff([]string{"12:00:00Z", "12:00:30Z", "12:01:00Z", "12:01:30Z", "12:02:00Z", "12:02:30Z", "12:03:00Z"}, clocks); diff != "" {
		t.Errorf("clock times under the x ticks (-want +got):\n%s", diff)
	}
}

// Every chart of a run spans the run, start to end, whatever its own points cover (issue
// 39: the latency charts ended at 1m15s where the others ended at 1m30s), and "bytes per
// sample by data held" is drawn only with history: without, it is "bytes per sample" again.
func TestChartsOfARunShareOneXAxis(t *testing.T) {
	r := fixture()
	for i := range r.Storages {
		q := r.Storages[i].Query
		q.Timeline = q.Timeline[:len(q.Timeline)-3] // no query completed in the last 30s
	}
	var titles []string
	for _, c := range charts(r) {
		titles = append(titles, c.Title)
		if diff := cmp.Diff([]string{"0s", "30s", "1m", "1m30s", "2m", "2m30s", "3m"}, parseSVG(t, c).xTicks()); diff != "" {
			t.Errorf("chart %q: x ticks (-want +got):\n%s", c.Title, diff)
		}
	}
	if slices.Contains(titles, "bytes per sample by data held") {
		t.Errorf("a run without history has the held chart: %q", titles)
	}
	r.Workload.HistorySeconds = 3600
	var held *chart
	for _, c := range charts(r) {
		if c.Title == "bytes per sample by data held" {
			held = &c
		}
	}
	if held == nil || !held.Held {
		t.Fatalf("a run with history has no held chart, or it is drawn over the clock: %+v", held)
	}
	if clocks := parseSVG(t, *held).texts("clock"); len(clocks) != 0 {
		t.Errorf("the held chart's x axis is data held, not the clock: %q", clocks)
	}
}

// A probe's answer wraps between labels, never inside one (issue 39: "revisi on").
func TestProbeAnswersBreakBetweenLabels(t *testing.T) {
	got := breakable(`vector {instance="host-0",job="node_exporter"} 0.25@1795435380.001 <&>`)
	want := `vector {<wbr>instance=&#34;host-0&#34;,<wbr>job=&#34;node_exporter&#34;} 0.25@1795435380.001 &lt;&amp;&gt;`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// A long run's series (540 points in a 488px plot) draws no markers, where they would merge
// into a band; its line keeps every point, and its tooltips one point per hoverSpacing.
func TestDenseSeriesKeepTooltipsPerPixels(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := chartSeries{Name: "prometheus"}
	for i := range 540 {
		s.Points = append(s.Points, chartPoint{start.Add(time.Duration(i) * 10 * time.Second), float64(i % 7)})
	}
	var doc struct {
		Circles []struct {
			Opacity string `xml:"stroke-opacity,attr"`
		} `xml:"circle"`
	}
	c := chart{Title: "lag", Unit: "s", Start: start, Series: []chartSeries{s}}
	if err := xml.Unmarshal([]byte(c.svg()), &doc); err != nil {
		t.Fatal(err)
	}
	hidden := 0
	for _, m := range doc.Circles {
		if m.Opacity == "0" {
			hidden++
		}
	}
	plot := chartWidth - plotLeft - plotRight
	if most := int(plot/hoverSpacing) + 1; hidden < most/2 || hidden > most || len(doc.Circles) != hidden+1 {
		t.Errorf("%d transparent markers of %d (one is the legend's), want one per %g to %gpx: %d to %d", hidden, len(doc.Circles), hoverSpacing, 2*hoverSpacing, most/2, most)
	}
	if n := len(strings.Fields(parseSVG(t, c).Lines[0].Points)); n != 540 {
		t.Errorf("the line has %d points, want 540", n)
	}
}
