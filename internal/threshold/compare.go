package threshold

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// Row is one figure of one storage in the old runs and the new one.
type Row struct {
	Storage string
	Figure  string
	Old     *float64 // the baseline: the median of the old runs that know the figure
	Runs    int      // how many old runs know the figure
	New     *float64
	Change  *float64 // percent; nil when a side is unknown or old is 0
	Noise   float64  // the change chance alone can make, in the figure's unit
	Method  string   // how Noise was estimated
	Flagged bool     // the change is beyond Noise (see compareRow), or a side unknown
	// OldWhy and NewWhy say why a side is unknown, as far as its results tell.
	OldWhy, NewWhy string
}

// noiseSpec says where a figure's noise comes from: its per-interval values in the old run
// (one per progress or observe interval), and how they bound the figure's chance change.
type noiseSpec struct {
	values func(s *results.Storage) []float64
	// single marks a maximum or an end value: it moves like one interval, not like a mean.
	single bool
	// of names the timeline borrowed when the figure has none of its own.
	of string
}

// noiseSpecs maps figures to their per-interval values.
func noiseSpecs() map[string]noiseSpec {
	write := func(f func(results.WritePoint) float64) func(*results.Storage) []float64 {
		return func(s *results.Storage) []float64 {
			if s == nil || s.Write == nil {
				return nil
			}
			var v []float64
			for _, p := range s.Write.Timeline {
				v = append(v, f(p))
			}
			return v
		}
	}
	query := func(f func(results.QueryPoint) *float64) func(*results.Storage) []float64 {
		return func(s *results.Storage) []float64 {
			if s == nil || s.Query == nil {
				return nil
			}
			var v []float64
			for _, p := range s.Query.Timeline {
				if x := f(p); x != nil { // an interval where nothing completed has no latency
					v = append(v, *x)
				}
			}
			return v
		}
	}
	res := func(f func(results.ResourcePoint) *float64) func(*results.Storage) []float64 {
		return func(s *results.Storage) []float64 {
			if s == nil || s.Resources == nil {
				return nil
			}
			var v []float64
			for _, p := range s.Resources.Timeline {
				if x := f(p); x != nil {
					v = append(v, *x)
				}
			}
			return v
		}
	}
	rate := write(func(p results.WritePoint) float64 { return p.SamplesPerSecs })
	lag := write(func(p results.WritePoint) float64 { return p.LagSeconds })
	p50 := query(func(p results.QueryPoint) *float64 { return p.P50 })
	p99 := query(func(p results.QueryPoint) *float64 { return p.P99 })
	cpu := res(func(p results.ResourcePoint) *float64 { return p.CPUCores })
	rss := res(func(p results.ResourcePoint) *float64 { return p.RSSBytes })
	return map[string]noiseSpec{
		"write.achievedSamplesPerSecond": {values: rate},
		"write.maxLagSeconds":            {values: lag, single: true},
		"write.lagSeconds":               {values: lag, single: true},
		"query.p50":                      {values: p50},
		// results.json keeps only p50 and p99 per interval: p90 and max borrow p99's, whose
		// spread is wider than p90's (a cautious estimate) and narrower than max's.
		"query.p90":              {values: p99, of: "p99"},
		"query.p99":              {values: p99},
		"query.max":              {values: p99, single: true, of: "p99"},
		"resources.cpuCoresMean": {values: cpu},
		"resources.cpuCoresMax":  {values: cpu, single: true},
		"resources.rssBytesMean": {values: rss},
		"resources.rssBytesMax":  {values: rss, single: true},
		"resources.bytesPerSample": {
			values: res(func(p results.ResourcePoint) *float64 { return p.BytesPerSample }), single: true,
		},
		"resources.diskReadBytesPerSecond": {
			values: res(func(p results.ResourcePoint) *float64 { return p.DiskReadBytesPerSecond }),
		},
		"resources.diskWriteBytesPerSecond": {
			values: res(func(p results.ResourcePoint) *float64 { return p.DiskWriteBytesPerSecond }),
		},
	}
}

// exactFigure reports whether a figure is an exact count (or a configured rate): any change
// is real.
func exactFigure(figure string) bool {
	switch figure {
	case "verify.maxRelativeError":
		return false
	case "write.droppedSamples", "write.pendingSamples", "write.targetSamplesPerSecond",
		"query.errors", "query.missed", "query.warnings":
		return true
	}
	return strings.HasPrefix(figure, "verify.")
}

// fallbackNoise is the relative change flagged for figures without a timeline to measure
// their spread, and that are not exact counts (sizes, totals that scale with run length).
const fallbackNoise = 0.05

// Compare compares every figure of every storage in the old runs or the new one, in storage
// then figure order, each cardinality event's figures after a storage's own. A storage or a
// figure known on one side only is flagged, and unknown (nil) on the other.
func Compare(olds []*results.Run, cur *results.Run) []Row {
	var rows []Row
	figures := Figures()
	for _, name := range storageNames(slices.Concat(olds, []*results.Run{cur})) {
		ns := cur.Storage(name)
		for _, fig := range FigureNames() {
			if row := figureRow(name, fig, figures[fig], olds, ns); row.Old != nil || row.New != nil {
				rows = append(rows, row)
			}
		}
		rows = append(rows, eventRows(name, olds, ns)...)
	}
	return rows
}

// figureRow is one figure of the storage called name in the old runs and in the new run's ns.
func figureRow(name, fig string, get Figure, olds []*results.Run, ns *results.Storage) Row {
	var b baseline
	for _, old := range olds {
		os := old.Storage(name)
		var v *float64
		if os != nil {
			v = get(os)
		}
		if v == nil {
			b.unknown(unknownWhy(fig, os))
			continue
		}
		b.add(*v, os)
	}
	var nv *float64
	if ns != nil {
		nv = get(ns)
	}
	row := compareRow(name, fig, b, nv)
	if nv == nil {
		row.NewWhy = unknownWhy(fig, ns)
	}
	return row
}

// compareRow is one figure of one storage: the old runs' baseline and noise, the new value,
// and whether the change is beyond the noise. With two old runs or more the noise is their
// spread around their mean (runsNoise), with one its per-interval values' (noise).
func compareRow(name, fig string, b baseline, nv *float64) Row {
	row := Row{Storage: name, Figure: fig, Runs: len(b.values), New: nv}
	if row.Runs == 0 {
		row.OldWhy = strings.Join(b.why, "; ")
		row.Noise, row.Method = noise(fig, nil, nil)
		row.Flagged = true // a storage or figure appeared
		return row
	}
	row.Old = new(median(b.values))
	center := *row.Old
	if row.Runs >= 2 && !exactFigure(fig) {
		center, row.Noise, row.Method = runsNoise(b.values)
	} else {
		row.Noise, row.Method = noise(fig, b.storage, row.Old)
	}
	if nv == nil {
		row.Flagged = true // a storage or figure disappeared
		return row
	}
	if *row.Old != 0 {
		row.Change = new(100 * (*nv - *row.Old) / math.Abs(*row.Old))
	}
	row.Flagged = math.Abs(*nv-center) > row.Noise
	return row
}

// storageNames is the union of the runs' storage names, sorted.
func storageNames(runs []*results.Run) []string {
	var names []string
	for _, r := range runs {
		for _, s := range r.Storages {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// noise estimates how much a figure can change between two runs by chance when one old run
// knows it, from that run's (the baseline's) per-interval values a alone (see noiseSpecs; with
// several old runs, compareRow takes their spread instead): a regression that makes
// the new run uneven must not widen the noise it is judged against (issue 29). Two runs like
// the old one differ by chance, for
//
//   - a whole-run mean or quantile: by up to twice the standard error of the difference of two
//     such means, 2·sqrt(2·s_a²/n_eff_a), with n_eff from effectiveN;
//   - a maximum or end value: by up to twice the spread of the difference of two single
//     intervals, 2·sqrt(2·s_a²);
//   - an exact count: not at all; a figure without per-interval values: by fallbackNoise of
//     its old value.
func noise(figure string, os *results.Storage, ov *float64) (float64, string) {
	if exactFigure(figure) {
		return 0, "exact"
	}
	if spec, ok := noiseSpecs()[figure]; ok {
		if a := spec.values(os); len(a) >= 3 {
			of := ""
			if spec.of != "" {
				of = " of " + spec.of
			}
			if spec.single {
				return 2 * math.Sqrt(2*variance(a)), "σ" + of
			}
			n := effectiveN(a)
			return 2 * math.Sqrt(2*variance(a)/n), fmt.Sprintf("SE%s, n_eff %.0f/%d", of, n, len(a))
		}
	}
	if ov == nil {
		return 0, "5%"
	}
	return fallbackNoise * math.Abs(*ov), "5%"
}

// effectiveN is how many independent values xs is worth for the standard error of its mean:
// n·(1−ρ)/(1+ρ) with ρ the lag-1 autocorrelation, clamped to [1, n]. Per-interval rates and
// latencies drift together over several intervals (a compaction, a GC cycle), so σ/√n
// alone would understate the noise of their mean.
func effectiveN(xs []float64) float64 {
	n := float64(len(xs))
	m := mean(xs)
	var num, den float64
	for i, x := range xs {
		den += (x - m) * (x - m)
		if i > 0 {
			num += (xs[i-1] - m) * (x - m)
		}
	}
	if den == 0 {
		return n
	}
	rho := num / den
	if rho <= -1 {
		return n
	}
	return min(n, max(1, n*(1-rho)/(1+rho)))
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// variance is the sample variance of xs (n−1 in the denominator).
func variance(xs []float64) float64 {
	m := mean(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

// eventRows compares a storage's figures during each cardinality event of the new run with
// the same event at the same place in the old runs' lists: series.events[i].<event>.cpuCores,
// .rssBytes and .queryP99Seconds, each its mean during the event. An event no old run has is
// not compared.
func eventRows(name string, olds []*results.Run, ns *results.Storage) []Row {
	if ns == nil || ns.Series == nil {
		return nil
	}
	var out []Row
	for i, ne := range ns.Series.Events {
		var same []results.EventFigures // event i of each old run that has it
		for _, old := range olds {
			if os := old.Storage(name); os != nil && os.Series != nil && i < len(os.Series.Events) && os.Series.Events[i].Name == ne.Name {
				same = append(same, os.Series.Events[i])
			}
		}
		if len(same) == 0 {
			continue
		}
		for _, f := range []struct {
			name string
			of   func(results.EventFigures) *float64
		}{
			{"cpuCores", func(e results.EventFigures) *float64 { return e.CPUCores.During }},
			{"rssBytes", func(e results.EventFigures) *float64 { return e.RSSBytes.During }},
			{"queryP99Seconds", func(e results.EventFigures) *float64 { return e.QueryP99.During }},
		} {
			var b baseline
			for _, e := range same {
				if v := f.of(e); v != nil {
					b.add(*v, nil)
				}
			}
			if len(b.values) > 0 || f.of(ne) != nil {
				out = append(out, compareRow(name, fmt.Sprintf("series.events[%d].%s.%s", i, ne.Name, f.name), b, f.of(ne)))
			}
		}
	}
	return out
}
