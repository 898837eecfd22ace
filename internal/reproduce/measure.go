package reproduce

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// A measure reads one figure, in its scale-free form, from a run's results: of the workload
// (s nil) or of one storage. It returns why the figure is unknown or not comparable instead
// of a value when it cannot be compared.
type measure struct {
	compared string // the scale-free form, with its unit
	fn       func(r *results.Run, s *results.Storage) (float64, string)
}

// fixedShare is the share of a storage's RSS, taken before it held any series, above which
// its RAM figures describe the process more than the series: not comparable at that scale.
const fixedShare = 0.5

// minSeriesForRAM is the fewest active series at which RAM per series is compared: below it,
// what a storage holds for any load (VictoriaMetrics' caches, Prometheus' head chunks and
// WAL buffers, tens of MiB) outweighs what it holds per series (about 1.5 KB and 5 KB per
// series in article 000, 4 and 14 GB over 2.8 M series).
const minSeriesForRAM = 100_000

var measures = map[string]measure{
	"samplesPerSecondPerTarget": {"samples/s per target", func(r *results.Run, _ *results.Storage) (float64, string) {
		return float64(r.Workload.SeriesPerTarget) / r.Workload.ScrapeIntervalSeconds, ""
	}},
	"activeSeriesPerTarget": {"active series per target", func(r *results.Run, _ *results.Storage) (float64, string) {
		return float64(r.Workload.ActiveSeries) / float64(r.Workload.Targets), ""
	}},
	"spanSamplesPerTarget": {"samples per target over the span", spanSamples},
	"bytesPerSample": {"bytes per sample", func(_ *results.Run, s *results.Storage) (float64, string) {
		if h := s.Resources.History; h != nil && h.BytesPerSample != nil {
			return *h.BytesPerSample, ""
		}
		return known(s.Resources.BytesPerSample, s.Resources.Reasons["bytesPerSample"])
	}},
	"snapshotBytesPerSample": {"snapshot bytes per sample", func(_ *results.Run, s *results.Storage) (float64, string) {
		return known(s.Resources.SnapshotBytesPerSample, s.Resources.Reasons["snapshotBytesPerSample"])
	}},
	"rssSteadyPerSeries": {"RSS bytes per active series (live phase, above the empty process)", func(r *results.Run, s *results.Storage) (float64, string) {
		return perSeries(r, s, mean(live(s), rss))
	}},
	"rssMaxPerSeries": {"peak RSS bytes per active series (above the empty process)", func(r *results.Run, s *results.Storage) (float64, string) {
		return perSeries(r, s, s.Resources.RSSBytesMax)
	}},
	"rssMean":        {"RSS bytes (live phase mean)", liveMean(rss)},
	"cpuMean":        {"cores (live phase mean)", liveMean(func(p results.ResourcePoint) *float64 { return p.CPUCores })},
	"rssTrend":       {"RSS at the end of the span over its start (×)", rssTrend},
	"cpuPerMSamples": {"cores per million samples/s (catch-up)", cpuPerMSamples},
	"diskWritePerSample": {"disk write bytes per sample (catch-up)", func(_ *results.Run, s *results.Storage) (float64, string) {
		h, w := s.Resources.History, s.Write.History
		if h == nil || w == nil || h.DiskWriteBytesPerSecond == nil || w.SamplesPerSecond == 0 {
			return 0, "no disk writes observed over a catch-up: run with history, on a storage tsbench starts or one whose /metrics give them"
		}
		return *h.DiskWriteBytesPerSecond / w.SamplesPerSecond, ""
	}},
	"diskWriteMax": {"peak disk write bytes/s", peak(func(p results.ResourcePoint) *float64 { return p.DiskWriteBytesPerSecond })},
	"diskReadMax":  {"peak disk read bytes/s", peak(func(p results.ResourcePoint) *float64 { return p.DiskReadBytesPerSecond })},
	"diskSpike":    {"largest disk bytes freed after a peak", diskSpike},
	"queryP50": {"query latency p50 seconds", func(_ *results.Run, s *results.Storage) (float64, string) {
		if s.Query == nil {
			return 0, "no read load"
		}
		return known(s.Query.LatencySeconds.P50, "no query answered")
	}},
	"queryP99Max":                   {"largest p99 of any interval, seconds", queryP99Max},
	"indexLookupP50":                {"mean p50 of the index lookups, seconds", indexLookupP50},
	"changedValues":                 {"1 when values read back differ from those written, else 0", verifyCount(func(v *results.Verify) int64 { return v.ChangedValues })},
	"nanAltered":                    {"1 when NaN read back is dropped or altered, else 0", verifyCount(func(v *results.Verify) int64 { return v.NaNAltered })},
	"stalenessIgnored":              {"1 when series are returned after their stale marker, else 0", stalenessIgnored},
	"probesDifferent":               {"1 when any PromQL probe's answer differs from Prometheus semantics, else 0", probesDifferent},
	"generatorSamplesPerCoreSecond": {"samples sent per tsbench CPU-second", generatorPerCore},
	"generatorRSSPerSeries":         {"tsbench RSS bytes per active series", generatorPerSeries},
	"wireBytesPerSample":            {"bytes sent per sample acked", wirePerSample},
}

func known(v *float64, reason string) (float64, string) {
	if v == nil {
		if reason == "" {
			reason = "not measured in this run"
		}
		return 0, reason
	}
	return *v, ""
}

func rss(p results.ResourcePoint) *float64 { return p.RSSBytes }

// live is the storage's timeline after it caught up (all of it without history).
func live(s *results.Storage) []results.ResourcePoint {
	if s.Write == nil || s.Write.History == nil || !s.Write.History.CaughtUp {
		return s.Resources.Timeline
	}
	at := s.Write.History.CaughtUpTime
	return slices.DeleteFunc(slices.Clone(s.Resources.Timeline), func(p results.ResourcePoint) bool {
		t, err := time.Parse(time.RFC3339Nano, p.Time)
		return err != nil || t.Before(at)
	})
}

// catchUp is the timeline from the first point after the load began until it caught up.
func catchUp(s *results.Storage) []results.ResourcePoint {
	if s.Write == nil || s.Write.History == nil || !s.Write.History.CaughtUp || len(s.Resources.Timeline) < 2 {
		return nil
	}
	at := s.Write.History.CaughtUpTime
	return slices.DeleteFunc(slices.Clone(s.Resources.Timeline[1:]), func(p results.ResourcePoint) bool {
		t, err := time.Parse(time.RFC3339Nano, p.Time)
		return err != nil || t.After(at)
	})
}

func mean(ps []results.ResourcePoint, f func(results.ResourcePoint) *float64) *float64 {
	var sum float64
	n := 0
	for _, p := range ps {
		if v := f(p); v != nil {
			sum += *v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return new(sum / float64(n))
}

func liveMean(f func(results.ResourcePoint) *float64) func(*results.Run, *results.Storage) (float64, string) {
	return func(_ *results.Run, s *results.Storage) (float64, string) {
		return known(mean(live(s), f), "no observation of the live phase")
	}
}

// base is the storage's RSS at its first observation, before it held any series of the run.
func base(s *results.Storage) *float64 {
	if len(s.Resources.Timeline) == 0 {
		return nil
	}
	return s.Resources.Timeline[0].RSSBytes
}

// perSeries is v above the empty process over the run's active series, or why the fixed
// part dominates at this scale and which scale would not.
func perSeries(r *results.Run, s *results.Storage, v *float64) (float64, string) {
	b := base(s)
	if v == nil || b == nil || r.Workload.ActiveSeries == 0 {
		return 0, "RSS not observed before and during the load"
	}
	if n := r.Workload.ActiveSeries; n < minSeriesForRAM {
		return 0, fmt.Sprintf("%.0f bytes per series above the empty process at %d active series, where a storage's caches and buffers (sized by its memory and ingestion rate, not its series) dominate its RSS; comparable from %d active series, %.0f× the targets",
			(*v-*b)/float64(n), n, minSeriesForRAM, math.Ceil(float64(minSeriesForRAM)/float64(n)))
	}
	if *b > fixedShare**v {
		need := *b / (*v - *b) // the series-proportional part equals the fixed one at this many times the series
		return 0, fmt.Sprintf("the empty process's %.0f MiB are %.0f%% of %.0f MiB at %d active series: a fixed overhead that dominates at this scale; comparable from about %.0f× the targets",
			*b/(1<<20), 100**b / *v, *v/(1<<20), r.Workload.ActiveSeries, math.Ceil(math.Max(need, 1)))
	}
	return (*v - *b) / float64(r.Workload.ActiveSeries), ""
}

// rssTrend is the mean RSS (above the empty process) over the last quarter of the catch-up
// over that of its first quarter: the span's data, 24 h in the articles, in time order.
func rssTrend(_ *results.Run, s *results.Storage) (float64, string) {
	ps := catchUp(s)
	if len(ps) < 8 {
		return 0, fmt.Sprintf("%d observations over the catch-up: a trend needs 8 or more (a longer history or a larger scale)", len(ps))
	}
	q := len(ps) / 4
	first, last, b := mean(ps[:q], rss), mean(ps[len(ps)-q:], rss), base(s)
	if first == nil || last == nil || b == nil {
		return 0, "RSS not observed over the catch-up"
	}
	if *b > fixedShare**last {
		return 0, fmt.Sprintf("the empty process's %.0f MiB are most of the %.0f MiB at the end of the span: a fixed overhead that dominates at this scale", *b/(1<<20), *last/(1<<20))
	}
	return (*last - *b) / (*first - *b), ""
}

func cpuPerMSamples(_ *results.Run, s *results.Storage) (float64, string) {
	h, w := s.Resources.History, s.Write.History
	if h == nil || w == nil || h.CPUCoresMean == nil || w.SamplesPerSecond == 0 {
		return 0, "no CPU observed over a catch-up: run with history, on a storage tsbench starts or one whose /metrics give it"
	}
	return *h.CPUCoresMean / (w.SamplesPerSecond / 1e6), ""
}
