package report

import (
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// The live page (issue 31) is report.html of a run still going. What it has not measured yet
// it says it waits for, and shows neither as unknown ("?") nor as failed (red) (issue 39).

// liveBanner is what the live page has beyond report.html: a line at its top, and a meta
// refresh, which reloads it without a script (the page's CSP allows none).
type liveBanner struct {
	Banner  string
	Refresh int // seconds; 0: the page does not reload itself
}

// WriteLiveHTML writes the report of a run, as tsbench run serves it at -httpListenAddr:
// report.html's page with banner at its top, reloading itself every refresh (at least a
// second; 0 for never, as the final report is served once the run has ended). While r is
// partial, what is not measured yet reads "waiting".
func WriteLiveHTML(w io.Writer, r *results.Run, banner string, refresh time.Duration) error {
	live := &liveBanner{Banner: banner}
	if refresh > 0 {
		live.Refresh = max(1, int(refresh.Round(time.Second).Seconds()))
	}
	return writeHTML(w, r, live)
}

// waitingText is what a cell not measured yet shows.
const waitingText = "waiting"

// waitingFor is what an unknown figure of the live page's table waits for, by its section
// and row: "" when it is not merely unmeasured yet (a storage that is not written to has no
// ingestion figures, one without the query API no latency, a figure the storage does not
// expose no value after its first observations).
func waitingFor(section, label string, s *results.Storage) string {
	switch section {
	case "queries":
		if !noQueryAPI(s) {
			return "the first query answered"
		}
	case "resources":
		if label == "bytes/sample (snapshot)" {
			return "the snapshot at the end"
		}
		if s.Resources == nil || len(s.Resources.Timeline) < 2 { // a rate takes two observations
			return "the first observations"
		}
	case "read-back":
		return "the read-back at the end"
	case "history (catch-up)":
		if s.Write != nil {
			return "the end of the catch-up"
		}
	}
	return ""
}

// markWaiting turns the unknown cells of a partial run's table that only wait for their
// first measurement into "waiting", and returns what they wait for, each once, in order.
func markWaiting(secs []htmlSection, r *results.Run) []string {
	var waits []string
	for _, sec := range secs {
		for _, rw := range sec.Rows {
			for i := range rw.Cells {
				if rw.Cells[i].Text != "?" {
					continue
				}
				if w := waitingFor(sec.Title, rw.Label, &r.Storages[i]); w != "" {
					rw.Cells[i].Text = waitingText
					if !slices.Contains(waits, w) {
						waits = append(waits, w)
					}
				}
			}
		}
	}
	return waits
}

// waitingNote says what the cells marked waiting wait for.
func waitingNote(waits []string) string {
	if len(waits) == 0 {
		return ""
	}
	return "Not measured yet (" + waitingText + "): waiting for " + strings.Join(waits, ", for ") + "."
}

// answered are the slowest queries of a partial run that have a p99 or errors: those that
// only wait for their first answer are left out.
func answered(qs []slowQuery) []slowQuery {
	return slices.DeleteFunc(qs, func(q slowQuery) bool { return q.P99 == nil && q.Errors == 0 })
}
