package report

import (
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// ValueText is a threshold's figure as the run measured it, in its unit: counts exactly,
// durations and sizes readably ("5398800", "120ms", "372.0MiB"); "?" when unknown.
func ValueText(t results.ThresholdResult) string {
	if t.Value == nil {
		return "?"
	}
	return threshold.FormatFigure(t.Figure, *t.Value)
}
