package freshness

import (
	"math"
	"slices"
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// PollsPerSample is how many times each probe asks for each canary sample, on every storage:
// the first sample at eight polls spaced geometrically from freshness.interval to the write
// interval (at the default workload 0.1, 0.23, 0.55, 1.3, 3.0, 7.1, 16.5 and 38.7 s after
// the ack: within a factor of about 2.3 everywhere), every later one at the first and last of
// those and six placed by the probe's staircase (staircase.go).
const PollsPerSample = 8

// probes is how many probes ask per poll: an instant query, a range query and a series lookup.
const probes = 3

// LoadShare is the largest share of the workload's own read load the canary's queries take
// when freshness.writeInterval is 0, the default: a tenth.
const LoadShare = 0.1

// Schedule is when the canary writes and asks, the same for every storage.
type Schedule struct {
	// Write is the time between two canary samples.
	Write time.Duration
	// Polls are the ladder, ascending: the times after its ack at which each probe asks for
	// its first sample, and the first and last of every later sample's polls.
	Polls []time.Duration
}

// NewSchedule is the schedule of cfg for a workload that reads readLoad queries per second
// from each storage. Its write interval is cfg.WriteInterval, or when that is 0 the shortest
// that keeps the canary's queries, probes × PollsPerSample per sample, at LoadShare of
// readLoad (a workload that reads nothing gets one sample per cfg.Timeout). The polls go
// geometrically from cfg.Interval to the write interval, or the timeout if that is sooner;
// later than that, the next samples' polls look for a sample still unseen.
func NewSchedule(cfg config.Freshness, readLoad float64) Schedule {
	w := cfg.WriteInterval
	if w <= 0 {
		w = cfg.Timeout
		if readLoad > 0 {
			secs := probes * PollsPerSample / (LoadShare * readLoad)
			w = time.Duration(math.Ceil(secs*1000)) * time.Millisecond // rounded up: never above the share
		}
	}
	w = max(w, cfg.Interval)
	last := min(w, cfg.Timeout)
	ratio := float64(last) / float64(cfg.Interval)
	polls := make([]time.Duration, 0, PollsPerSample)
	for k := range PollsPerSample {
		d := time.Duration(float64(cfg.Interval) * math.Pow(ratio, float64(k)/(PollsPerSample-1))).Round(time.Millisecond)
		if k == PollsPerSample-1 {
			d = last // exact, not rounded
		}
		polls = append(polls, max(d, cfg.Interval))
	}
	return Schedule{Write: w, Polls: slices.Compact(polls)}
}

// QueriesPerSecond is the canary's planned load on a storage: every probe's polls of one
// sample per write interval.
func (s Schedule) QueriesPerSecond() float64 {
	return float64(probes*len(s.Polls)) / s.Write.Seconds()
}
