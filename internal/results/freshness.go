package results

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Freshness is how soon a storage lets a query see what it acknowledged, measured on
// tsbench's canary series (issue 21): the time from a canary sample's ack to the start of the
// first query, made after the ack, that returns it. The canary is apart from the workload: not
// in Write's account, the read-back or the query load.
type Freshness struct {
	// IntervalSeconds is freshness.interval: each probe's first poll after a sample's ack,
	// the finest resolution. WriteIntervalSeconds is how often a canary sample is written:
	// freshness.writeInterval, or when that is 0 what keeps the canary's queries at a tenth
	// of the workload's read load (ReadLoadQueriesPerSecond).
	IntervalSeconds      float64 `json:"intervalSeconds"`
	WriteIntervalSeconds float64 `json:"writeIntervalSeconds"`
	// PollSeconds are the schedule's ladder: the times after its ack at which each probe
	// asks for its first sample, the same on every storage (issue 29, item 8). Every later
	// sample is asked for as many times, at the ladder's first and last poll and between them
	// where the probe's latest samples showed (issue 37, item 6; the probe's
	// LastPollSeconds). A probe's figure for a sample is the poll that returned it, after
	// the one before.
	PollSeconds []float64 `json:"pollSeconds,omitempty"`
	// ReadLoadQueriesPerSecond is the workload's own read load on the storage as planned
	// (rules, panels and index lookups, each once per its interval), which the canary's
	// QueriesPerSecond is held to a tenth of by default.
	ReadLoadQueriesPerSecond float64 `json:"readLoadQueriesPerSecond,omitempty"`
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
	// over the time they ran (len(PollSeconds) per probe per sample, on every storage).
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
	// that returned them. LowerBoundSeconds is the time from their ack to the last query
	// before it, made after the ack, that did not (0 when none did): each sample showed
	// between the two, so each true quantile lies between LowerBoundSeconds' and Seconds'.
	// That interval is the resolution the poll schedule buys on this storage.
	Visible           int64   `json:"visible"`
	Seconds           Latency `json:"seconds"`
	LowerBoundSeconds Latency `json:"lowerBoundSeconds"`
	// NeverVisible samples were not returned within freshness.timeout of their ack.
	NeverVisible int64 `json:"neverVisible"`
	// Pending samples were acked less than freshness.timeout before the end and not seen yet.
	Pending int64 `json:"pending"`
	// Abandoned samples were pending at the checkpoint a resumed run continued from: acked
	// before the restart, and no one looked for them since.
	Abandoned int64 `json:"abandoned,omitempty"`
	// Queries is how many times the probe asked; Errors how many of those failed, by kind.
	// MergedPolls are polls that fell due while the probe's previous query was still in
	// flight, answered by one query with the next: a storage slower to answer than the gap
	// between two polls is asked less, never more.
	Queries     int64            `json:"queries"`
	MergedPolls int64            `json:"mergedPolls,omitempty"`
	Errors      map[string]int64 `json:"errors,omitempty"`
	FirstError  string           `json:"firstError,omitempty"`
	// LastPollSeconds are the times after its ack at which the probe asked for its newest
	// sample whose polls the end of the run did not cut: the ladder's ends
	// (Freshness.PollSeconds), and between them the polls its staircase placed where the
	// latest samples showed. (A sample the end cuts is asked for at the ladder, the same cut
	// on every storage.) Absent from results written before issue 37, whose every sample was
	// asked for at PollSeconds.
	LastPollSeconds []float64        `json:"lastPollSeconds,omitempty"`
	Timeline        []FreshnessPoint `json:"timeline,omitempty"`
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

// LowerBoundOf is LatencyOf for lower bounds: each quantile the lowest value of its bucket,
// so that it is never above the quantile of what h recorded, with longest its exact maximum.
func LowerBoundOf(h *hdrhistogram.Histogram, longest time.Duration) Latency {
	l := LatencyOf(h, longest)
	if l.P50 == nil {
		return l
	}
	bars := h.Distribution()
	q := func(p float64) *float64 {
		v := h.ValueAtQuantile(p)
		for _, b := range bars {
			if b.From <= v && v <= b.To {
				v = b.From
				break
			}
		}
		return new(min(time.Duration(v)*time.Microsecond, longest).Seconds())
	}
	l.P50, l.P90, l.P99 = q(50), q(90), q(99)
	return l
}
