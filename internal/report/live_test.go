package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// firstSeconds is the fixture as the live page has it a few seconds into the run: writes
// counted, no query answered yet, no observation of the storages or of tsbench, no check.
func firstSeconds(t *testing.T) *results.Run {
	t.Helper()
	r := fixture()
	r.EndTime = r.StartTime.Add(5 * time.Second)
	r.Partial = &results.Partial{At: r.EndTime, Reason: "live report"}
	for i := range r.Storages {
		s := &r.Storages[i]
		s.Write.Timeline, s.Write.DroppedSamples, s.Write.AckedSamples = nil, nil, s.Write.GeneratedSamples
		s.Query = &results.Query{PerQuery: []results.QueryStat{{Name: "NodeDiskWillFillIn24h", Kind: "instant"}}}
		s.Resources, s.Verify, s.Freshness = nil, nil, nil
	}
	r.Generator = &results.Generator{}
	ts, err := threshold.Parse([]string{"query.p99 < 100ms", "write.droppedSamples == 0"}, []string{"prometheus", "victoriametrics"})
	if err != nil {
		t.Fatal(err)
	}
	r.Thresholds = threshold.Evaluate(ts, r)
	return r
}

// The live page's first load (issue 39): nothing red and no "?" that only means "not
// measured yet"; each such figure says what it waits for. The same results written as
// report.html (a checkpoint's) keep their "?".
func TestLivePageWaitsForWhatIsNotMeasured(t *testing.T) {
	r := firstSeconds(t)
	var b bytes.Buffer
	if err := WriteLiveHTML(&b, r, "live: run in progress", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	if cells := regexp.MustCompile(`<td[^>]*>\?</td>`).FindAllString(page, -1); len(cells) > 0 {
		t.Errorf("the live page has %d unknown cells: %q", len(cells), cells)
	}
	for _, red := range regexp.MustCompile(`<[^>]* class="[^"]*fail[^"]*"[^>]*>[^<]*`).FindAllString(page, -1) {
		t.Errorf("the live page has red: %s", red)
	}
	for _, want := range []string{
		"<tr><td>latency p50 (s)</td><td>waiting</td><td>waiting</td></tr>",
		"Not measured yet (waiting): waiting for the first query answered.",
		"<h2>Slowest queries</h2><p class=\"waiting\">Waiting for the first query answered.</p>",
		"tsbench's own use: waiting for its first observations.",
		`<li class="waiting">… prometheus: query.p99 < 100ms (waiting for its first value)</li>`,
		`<li class="ok">✓ victoriametrics: write.droppedSamples == 0 (is 0)</li>`, // measured: shown as it stands
		`<p class="note">PARTIAL results (live report at 2026-11-22 12:00:05Z)`,
		`class="nodata" text-anchor="middle">waiting for the first point</text>`,
		`<meta http-equiv="refresh" content="10">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the live page lacks %q", want)
		}
	}
	var end bytes.Buffer
	if err := WriteHTML(&end, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(end.String(), "<tr><td>latency p50 (s)</td><td>?</td><td>?</td></tr>") || strings.Contains(end.String(), ">waiting<") {
		t.Error("report.html of partial results says it waits: only the live page, whose run is still going, does")
	}
}

// Once the read-back's checks have run, and the storages have been observed, the live page
// shows what they found; the read-back at the end stays waited for, and a figure the storage
// does not give after its observations stays unknown.
func TestLivePageAfterTheFirstObservations(t *testing.T) {
	r := fixture()
	r.Partial = &results.Partial{At: r.EndTime, Reason: "live report"}
	prom := r.Storage("prometheus")
	prom.Resources.SnapshotBytesPerSample, prom.Resources.DiskBytesEnd = nil, nil
	prom.Verify = &results.Verify{Continuous: &results.Continuous{IntervalSeconds: 60, Total: results.Check{Checks: 2, Checked: 100}}}
	var b bytes.Buffer
	if err := WriteLiveHTML(&b, r, "live", time.Second); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{
		"<tr><td>bytes/sample (snapshot)</td><td>waiting</td><td>waiting</td></tr>",
		"<tr><td>disk at end (MiB)</td><td>?</td><td>4.00</td></tr>",
		`<li class="waiting">prometheus: waiting for the read-back at the end</li>`,
		`<li class="ok">prometheus during the run: 2 checks every 1m0s: 100 samples, all returned as written (0 read again)</li>`,
		"waiting for the snapshot at the end",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the live page lacks %q", want)
		}
	}
}

// The final report served once the run has ended does not reload itself.
func TestLiveHTMLWithoutRefresh(t *testing.T) {
	var b bytes.Buffer
	if err := WriteLiveHTML(&b, fixture(), "this run has ended", 0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "refresh") || !strings.Contains(b.String(), `<p class="live"`) {
		t.Errorf("the ended page has a refresh, or no banner:\n%.600s", b.String())
	}
}
