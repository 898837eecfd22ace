package bench

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// canaryFigures are the query figures the canary must not move.
var canaryFigures = []string{"query.p50", "query.p90", "query.p99"}

// BenchmarkCanaryCost (make bench, issue 29 item 8) runs the default workload against fresh
// local VictoriaMetrics and Prometheus four times, CANARY_DURATION each (default 3m): the
// freshness canary on, off, off, on, so that a drift of the machine over the rounds weighs
// on both settings alike. For each storage and query quantile it logs every round side by
// side, each "on" round against the "off" round next to it and the two "off" rounds against
// each other, and reports the mean change and the canary's share of the read load.
func BenchmarkCanaryCost(b *testing.B) {
	d := 3 * time.Minute
	if v := os.Getenv("CANARY_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			b.Fatalf("CANARY_DURATION: %v", err)
		}
	}
	for b.Loop() {
		var on, off []*results.Run
		for _, canary := range []bool{true, false, false, true} {
			res := canaryRound(b, d, canary)
			if canary {
				on = append(on, res)
			} else {
				off = append(off, res)
			}
		}
		reportCanaryCost(b, on, off)
	}
}

// canaryRound is one run of the default workload for d into fresh local storages, with the
// canary at its defaults or off. The end-of-run read-back is skipped: it comes after the
// load and moves no query figure.
func canaryRound(b *testing.B, d time.Duration, canary bool) *results.Run {
	cfg := config.Default()
	cfg.Duration, cfg.VerifySamples = d, 0
	if !canary {
		cfg.Freshness.Interval = 0
	}
	p, err := Prepare(tsbench.Assets, &cfg)
	if err != nil {
		b.Fatal(err)
	}
	res, err := Run(b.Context(), p, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range res.Storages {
		if (st.Freshness != nil) != canary {
			b.Fatalf("%s: canary on %t, freshness in results.json %t", st.Name, canary, st.Freshness != nil)
		}
	}
	return res
}

// reportCanaryCost logs the rounds' table and reports, per storage, the mean change of each
// quantile with the canary on, and beside it the change between the two "off" rounds: what
// two runs of the same setting differ by on this machine, the yardstick the first is read
// against (report compare's noise is estimated within one run, and fresh storages differ
// more than that from run to run). It also reports the canary's queries per second as a
// share of the workload's read load.
func reportCanaryCost(b *testing.B, on, off []*results.Run) {
	var table strings.Builder
	table.WriteString("\n| storage | figure | on (round 1) | off (2) | off (3) | on (4) | on 1 vs off 2 | on 4 vs off 3 | off 3 vs off 2 | noise of 2, of 3 (report compare) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, st := range on[0].Storages {
		for _, fig := range canaryFigures {
			short := st.Name + "-" + strings.TrimPrefix(fig, "query.")
			a, c, control := canaryRow(b, off[0], on[0], st.Name, fig), canaryRow(b, off[1], on[1], st.Name, fig), canaryRow(b, off[0], off[1], st.Name, fig)
			fmt.Fprintf(&table, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | ±%.1f ms, ±%.1f ms (%s) |\n", st.Name, fig,
				canaryMillis(on[0], st.Name, fig), canaryMillis(off[0], st.Name, fig), canaryMillis(off[1], st.Name, fig), canaryMillis(on[1], st.Name, fig),
				canaryChange(a), canaryChange(c), canaryChange(control), a.Noise*1000, c.Noise*1000, a.Method)
			b.ReportMetric((*a.Change+*c.Change)/2, short+"-on-vs-off-%")
			b.ReportMetric(*control.Change, short+"-off-vs-off-%")
		}
		for i, r := range on {
			f := r.Storage(st.Name).Freshness
			if f == nil || f.ReadLoadQueriesPerSecond == 0 || f.QueriesPerSecond == 0 {
				b.Fatalf("round %d: no canary queries to %s (a canary sample is written every %.0f s: run CANARY_DURATION of 2m or more)",
					[]int{1, 4}[i], st.Name, f.WriteIntervalSeconds)
			}
			b.ReportMetric(100*f.QueriesPerSecond/f.ReadLoadQueriesPerSecond, fmt.Sprintf("%s-canary-%%-of-read-load-round%d", st.Name, []int{1, 4}[i]))
		}
	}
	b.Log(table.String())
}

// canaryChange is a row's change, marked when it is past the old run's noise.
func canaryChange(row threshold.Row) string {
	if row.Flagged {
		return fmt.Sprintf("%+.1f %% (past the noise)", *row.Change)
	}
	return fmt.Sprintf("%+.1f %%", *row.Change)
}

// canaryRow is report compare's row of one figure of one storage, off as the old run.
func canaryRow(b *testing.B, off, on *results.Run, storage, fig string) threshold.Row {
	for _, row := range threshold.Compare([]*results.Run{off}, on) {
		if row.Storage == storage && row.Figure == fig {
			if row.Change == nil {
				b.Fatalf("%s %s unknown in a round: off %v, on %v", storage, fig, row.Old, row.New)
			}
			return row
		}
	}
	b.Fatalf("%s %s not in report compare's rows", storage, fig)
	return threshold.Row{}
}

// canaryMillis is one round's figure in milliseconds.
func canaryMillis(r *results.Run, storage, fig string) string {
	v := threshold.Figures()[fig](r.Storage(storage))
	if v == nil || math.IsNaN(*v) {
		return "unknown"
	}
	return fmt.Sprintf("%.1f ms", *v*1000)
}
