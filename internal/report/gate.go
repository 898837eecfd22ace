package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tsbench/tsbench/internal/threshold"
)

// WriteGate prints every verdict, ✗ for a failed one, with the old runs' noise beside it for
// information, and a last line with the count. A baseline from several old runs says so:
// "30000 (median of 3 runs) → 22500".
func WriteGate(w io.Writer, vs []threshold.Verdict) error {
	failed := 0
	var b strings.Builder
	b.WriteString("\ncompare thresholds:\n")
	for _, v := range vs {
		mark := "✓"
		if v.Failed {
			mark, failed = "✗", failed+1
		}
		old, runs := valueText(v.Row.Figure, v.Row.Old), "old run"
		if v.Row.Runs > 1 {
			old, runs = fmt.Sprintf("%s (median of %d runs)", old, v.Row.Runs), "old runs"
		}
		fmt.Fprintf(&b, "  %s %s: %s %s %s: %s → %s (%s): %s", mark, v.Row.Storage, v.Rule.Figure, v.Rule.Op, limitText(v.Rule),
			old, valueText(v.Row.Figure, v.Row.New), fmtChange(v.Row.Change), v.Outcome)
		if v.Row.Old != nil && v.Row.New != nil {
			fmt.Fprintf(&b, "; noise of the %s ±%s (%s)", runs, threshold.FormatFigure(v.Row.Figure, v.Row.Noise), v.Row.Method)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d of %d checks failed\n", failed, len(vs))
	_, err := io.WriteString(w, b.String())
	return err
}

// limitText is a rule's limit as written: "+20%", "+50ms", "-10%~noise", "+0?ok".
func limitText(r threshold.CompareRule) string {
	suffix := ""
	if r.Noise {
		suffix = "~noise"
	}
	if r.UnknownOK {
		suffix += "?ok"
	}
	if r.Percent {
		return fmt.Sprintf("%+g%%%s", r.Limit, suffix)
	}
	sign := "+"
	if r.Limit < 0 {
		sign = ""
	}
	return sign + threshold.FormatFigure(r.Figure, r.Limit) + suffix
}

func valueText(figure string, v *float64) string {
	if v == nil {
		return "?"
	}
	return threshold.FormatFigure(figure, *v)
}
