package reproduce

import (
	"slices"

	"github.com/tsbench/tsbench/internal/results"
)

// spanSamples is the samples of the history per target: the span the article ran, put in
// by the catch-up.
func spanSamples(r *results.Run, _ *results.Storage) (float64, string) {
	for _, s := range r.Storages {
		if s.Write != nil && s.Write.History != nil {
			return float64(s.Write.History.GeneratedSamples) / float64(r.Workload.Targets) / float64(max(1, s.Write.Copies)), ""
		}
	}
	return 0, "no history in this run: the span was not put in"
}

// peak is the largest value of f over the storage's timeline, its points' maxima included.
func peak(f func(results.ResourcePoint) *float64) func(*results.Run, *results.Storage) (float64, string) {
	return func(_ *results.Run, s *results.Storage) (float64, string) {
		var top *float64
		for _, p := range s.Resources.Timeline {
			for _, v := range []*float64{f(p), extreme(p.Max, f)} {
				if v != nil && (top == nil || *v > *top) {
					top = v
				}
			}
		}
		return known(top, "not observed")
	}
}

// extreme is f of a downsampled point's maxima, read as a point.
func extreme(e *results.ResourceExtremes, f func(results.ResourcePoint) *float64) *float64 {
	if e == nil {
		return nil
	}
	return f(results.ResourcePoint{
		CPUCores: e.CPUCores, RSSBytes: e.RSSBytes, DiskBytes: e.DiskBytes,
		DiskReadBytesPerSecond: e.DiskReadBytesPerSecond, DiskWriteBytesPerSecond: e.DiskWriteBytesPerSecond,
	})
}

// diskSpike is the most disk a storage freed after a point of its timeline: what a
// compaction held at once and gave back.
func diskSpike(_ *results.Run, s *results.Storage) (float64, string) {
	ps := s.Resources.Timeline
	var low *float64
	spike := 0.0
	for _, p := range slices.Backward(ps) {
		d := p.DiskBytes
		if d == nil {
			continue
		}
		if low != nil {
			spike = max(spike, *d-*low)
		}
		if low == nil || *d < *low {
			low = d
		}
	}
	if low == nil {
		return 0, "disk not observed"
	}
	return spike, ""
}

func queryP99Max(_ *results.Run, s *results.Storage) (float64, string) {
	if s.Query == nil {
		return 0, "no read load"
	}
	var top *float64
	for _, p := range s.Query.Timeline {
		if p.P99 != nil && (top == nil || *p.P99 > *top) {
			top = p.P99
		}
	}
	return known(top, "no query answered")
}

// indexLookupP50 is the mean of the index lookups' (series, labels, label values) p50s.
func indexLookupP50(_ *results.Run, s *results.Storage) (float64, string) {
	if s.Query == nil {
		return 0, "no read load"
	}
	var sum float64
	n := 0
	for _, q := range s.Query.PerQuery {
		if (q.Kind == "series" || q.Kind == "labels" || q.Kind == "labelValues") && q.LatencySeconds.P50 != nil {
			sum += *q.LatencySeconds.P50
			n++
		}
	}
	if n == 0 {
		return 0, "no index lookup answered (indexLookupInterval 0, or a run shorter than it)"
	}
	return sum / float64(n), ""
}

// verifyCount is 1 when the read-back counted any of f, 0 when it checked samples and found
// none.
func verifyCount(f func(*results.Verify) int64) func(*results.Run, *results.Storage) (float64, string) {
	return func(_ *results.Run, s *results.Storage) (float64, string) {
		if s.Verify == nil || s.Verify.CheckedSamples == 0 {
			return 0, "no sample read back"
		}
		if f(s.Verify) > 0 {
			return 1, ""
		}
		return 0, ""
	}
}

// stalenessIgnored is verifyCount of StalenessIgnored where the read-back checked a series
// after its staleness marker: without one (a run without churn) the storage had no chance to
// ignore staleness, and 0 would say it handles it.
func stalenessIgnored(r *results.Run, s *results.Storage) (float64, string) {
	if s.Verify != nil && s.Verify.CheckedSamples > 0 && s.Verify.CheckedStaleMarkers == 0 {
		return 0, "no series went stale in what was read back (a run without churn): set scrapeConfigUpdatePercent above 0 with -config to have stale series to check"
	}
	return verifyCount(func(v *results.Verify) int64 { return v.StalenessIgnored })(r, s)
}

func probesDifferent(_ *results.Run, s *results.Storage) (float64, string) {
	if s.Verify == nil || len(s.Verify.Probes) == 0 {
		return 0, "no PromQL probe run"
	}
	for _, p := range s.Verify.Probes {
		if !p.Same {
			return 1, ""
		}
	}
	return 0, ""
}
