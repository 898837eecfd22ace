//go:build linux

package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// TestLiveReportInBrowser runs tsbench in-process against an in-process Prometheus receiver
// and loads its live report (issue 31) from -httpListenAddr in headless Chromium twice: the
// page says the run is in progress, names the storage, draws a chart with a line, and the
// later load draws more points. The first is served before the load starts (its log line
// comes first; a bound of 10 s from the call was outrun on a busy machine), and shows
// nothing red and no "?" (issue 39: what is not measured yet says it waits). After the run
// has ended, the page still loads, for -liveGrace, and names the final report; the
// report.html written at the end has no live banner.
func TestLiveReportInBrowser(t *testing.T) {
	t.Parallel() // a 25 s run that mostly waits: beside the others
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not installed: make deps-browser installs it")
		}
		t.Skip("chromium not installed: make deps-browser installs it")
	}
	recv, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = recv.Close() })
	dir := t.TempDir()
	cfg := filepath.Join(dir, "live.yaml")
	// The page is updated at the start and with each progress line (every 10 s: at 10 s, at
	// 20 s, when the load stops at 25 s, and once the run has ended); an observation every
	// second gives its query charts a point every second.
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `duration: 25s
observeInterval: 1s
targetsCount: 2
scrapeInterval: 1s
queryInterval: 1s
verifySamples: 0
freshness: {interval: 0s}
remoteStorages:
  receiver: {writeURL: %s/api/v1/write, readURL: %s/}
`, recv.URL, recv.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"run", "-config", cfg, "-out", out, "-httpListenAddr", addr, "-liveGrace", "2m"}, &stdout, stderr)
	}()
	url := "http://" + addr + "/"
	waitFor(t, time.Minute, func() bool { // the first page
		b, err := httpGet(ctx, url)
		return err == nil && strings.Contains(b, "live: run in progress")
	})
	logged := stderr.String()
	served := strings.Index(logged, `msg="serving the live report" url=`+url)
	if started := strings.Index(logged, `msg="load started"`); served < 0 || (started >= 0 && started < served) {
		t.Errorf("run did not log the live report's URL %s before the load started:\n%s", url, logged)
	}
	early := loadLive(t, bin, url)
	for _, p := range unmeasuredShown(early.dom) {
		t.Errorf("the first live page: %s", p)
	}
	waitFor(t, time.Minute, func() bool {
		b, err := httpGet(ctx, url)
		// A checkpoint after the first seconds of queries: their charts have a line.
		lines, _ := chartLines(t, b)
		return err == nil && lines > 0
	})

	first := loadLive(t, bin, url)
	for _, want := range []string{"live: run in progress, as of ", "Still running: the load, ", "<th>receiver</th>", "PARTIAL results ("} {
		if !strings.Contains(first.dom, want) {
			t.Errorf("the live page lacks %q", want)
		}
	}
	if first.lines == 0 {
		t.Errorf("the live page drew no line in any chart")
	}
	// Later checkpoints and observations: wait until the page is of a later time and has more
	// points than the first load drew (a fixed sleep was outrun beside a second make test).
	waitFor(t, time.Minute, func() bool {
		b, err := httpGet(ctx, url)
		if err != nil {
			return false
		}
		m := asOfRE.FindStringSubmatch(b)
		_, points := chartLines(t, b)
		return m != nil && m[1] != first.asOf && points > first.points
	})
	second := loadLive(t, bin, url)
	if second.points <= first.points {
		t.Errorf("the later load drew %d points in its charts, the first %d: want more", second.points, first.points)
	}
	if second.asOf == first.asOf {
		t.Errorf("both loads are as of %s", first.asOf)
	}
	t.Logf("first load: %d lines, %d points, as of %s; second: %d lines, %d points, as of %s",
		first.lines, first.points, first.asOf, second.lines, second.points, second.asOf)

	// The run ends at its duration; the results and report are written, and the page shows the
	// final report for -liveGrace.
	report := filepath.Join(out, "report.html")
	waitFor(t, 2*time.Minute, func() bool { // the drain and report after the load; a bound, not a figure
		b, err := httpGet(ctx, url)
		return err == nil && strings.Contains(b, "this run has ended")
	})
	ended := loadLive(t, bin, url)
	for _, want := range []string{"this run has ended; the report is at " + report + ".", "this address stops answering at "} {
		if !strings.Contains(ended.dom, want) {
			t.Errorf("the page after the run lacks %q", want)
		}
	}
	if strings.Contains(ended.dom, `http-equiv="refresh"`) || strings.Contains(ended.dom, "PARTIAL") {
		t.Error("the page after the run reloads itself, or is not the final report")
	}
	cancel() // as the first SIGINT: ends the grace
	select {
	case code := <-done:
		// 3: the receiver, in this process under -race beside other tests, did not keep up
		// and the run says so (its status failed); what is checked here is the page.
		if code != ExitOK && code != ExitThreshold {
			t.Fatalf("run exited %d:\n%s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not end within 1m of its interrupt, in its grace")
	}
	end, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(end, []byte(`class="live"`)) || bytes.Contains(end, []byte(`http-equiv="refresh"`)) {
		t.Error("report.html has the live page's banner or refresh")
	}
}

// unmeasuredShown lists what a live page shows as failed (red) or unknown ("?") in its text:
// a page loaded seconds into a run must say it waits for what it has not measured yet.
func unmeasuredShown(dom string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<[^>]*class="[^"]*\bfail\b[^"]*"[^>]*>[^<]*`).FindAllString(dom, -1) {
		out = append(out, "red: "+m)
	}
	body := regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(dom, "")
	text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(body, "\n")
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, "?") {
			out = append(out, fmt.Sprintf("unknown: %q", line))
		}
	}
	return out
}

// livePage is what a load of the live page drew.
type livePage struct {
	dom           string
	asOf          string
	lines, points int // polylines in the charts, and their points
}

var asOfRE = regexp.MustCompile(`as of (\d\d:\d\d:\d\dZ)`)

// closedPort is a loopback address nothing listens on: Chromium's proxy and its sign-in
// check (--gaia-url) go there, so nothing it asks for leaves the machine.
const closedPort = "http://127.0.0.1:9"

// loadLive loads url in headless Chromium and reads its DOM. Chromium's own background
// calls are off, no name resolves, and any connection but to loopback goes through a proxy
// at closedPort: the net log must show requests to tsbench's address alone (the page, its
// favicon), besides Chromium's sign-in check sent to closedPort.
func loadLive(t *testing.T, bin, url string) livePage {
	t.Helper()
	dir := t.TempDir()
	netlog, models := filepath.Join(dir, "net.json"), filepath.Join(dir, "no-models.json")
	if err := os.WriteFile(models, []byte(`{"components":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-features=NetworkTimeServiceQuerying", "--optimization-guide-manifest-override="+models,
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server="+closedPort, "--gaia-url="+closedPort,
		"--user-data-dir="+filepath.Join(dir, "profile"), "--log-net-log="+netlog,
		"--dump-dom", "--window-size=1280,5600", url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, u := range netlogURLs(t, netlog) {
		if !strings.HasPrefix(u, url) && !strings.HasPrefix(u, closedPort+"/ListAccounts?") {
			t.Errorf("the live page made a request: %s", u)
		}
	}
	p := livePage{dom: stdout.String()}
	if m := asOfRE.FindStringSubmatch(p.dom); m != nil {
		p.asOf = m[1]
	}
	p.lines, p.points = chartLines(t, p.dom)
	return p
}

var chartRE = regexp.MustCompile(`(?s)<svg class="chart".*?</svg>`)

// chartLines counts the lines of two points or more in the page's charts, and their points.
func chartLines(t *testing.T, page string) (lines, points int) {
	t.Helper()
	for _, svg := range chartRE.FindAllString(page, -1) {
		var c struct {
			Lines []struct {
				Points string `xml:"points,attr"`
			} `xml:"polyline"`
		}
		if err := xml.Unmarshal([]byte(svg), &c); err != nil {
			t.Fatalf("a chart of the page: %v", err)
		}
		for _, l := range c.Lines {
			if n := len(strings.Fields(l.Points)); n >= 2 {
				lines++
				points += n
			}
		}
	}
	return lines, points
}

// netlogURLs are the URLs of a Chromium net log, closed as Chromium may leave it.
func netlogURLs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`"[a-z_]*url":"([^"]*)"`).FindAllSubmatch(b, -1) {
		if u := string(m[1]); !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	if len(b) == 0 {
		t.Fatalf("net log %s is empty: was it written?", path)
	}
	return urls
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("not within %s", d)
}

// syncBuffer is a bytes.Buffer that the run's logger and the test share.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
