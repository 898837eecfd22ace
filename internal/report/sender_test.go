package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

func TestSenderLines(t *testing.T) {
	scraped, appended, added, cpu, rss, disk, perM := int64(1000), int64(1100), int64(100), 0.016, 30*float64(1<<20), float64(1<<20), 3.9
	r := &results.Run{Sender: &results.Sender{
		Kind: "vmagent", ServedScrapes: 10, ServedSamples: 1000, FailedScrapes: 2,
		ScrapeDurationSecondsMean: 0.0003, ScrapeDurationSecondsMax: 0.0018,
		ScrapedSamples: &scraped, AppendedSamples: &appended, AgentAddedSamples: &added,
		Storages: []results.SenderStorage{
			{Name: "prom", InSamples: 1100, AckedSamples: 1090, DroppedSamples: map[string]int64{"failed": 5}, PendingSamples: 3, UnexplainedSamples: 2, Known: true},
			{Name: "vm", InSamples: 1100, Why: "512 bytes and 0 blocks pending"},
		},
		Resources:                   &results.Resources{CPUCoresMean: &cpu, CPUCoresMax: &cpu, RSSBytesMean: &rss, RSSBytesMax: &rss, DiskBytesEnd: &disk},
		CPUSecondsPerMillionSamples: &perM,
		Problems:                    []string{"the agent did not drain within 40s"},
	}}
	want := []string{
		"sender: vmagent (started by tsbench) scraping the profile's values, timestamps exposed: false",
		"served 10 scrapes, 1000 samples (2 pages not served); answered in 0.3 ms mean, 1.8 ms max",
		"vmagent scraped 1000, took in 1100 (+100 of its own: up, scrape_* series, staleness markers)",
		"  prom: in 1100 = acked 1090 + dropped 5 + pending 3, 2 not explained by the agent's counters",
		"  vm: in 1100, account not known: 512 bytes and 0 blocks pending",
		"vmagent itself: cpu 0.016 cores mean, 0.016 max; rss 30.0 MiB mean, 30.0 max; queue on disk 1.00 MiB at end; 3.90 cpu s per million samples",
		"problem: the agent did not drain within 40s",
	}
	if diff := cmp.Diff(want, SenderLines(r)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if SenderLines(&results.Run{}) != nil {
		t.Error("lines for a direct run")
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "<h2>Sender</h2>") || !strings.Contains(html.String(), "2 not explained by the agent&#39;s counters") {
		t.Error("report.html has no sender section")
	}
}

// TestSenderLinesUnknownIntake (issue 29, item 4): an agent whose counters could not be read
// took in an unknown number of samples, said with the reason, never "took in 0".
func TestSenderLinesUnknownIntake(t *testing.T) {
	why := "the vmagent's counters could not be read (see problems)"
	r := &results.Run{Sender: &results.Sender{
		Kind: "vmagent", ServedScrapes: 10, ServedSamples: 1000,
		Reasons:  map[string]string{"appendedSamples": why, "agentAddedSamples": why},
		Problems: []string{"get http://127.0.0.1:8429/metrics: connection refused"},
	}}
	lines := strings.Join(SenderLines(r), "\n")
	if want := "vmagent took in ? (unknown: " + why + ")"; !strings.Contains(lines, want) {
		t.Errorf("lines lack %q:\n%s", want, lines)
	}
	if strings.Contains(lines, "took in 0") {
		t.Errorf("an unknown intake printed as 0:\n%s", lines)
	}
}
