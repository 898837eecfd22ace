package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tsbench/tsbench/internal/threshold"
)

// WriteGate prints every verdict, ✗ for a failed one, with the old run's noise beside it for
// information, and a last line with the count.
func WriteGate(w io.Writer, vs []threshold.Verdict) error {
	failed := 0
	var b strings.Builder
	b.WriteString("\ncompare thresholds:\n")
	for _, v := range vs {
		mark := "✓"
		if v.Failed {
			mark, failed = "✗", failed+1
		}
		fmt.Fprintf(&b, "  %s %s: %s %s %s: %s → %s (%s): %s", mark, v.Row.Storage, v.Rule.Figure, v.Rule.Op, limitText(v.Rule),
			valueText(v.Row.Figure, v.Row.Old), valueText(v.Row.Figure, v.Row.New), fmtChange(v.Row.Change), v.Outcome)
		if v.Row.Old != nil && v.Row.New != nil {
			fmt.Fprintf(&b, "; noise of the old run ±%s (%s)", threshold.FormatFigure(v.Row.Figure, v.Row.Noise), v.Row.Method)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d of %d checks failed\n", failed, len(vs))
	_, err := io.WriteString(w, b.String())
	return err
}

// limitText is a rule's limit as written: "+20%", "+50ms", "-10%~noise".
func limitText(r threshold.CompareRule) string {
	noise := ""
	if r.Noise {
		noise = "~noise"
	}
	if r.Percent {
		return fmt.Sprintf("%+g%%%s", r.Limit, noise)
	}
	sign := "+"
	if r.Limit < 0 {
		sign = ""
	}
	return sign + threshold.FormatFigure(r.Figure, r.Limit) + noise
}

func valueText(figure string, v *float64) string {
	if v == nil {
		return "?"
	}
	return threshold.FormatFigure(figure, *v)
}
