package results

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// LatencyOf gives the quantiles of h, a histogram of microseconds, in seconds, with longest
// its exact maximum: a quantile is the highest value equivalent to its bucket, never above
// longest. Histogram carries h in HdrHistogram's V2 compressed encoding (base64), so that
// results of shards merge exactly (MergeLatency).
func LatencyOf(h *hdrhistogram.Histogram, longest time.Duration) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	q := func(p float64) *float64 {
		v := time.Duration(h.ValueAtQuantile(p)) * time.Microsecond
		return new(min(v, longest).Seconds())
	}
	l := Latency{P50: q(50), P90: q(90), P99: q(99), Max: new(longest.Seconds())}
	if b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil { // fails only on a write to memory
		l.Histogram = string(b)
	}
	return l
}

// MergeLatency is the latency of every evaluation of ls together, from their histograms.
func MergeLatency(ls ...Latency) (Latency, error) {
	var sum *hdrhistogram.Histogram
	var longest time.Duration
	for _, l := range ls {
		if l.Histogram == "" {
			if l.Max != nil {
				return Latency{}, fmt.Errorf("latency with quantiles but no histogram: written by a tsbench before histograms were kept")
			}
			continue
		}
		h, err := hdrhistogram.Decode([]byte(l.Histogram))
		if err != nil {
			return Latency{}, fmt.Errorf("decode latency histogram: %w", err)
		}
		if sum == nil {
			sum = h
		} else if dropped := sum.Merge(h); dropped > 0 {
			return Latency{}, fmt.Errorf("merge latency histograms: %d values out of range", dropped)
		}
		if l.Max != nil {
			longest = max(longest, time.Duration(*l.Max*float64(time.Second)))
		}
	}
	if sum == nil {
		return Latency{}, nil
	}
	return LatencyOf(sum, longest), nil
}
