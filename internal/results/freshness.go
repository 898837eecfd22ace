package results

import "math"

// Freshness is how soon a storage lets a query see what it acknowledged, measured on
// tsbench's canary series (issue 21): the time from a canary sample's ack to the start of the
// first query, made after the ack, that returns it. The canary is apart from the workload: not
// in Write's account, the read-back or the query load.
type Freshness struct {
	// IntervalSeconds is freshness.interval: how often each probe asks, the figures'
	// resolution. WriteIntervalSeconds is how often a canary sample is written.
	IntervalSeconds      float64 `json:"intervalSeconds"`
	WriteIntervalSeconds float64 `json:"writeIntervalSeconds"`
	// Written is how many canary requests were sent, Acked how many the storage answered
	// with a 2xx; WriteErrors counts the rest by what happened, FirstWriteError says it.
	Written     int64            `json:"written"`
	Acked       int64            `json:"acked"`
	WriteErrors map[string]int64 `json:"writeErrors,omitempty"`
	// AckedSamples is what the storage ingested of the canary: 2 samples per acked request.
	// Its own ingestion counters hold them beside the workload's acked samples.
	AckedSamples    int64  `json:"ackedSamples"`
	FirstWriteError string `json:"firstWriteError,omitempty"`
	// QueriesPerSecond is the polling's own load on the storage: the queries of every probe
	// over the time they ran.
	QueriesPerSecond float64 `json:"queriesPerSecond"`
	// Instant is an instant query of the canary at now, Range a range query over the last 5
	// minutes (caches and rollup results differ from instant queries), Series the index:
	// /api/v1/series for the canary series of one sample each.
	Instant *FreshnessProbe `json:"instant,omitempty"`
	Range   *FreshnessProbe `json:"range,omitempty"`
	Series  *FreshnessProbe `json:"series,omitempty"`
}

// FreshnessProbe is one way of asking. Every acked canary sample lands in exactly one of
// Visible, NeverVisible, Pending and Abandoned: Acked == Visible + NeverVisible + Pending +
// Abandoned.
type FreshnessProbe struct {
	Query string `json:"query"`
	// Visible samples were returned; Seconds is the time from their ack to the first query
	// that returned them.
	Visible int64   `json:"visible"`
	Seconds Latency `json:"seconds"`
	// NeverVisible samples were not returned within freshness.timeout of their ack.
	NeverVisible int64 `json:"neverVisible"`
	// Pending samples were acked less than freshness.timeout before the end and not seen yet.
	Pending int64 `json:"pending"`
	// Abandoned samples were pending at the checkpoint a resumed run continued from: acked
	// before the restart, and no one looked for them since.
	Abandoned int64 `json:"abandoned,omitempty"`
	// Queries is how many times the probe asked; Errors how many of those failed, by kind.
	Queries    int64            `json:"queries"`
	Errors     map[string]int64 `json:"errors,omitempty"`
	FirstError string           `json:"firstError,omitempty"`
	Timeline   []FreshnessPoint `json:"timeline,omitempty"`
}

// FreshnessPoint is one observeInterval of a probe: the samples that became visible in it,
// their median and largest freshness, and the samples given up in it.
type FreshnessPoint struct {
	Time         string   `json:"time"`
	Visible      int64    `json:"visible"`
	P50          *float64 `json:"p50"`
	Max          *float64 `json:"max"`
	NeverVisible int64    `json:"neverVisible"`
	// N is how many intervals the point stands for (0: one) in a long run's downsampled
	// timeline (Timeline): counts added up, P50 their mean weighed by Visible, Max the largest.
	N int `json:"n,omitempty"`
}

// Count is how many intervals the point stands for.
func (p FreshnessPoint) Count() int { return count(p.N) }

// Merge adds the counts, weighs p50 by the samples seen and keeps the largest max.
func (p FreshnessPoint) Merge(later FreshnessPoint) FreshnessPoint {
	out := later
	out.N = p.Count() + later.Count()
	out.Visible += p.Visible
	out.NeverVisible += p.NeverVisible
	out.P50 = mean(p.P50, int(p.Visible), later.P50, int(later.Visible))
	out.Max = extreme(math.Max, p.Max, later.Max)
	return out
}
