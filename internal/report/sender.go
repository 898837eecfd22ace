package report

import (
	"fmt"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// SenderLines describe scrape mode's agent in a few lines, for the summary and the HTML
// report: what tsbench served, the agent's account per storage and what the agent used.
// None when tsbench wrote directly.
func SenderLines(r *results.Run) []string {
	s := r.Sender
	if s == nil {
		return nil
	}
	who := "started by tsbench"
	if s.URL != "" {
		who = "at " + s.URL
	}
	pages := "the profile's values"
	if s.ExporterURL != "" {
		pages = fmt.Sprintf("%s behind a 1 s cache (%d fetches)", s.ExporterURL, s.ExporterFetches)
	}
	lines := []string{
		fmt.Sprintf("sender: %s (%s) scraping %s, timestamps exposed: %t", s.Kind, who, pages, s.ExposeTimestamps),
		fmt.Sprintf("served %d scrapes, %d samples (%d pages not served); answered in %.1f ms mean, %.1f ms max",
			s.ServedScrapes, s.ServedSamples, s.FailedScrapes, s.ScrapeDurationSecondsMean*1e3, s.ScrapeDurationSecondsMax*1e3),
	}
	scraped := "does not count what it scraped"
	if s.ScrapedSamples != nil {
		scraped = fmt.Sprintf("scraped %d", *s.ScrapedSamples)
	}
	if s.AppendedSamples == nil || s.AgentAddedSamples == nil {
		lines = append(lines, fmt.Sprintf("%s took in ? (unknown: %s)", s.Kind, cmpOr(s.Reasons["appendedSamples"], "not measured")))
	} else {
		lines = append(lines, fmt.Sprintf("%s %s, took in %d (%+d of its own: up, scrape_* series, staleness markers)",
			s.Kind, scraped, *s.AppendedSamples, *s.AgentAddedSamples))
	}
	for _, st := range s.Storages {
		if !st.Known {
			lines = append(lines, fmt.Sprintf("  %s: in %d, account not known: %s", st.Name, st.InSamples, st.Why))
			continue
		}
		var dropped int64
		for _, n := range st.DroppedSamples {
			dropped += n
		}
		line := fmt.Sprintf("  %s: in %d = acked %d + dropped %d + pending %d", st.Name, st.InSamples, st.AckedSamples, dropped, st.PendingSamples)
		if st.UnexplainedSamples != 0 {
			line += fmt.Sprintf(", %d not explained by the agent's counters", st.UnexplainedSamples)
		}
		lines = append(lines, line)
	}
	if res := s.Resources; res != nil {
		lines = append(lines, fmt.Sprintf("%s itself: cpu %s cores mean, %s max; rss %s MiB mean, %s max; queue on disk %s MiB at end; %s cpu s per million samples",
			s.Kind, fmtPtr("%.3f", res.CPUCoresMean, 1), fmtPtr("%.3f", res.CPUCoresMax, 1),
			fmtPtr("%.1f", res.RSSBytesMean, 1<<20), fmtPtr("%.1f", res.RSSBytesMax, 1<<20),
			fmtPtr("%.2f", res.DiskBytesEnd, 1<<20), fmtPtr("%.2f", s.CPUSecondsPerMillionSamples, 1)))
	}
	if s.ReadBack != "" {
		lines = append(lines, "read-back: "+s.ReadBack)
	}
	if s.Changes != nil {
		lines = append(lines, s.Changes.Line(s.Kind)+"; each storage's read-back is against what it sent")
	}
	for _, p := range s.Problems {
		lines = append(lines, "problem: "+p)
	}
	return lines
}

// writeSender prints SenderLines after a blank line.
func writeSender(b *strings.Builder, r *results.Run) {
	lines := SenderLines(r)
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
}
