package fidelity

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// printTable writes the figures of every pipeline side by side, with each one's ratio to the
// first (the reference) where a ratio means something.
func printTable(w io.Writer, pipes []pipeline, res []figures) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var head strings.Builder
	head.WriteString("\t")
	for _, p := range pipes {
		head.WriteString(p.name + "\t")
	}
	for _, p := range pipes[1:] {
		head.WriteString(p.name + "/" + pipes[0].name + "\t")
	}
	fmt.Fprintln(tw, head.String())
	row := func(label string, v func(f figures) float64, ratio bool, format string) {
		var line strings.Builder
		line.WriteString(label + "\t")
		for _, f := range res {
			fmt.Fprintf(&line, format+"\t", v(f))
		}
		for _, f := range res[1:] {
			if ratio {
				fmt.Fprintf(&line, "%.2f", v(f)/v(res[0]))
			}
			line.WriteString("\t") // empty ratio cells keep the columns aligned
		}
		fmt.Fprintln(tw, line.String())
	}
	row("series per target", func(f figures) float64 { return f.seriesPerTarget }, false, "%.0f")
	row("samples in VictoriaMetrics", func(f figures) float64 { return f.vmSamples }, false, "%.0f")
	row("samples in Prometheus", func(f figures) float64 { return f.promSamples }, false, "%.0f")
	for _, k := range kinds {
		if _, ok := res[0].changed[k.name]; !ok {
			continue
		}
		row("changed samples "+k.name, func(f figures) float64 {
			c := f.changed[k.name]
			if c[1] == 0 {
				return math.NaN()
			}
			return c[0] / c[1]
		}, true, "%.3f")
	}
	// A failed scrape leaves a staleness marker in every series of its target, and a gap in
	// its timestamps: both cost bytes that no exporter's data explains.
	row("stale markers per 1000 samples", func(f figures) float64 { return 1000 * f.stale / f.exported }, false, "%.2f")
	row("VM data bytes/sample", func(f figures) float64 { return f.vmData / f.vmSamples }, true, "%.3f")
	row("VM data+indexdb bytes/sample", func(f figures) float64 { return f.vmTotal / f.vmSamples }, true, "%.3f")
	row("Prometheus chunks bytes/sample", func(f figures) float64 { return f.promChunks / f.promSamples }, true, "%.3f")
	row("Prometheus snapshot bytes/sample", func(f figures) float64 { return f.promTotal / f.promSamples }, true, "%.3f")
	_ = tw.Flush()
}
