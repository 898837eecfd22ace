//go:build linux

package report

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// reportCharts are the charts the issue asks for, in page order ("bytes per sample by data
// held" only with history).
var reportCharts = []string{
	"ingestion rate", "lag", "pending", "dropped", "query latency p50", "query latency p99",
	"query errors", "CPU", "RSS", "disk", "bytes per sample",
	"freshness, instant query: slowest per interval", "freshness, range query, last 5m: slowest per interval",
	"freshness, /api/v1/series: slowest per interval", "freshness: samples never seen, all probes",
}

// TestReportInBrowser opens report.html in headless Chromium inside a network namespace of
// its own (no network at all), fails on any console message and on any request but the page
// itself, checks in the rendered page that every chart drew a line for every storage, and
// saves a screenshot (its path is logged; TSBENCH_SCREENSHOT=path keeps a copy).
func TestReportInBrowser(t *testing.T) {
	bin := chromium(t)
	r := loadFixture(t, "full", fixture)
	page := renderHTML(t, r)
	got := openInBrowser(t, bin, "report", page)
	shot := cropped(t, got.shot)
	for _, p := range slices.Concat(got.pageProblems(), chartProblems(got.dom, shot, r)) {
		t.Error(p)
	}
	// The side-by-side table uses the page's width (issue 39: 420px of 1200): in its first
	// rows, under the status lines and what the run says, a row's borders run across most
	// of the page.
	if w := widestBorder(shot, 1000); w < 900 {
		t.Errorf("the table's rows in the top 1000px of the page are %dpx wide at most, want 900px or more of the 1200px page", w)
	}
	path := filepath.Join(t.TempDir(), "report.png")
	savePNG(t, path, shot)
	if keep := os.Getenv("TSBENCH_SCREENSHOT"); keep != "" {
		savePNG(t, keep, shot)
	}
	t.Logf("screenshot: %s (%dx%d)", path, shot.Bounds().Dx(), shot.Bounds().Dy())

	// The checks above must be able to fail: a page that fetches from outside, and charts
	// without data, are caught. These three browsers run at once, after the one above.
	t.Run("outside font and image", func(t *testing.T) {
		t.Parallel()
		font, img := "https://fonts.googleapis.com/css2?family=Roboto", "http://127.0.0.1:1/x.png"
		outside := strings.Replace(strings.Replace(string(page), "</head>", `<link rel="stylesheet" href="`+font+`"></head>`, 1),
			"<body>", `<body><img src="`+img+`">`, 1)
		csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`)
		for name, tc := range map[string]struct{ html, caught string }{
			"blocked by the CSP": {outside, "console message"}, // the CSP's refusal is logged
			"without the CSP":    {csp.ReplaceAllString(outside, ""), "the page made a request"},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				problems := openInBrowser(t, bin, "outside", []byte(tc.html)).pageProblems()
				for _, u := range []string{font, img} {
					if !mentions(problems, tc.caught, u) {
						t.Errorf("no %q names %s: %q", tc.caught, u, problems)
					}
				}
			})
		}
	})
	t.Run("charts without data", func(t *testing.T) {
		t.Parallel()
		r := loadFixture(t, "full", fixture)
		for i := range r.Storages[0].Resources.Timeline {
			r.Storages[0].Resources.Timeline[i].CPUCores = nil // CPU: only the second storage
		}
		for i := range r.Storages {
			r.Storages[i].Query.Timeline = nil // query charts: empty
		}
		got := openInBrowser(t, bin, "nodata", renderHTML(t, r))
		problems := chartProblems(got.dom, cropped(t, got.shot), r)
		prom, vm := r.Storages[0].Name, r.Storages[1].Name
		for _, want := range [][]string{
			{`"CPU"`, prom, "points"},
			{`"CPU"`, prom, "pixels"},
			{`"query latency p99"`, vm, "points"},
			{`"query latency p99"`, vm, "pixels"},
		} {
			if !mentions(problems, want...) {
				t.Errorf("no problem names %q: %q", want, problems)
			}
		}
		if mentions(problems, `"CPU"`, vm) {
			t.Errorf("%s's CPU line was drawn but is reported missing: %q", vm, problems)
		}
	})
}

// chromium is Debian's chromium and a way to run it without network, or skips the test
// (fails it under CI=true) when either is missing.
func chromium(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		unavailable(t, "chromium not installed: make deps-browser installs it")
	}
	if err := offline(exec.Command("true")).Run(); err != nil {
		unavailable(t, "cannot make a network namespace to run chromium offline: %v", err)
	}
	return bin
}

func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// offline runs cmd in a network namespace of its own: it has only a loopback interface,
// and that is down, so nothing the page asks for can reach any host, not even this one.
// Root makes the namespace directly; anyone else inside a user namespace.
func offline(cmd *exec.Cmd) *exec.Cmd {
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
	return cmd
}

func renderHTML(t *testing.T, r *results.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// browserRun is what Chromium made of a page.
type browserRun struct {
	url      string   // the page's own file:// URL
	console  []string // console messages
	requests []string // every URL in the net log
	dom      string   // the page's DOM after load
	shot     string   // the screenshot's path
}

// openInBrowser writes page to the test's temp dir as NAME.html and loads it in Chromium
// offline, with a window taller than the page.
func openInBrowser(t *testing.T, bin, name string, page []byte) browserRun {
	t.Helper()
	dir := t.TempDir()
	path, netlog, shot := filepath.Join(dir, name+".html"), filepath.Join(dir, "net.json"), filepath.Join(dir, "shot.png")
	// Chromium fetches the on-device models' manifest on demand even with component
	// updates off; an override file that names no model is the one switch that stops it.
	models := filepath.Join(dir, "no-models.json")
	for file, b := range map[string][]byte{path: page, models: []byte(`{"components":{}}`)} {
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := browserRun{url: "file://" + path, shot: shot}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Chromium's own background calls (network time, component and dictionary updates)
	// are switched off, so every request in the net log came from the page.
	cmd := offline(exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-features=NetworkTimeServiceQuerying", "--optimization-guide-manifest-override="+models,
		"--user-data-dir="+filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0",
		"--log-net-log="+netlog, "--screenshot="+shot, "--dump-dom", "--window-size=1280,5600", "--hide-scrollbars",
		run.url))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	own, err1 := os.Readlink("/proc/self/ns/net")
	its, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
	if err1 != nil || err2 != nil || own == its {
		_ = cmd.Process.Kill()
		t.Fatalf("chromium is not in a network namespace of its own: ours %q %v, its %q %v", own, err1, its, err2)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			run.console = append(run.console, line)
		}
	}
	run.requests = requestedURLs(t, netlog)
	run.dom = stdout.String()
	return run
}

// savePNG writes img to path; fast compression, as the race detector slows encoding ten-fold.
func savePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pageProblems are console messages and requests for anything but the page itself.
// Chromium's own pages (source chrome://...) log to the console too, headless or not; a
// file:// page cannot load them, so their messages are not the report's.
func (b browserRun) pageProblems() []string {
	var out []string
	for _, c := range b.console {
		if !strings.Contains(c, `", source: chrome://`) {
			out = append(out, "console message: "+c)
		}
	}
	for _, u := range b.requests {
		if u != b.url {
			out = append(out, "the page made a request: "+u)
		}
	}
	return out
}

// requestedURLs lists every URL in a Chromium net log.
func requestedURLs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Events []struct {
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	// Chromium may leave the log without its closing bracket when it exits at once.
	if err := json.Unmarshal(b, &log); err != nil {
		if err := json.Unmarshal(append(bytes.TrimRight(b, ",\n"), "]}"...), &log); err != nil {
			t.Fatalf("net log: %v", err)
		}
	}
	if len(log.Events) == 0 {
		t.Fatalf("net log %s has no events: was it written?", path)
	}
	var urls []string
	for _, e := range log.Events {
		for k, v := range e.Params {
			if u, ok := v.(string); ok && strings.HasSuffix(strings.ToLower(k), "url") && !slices.Contains(urls, u) {
				urls = append(urls, u)
			}
		}
	}
	return urls
}

// svgChart is what the checks read of a chart in the rendered DOM.
type svgChart struct {
	Title string `xml:"data-title,attr"`
	Lines []struct {
		Series string `xml:"data-series,attr"`
		Points string `xml:"points,attr"`
	} `xml:"polyline"`
}

// chartProblems checks the rendered page: the charts are those of reportCharts, each has a
// line of at least two points per storage in its DOM, and each storage's colour covers
// pixels inside that chart's own plot area in the screenshot (legends are outside it).
func chartProblems(dom string, shot *image.RGBA, r *results.Run) []string {
	var out []string
	var charts []svgChart
	for _, s := range regexp.MustCompile(`(?s)<svg[^>]*class="chart".*?</svg>`).FindAllString(dom, -1) {
		var c svgChart
		dec := xml.NewDecoder(strings.NewReader(s))
		dec.Strict, dec.Entity = false, xml.HTMLEntity
		if err := dec.Decode(&c); err != nil {
			out = append(out, fmt.Sprintf("chart %d: %v", len(charts), err))
		}
		charts = append(charts, c)
	}
	var titles []string
	for _, c := range charts {
		titles = append(titles, c.Title)
	}
	if !slices.Equal(titles, reportCharts) {
		out = append(out, fmt.Sprintf("charts %q, want %q", titles, reportCharts))
	}
	for _, c := range charts {
		for _, s := range r.Storages {
			n := 0
			for _, l := range c.Lines {
				if l.Series == s.Name {
					n = max(n, len(strings.Fields(l.Points)))
				}
			}
			if n < 2 {
				out = append(out, fmt.Sprintf("chart %q: %s's line has %d points in the DOM", c.Title, s.Name, n))
			}
		}
	}
	areas := plotAreas(shot)
	if len(areas) != len(charts) {
		return append(out, fmt.Sprintf("%d plot areas in the screenshot, %d charts in the DOM", len(areas), len(charts)))
	}
	for i, c := range charts {
		// 2px around the area: a line at 0 lies on the plot's edge.
		area := areas[i].Inset(-2)
		for j, s := range r.Storages {
			colour := palette[j%len(palette)]
			if n := colourPixels(shot, area, colour); n < 20 {
				out = append(out, fmt.Sprintf("chart %q: %s's colour %s covers %d pixels of its plot area %v", c.Title, s.Name, colour, n, area))
			}
		}
	}
	return out
}

// plotAreas finds the charts' plot areas in a screenshot, in page order: each is a region
// of non-white pixels (the background, grid, axes and lines drawn on it) that holds at
// least 200×100 pixels, mostly of plotBackground; its bounds are those of its background.
func plotAreas(img *image.RGBA) []image.Rectangle {
	bg, b := hexColour(plotBackground), img.Bounds()
	seen := make([]bool, b.Dx()*b.Dy())
	var areas []image.Rectangle
	for y := b.Min.Y; y < b.Max.Y; y += 8 { // every 8th row meets each area >100px tall
		for x := b.Min.X; x < b.Max.X; x++ {
			if seen[(y-b.Min.Y)*b.Dx()+x-b.Min.X] || !near(img, x, y, bg, 6) {
				continue
			}
			box, n := region(img, image.Pt(x, y), seen, bg)
			if box.Dx() >= 200 && box.Dy() >= 100 && n*10 >= box.Dx()*box.Dy()*8 {
				areas = append(areas, box)
			}
		}
	}
	slices.SortFunc(areas, func(a, b image.Rectangle) int { // page order: rows, then left to right
		if abs(a.Min.Y-b.Min.Y) > 4 {
			return cmp.Compare(a.Min.Y, b.Min.Y)
		}
		return cmp.Compare(a.Min.X, b.Min.X)
	})
	return areas
}

// region marks as seen the non-white pixels connected to start, and returns the bounds and
// count of those within a small distance of bg.
func region(img *image.RGBA, start image.Point, seen []bool, bg [3]int) (image.Rectangle, int) {
	b := img.Bounds()
	index := func(p image.Point) int { return (p.Y-b.Min.Y)*b.Dx() + p.X - b.Min.X }
	var box image.Rectangle
	n, stack := 0, []image.Point{start}
	seen[index(start)] = true
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if near(img, p.X, p.Y, bg, 6) {
			n++
			box = box.Union(image.Rectangle{p, p.Add(image.Pt(1, 1))})
		}
		for _, q := range []image.Point{p.Add(image.Pt(0, -1)), p.Add(image.Pt(0, 1)), p.Add(image.Pt(-1, 0)), p.Add(image.Pt(1, 0))} {
			if q.In(b) && !seen[index(q)] && !near(img, q.X, q.Y, white, 15) {
				seen[index(q)] = true
				stack = append(stack, q)
			}
		}
	}
	return box, n
}

var white = [3]int{255, 255, 255}

// cropped is the screenshot at path cut below the page's content. The window is taller
// and wider than the page should be: content at its bottom or right edge was cut.
func cropped(t *testing.T, path string) *image.RGBA {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	decoded, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := decoded.Bounds()
	img, ok := decoded.(*image.RGBA)
	if !ok {
		img = image.NewRGBA(b)
		draw.Draw(img, b, decoded, b.Min, draw.Src)
	}
	last := b.Max.Y - 1
	for last > b.Min.Y && blankRow(img, last) {
		last--
	}
	if last >= b.Max.Y-8 {
		t.Errorf("the page fills the %dpx window: the screenshot is cut", b.Dy())
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if !near(img, b.Max.X-1, y, white, 15) {
			t.Errorf("the page is wider than the %dpx window at y=%d: something overflows", b.Dx(), y)
			break
		}
	}
	return img.SubImage(image.Rect(b.Min.X, b.Min.Y, b.Max.X, min(b.Max.Y, last+24))).(*image.RGBA)
}

func blankRow(img *image.RGBA, y int) bool {
	for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
		if !near(img, x, y, white, 15) {
			return false
		}
	}
	return true
}

// widestBorder is the largest number of table border pixels (#e4e4e4) in one pixel row
// above y.
func widestBorder(img *image.RGBA, y int) int {
	border, widest := hexColour("#e4e4e4"), 0
	for row := img.Rect.Min.Y; row < min(y, img.Rect.Max.Y); row++ {
		n := 0
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			if near(img, x, row, border, 8) {
				n++
			}
		}
		widest = max(widest, n)
	}
	return widest
}

// colourPixels counts the pixels of area within a small distance of a #rrggbb colour.
func colourPixels(img *image.RGBA, area image.Rectangle, hex string) int {
	want, n := hexColour(hex), 0
	area = area.Intersect(img.Bounds())
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if near(img, x, y, want, 40) {
				n++
			}
		}
	}
	return n
}

func hexColour(hex string) [3]int {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	return [3]int{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
}

// near reports whether the pixel at x, y is within dist (the sum over R, G and B) of c.
func near(img *image.RGBA, x, y int, c [3]int, dist int) bool {
	px := img.Pix[img.PixOffset(x, y):]
	return abs(int(px[0])-c[0])+abs(int(px[1])-c[1])+abs(int(px[2])-c[2]) < dist
}

// mentions reports whether one of problems contains every part.
func mentions(problems []string, parts ...string) bool {
	return slices.ContainsFunc(problems, func(p string) bool {
		for _, part := range parts {
			if !strings.Contains(p, part) {
				return false
			}
		}
		return true
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
