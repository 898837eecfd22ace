package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// TestPartialAndGapsSaid: a checkpoint's results say they are partial, and a resumed run's
// gaps are named, in the summary, the HTML and a comparison (issue 19).
func TestPartialAndGapsSaid(t *testing.T) {
	r := fixture()
	at := r.StartTime.Add(5 * time.Minute)
	r.Partial = &results.Partial{At: at, Reason: "checkpoint"}
	r.Gaps = []results.Gap{{From: at, To: at.Add(90 * time.Second), Reason: "restarted after the last checkpoint"}}
	wantPartial := "PARTIAL results (checkpoint at " + at.UTC().Format("2006-01-02 15:04:05Z")
	wantGap := "gap " + at.UTC().Format("2006-01-02 15:04:05Z") + " → " + at.Add(90*time.Second).UTC().Format("15:04:05Z") + " (1m30s, restarted after the last checkpoint)"
	var sum, html bytes.Buffer
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	var cmp bytes.Buffer
	if err := Compare(fixture(), r).WriteText(&cmp); err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"summary": sum.String(), "html": html.String(), "compare": cmp.String()} {
		for _, want := range []string{wantPartial, wantGap} {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not say %q", what, want)
			}
		}
	}
	if !strings.Contains(cmp.String(), "new run: PARTIAL") {
		t.Errorf("compare does not say which run is partial:\n%s", cmp.String())
	}
}
