package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// LongRunLines say, in words, what a checkpoint or a resumed run's results cover (issue 19):
// a partial file's figures end at its checkpoint, and a gap's samples are in no account.
func LongRunLines(r *results.Run) []string {
	var out []string
	if p := r.Partial; p != nil {
		out = append(out, fmt.Sprintf("PARTIAL results (%s at %s): the run had not ended; its figures cover %s to then, and the read-back at the end has not run",
			p.Reason, p.At.UTC().Format("2006-01-02 15:04:05Z"), r.StartTime.UTC().Format("2006-01-02 15:04:05Z")))
	}
	for _, g := range r.Gaps {
		out = append(out, fmt.Sprintf("gap %s → %s (%s, %s): the run was resumed; samples of this stretch are not read back, and in the account only as far as the checkpoint had acked or dropped them",
			g.From.UTC().Format("2006-01-02 15:04:05Z"), g.To.UTC().Format("15:04:05Z"), g.To.Sub(g.From).Round(time.Second), g.Reason))
	}
	return out
}

// longRunSelf is what a long run says of tsbench itself (issue 19), as lines: the slopes of
// its live heap and RSS, and its largest schedule drift; "" when the run has none of them.
func longRunSelf(r *results.Run) string {
	var b strings.Builder
	switch g := r.Generator; {
	case g == nil:
	case g.HeapLiveBytesPerHour != nil:
		fmt.Fprintf(&b, "tsbench memory over time: live heap %+.2f MiB/h, rss %s MiB/h (after the first %s)\n",
			*g.HeapLiveBytesPerHour/(1<<20), fmtPtr("%+.2f", g.RSSBytesPerHour, 1<<20), time.Duration(g.SlopeAfterSeconds*float64(time.Second)).Round(time.Second))
	case g.Reasons["heapLiveBytesPerHour"] != "": // a short run: no slope is a finding (issue 29)
		fmt.Fprintf(&b, "tsbench memory over time: no slope, %s\n", g.Reasons["heapLiveBytesPerHour"])
	}
	var drift []string
	behind := false
	for _, s := range r.Storages {
		if s.Write != nil && s.Write.MaxScheduleDriftSeconds > 0 {
			drift = append(drift, fmt.Sprintf("%s %.2fs", s.Name, s.Write.MaxScheduleDriftSeconds))
			behind = behind || s.Write.MaxScheduleDriftSeconds >= r.Workload.ScrapeIntervalSeconds
		}
	}
	if len(drift) > 0 {
		fmt.Fprintf(&b, "tsbench schedule drift max (scheduled time to batch queued; scrape interval %gs): %s\n",
			r.Workload.ScrapeIntervalSeconds, strings.Join(drift, ", "))
	}
	if behind {
		b.WriteString("  ✗ a drift of a scrape interval or more: tsbench fell behind its own schedule (short of CPU?), so the load was not the one configured\n")
	}
	return b.String()
}

// peak is what a chart draws of a gauge: its value, or, for a point a long run's timeline
// merged from several observations, their largest, so a spike shows however long the run.
func peak(v *float64, most *results.ResourceExtremes, of func(*results.ResourceExtremes) *float64) *float64 {
	if most != nil && of(most) != nil {
		return of(most)
	}
	return v
}

func cpuOf(e *results.ResourceExtremes) *float64 { return e.CPUCores }
func rssOf(e *results.ResourceExtremes) *float64 { return e.RSSBytes }
