package report

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromiumOwnHosts are the hosts Chromium itself calls (updates, accounts, time) even with
// background networking off; a request to any other host came from the page.
var chromiumOwnHosts = regexp.MustCompile(`(^|\.)(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)$`)

// TestReportInBrowser opens report.html in headless Chromium with networking cut, fails on
// any console message or request from the page, checks every chart drew its lines, and saves
// a screenshot (its path is logged; TSBENCH_SCREENSHOT=path keeps a copy).
func TestReportInBrowser(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not installed: make deps-browser installs it")
		}
		t.Skip("chromium not installed")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var html bytes.Buffer
	r := loadFixture(t, "full", fixture)
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot, netlog := filepath.Join(dir, "report.png"), filepath.Join(dir, "net.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--proxy-server=127.0.0.1:9",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
		"--log-net-log="+netlog, "--screenshot="+shot, "--window-size=1280,3200", "--hide-scrollbars",
		"file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	for _, u := range requestedURLs(t, netlog) {
		if pu, err := url.Parse(u); err == nil && (pu.Scheme == "file" || pu.Scheme == "data" || chromiumOwnHosts.MatchString(pu.Hostname())) {
			continue
		}
		t.Errorf("the page made a network request: %s", u)
	}

	// Every chart has points, and the screenshot shows each storage's line colour.
	counts := regexp.MustCompile(`class="chart" data-points="(\d+)"`).FindAllStringSubmatch(html.String(), -1)
	if len(counts) != 11 {
		t.Errorf("%d charts, want 11", len(counts))
	}
	for i, c := range counts {
		if n, _ := strconv.Atoi(c[1]); n == 0 {
			t.Errorf("chart %d has no data", i)
		}
	}
	img := decodePNG(t, shot)
	for i, s := range r.Storages {
		if n := colourPixels(img, palette[i]); n < 500 {
			t.Errorf("%s's colour %s covers %d pixels of the screenshot: its lines were not drawn", s.Name, palette[i], n)
		}
	}
	if keep := os.Getenv("TSBENCH_SCREENSHOT"); keep != "" {
		b, _ := os.ReadFile(shot)
		if err := os.WriteFile(keep, b, 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Logf("screenshot: %s", shot)
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
	var urls []string
	for _, e := range log.Events {
		if u, ok := e.Params["url"].(string); ok {
			urls = append(urls, u)
		}
	}
	return urls
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// colourPixels counts pixels within a small distance of a #rrggbb colour.
func colourPixels(img image.Image, hex string) int {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	want := [3]int{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			got := [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
			d := 0
			for i := range 3 {
				d += abs(got[i] - want[i])
			}
			if d < 40 {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
