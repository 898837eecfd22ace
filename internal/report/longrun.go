package report

import (
	"fmt"
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
		out = append(out, fmt.Sprintf("gap %s → %s (%s, %s): the run was resumed; samples of this stretch are in no account and not read back",
			g.From.UTC().Format("2006-01-02 15:04:05Z"), g.To.UTC().Format("15:04:05Z"), g.To.Sub(g.From).Round(time.Second), g.Reason))
	}
	return out
}
