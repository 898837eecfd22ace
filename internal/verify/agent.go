package verify

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
)

// In scrape mode the storages store what the agent sent, not what tsbench served: the agent
// parsed the page's values and, without exposed timestamps, chose its own scrape times. A
// change every storage shows alike is the agent's (issue 21): agentUnits reads every storage
// first, puts those changes into the expectation, and counts them in results.SenderChanges;
// each storage is then checked against what the agent sent.

// agentSample is one storage's answer paired with a served sample.
type agentSample struct {
	t  int64
	v  float64
	ok bool
}

// agentUnits returns units with every sample as the agent sent it, and the agent's changes.
// Units itself is returned with fewer than two storages read through a query API: then the
// agent's changes cannot be told from a storage's.
func (v *Verifier) agentUnits(ctx context.Context, units []unit) ([]unit, *results.SenderChanges) {
	var readers []*reader
	var prom []bool
	for _, t := range v.targets {
		if t.ReadURL != "" {
			readers = append(readers, &reader{api: query.NewAPI(t.Client, t.ReadURL)})
			prom = append(prom, t.Kind.Family().ExactFloats)
		}
	}
	if len(readers) < 2 {
		return units, &results.SenderChanges{Note: "not told apart from the storage's: one storage read back; the read-back counts every change as the storage's"}
	}
	ch := &results.SenderChanges{}
	out := make([]unit, len(units))
	for i, u := range units {
		out[i] = u
		if len(u.series) == 0 || ctx.Err() != nil {
			continue
		}
		answers := make([]map[string][]point, len(readers))
		read := true
		for j, r := range readers {
			got, err := r.instant(ctx, render(u.selector)+fmt.Sprintf("[%dms]", u.hi-u.lo), u.hi)
			if err != nil {
				read = false // the storage's own read-back counts the failure
				break
			}
			v.ignore(got)
			v.dropAgentMarkers(&u, got)
			answers[j] = map[string][]point{}
			for _, s := range got.Series {
				ls, _ := splitReplica(s.Labels)
				answers[j][keyOf(ls)] = append(answers[j][keyOf(ls)], s.Points...)
			}
		}
		if read {
			out[i].series = v.agentSeries(u, answers, prom, ch)
		}
	}
	return out, ch
}

// agentSeries is u's series with each value as the agent sent it, judged from the storages'
// answers; the changes are counted in ch.
//
// What the agent sent is known from two storages or more that returned the sample: a sample
// one storage alone returned says what that storage holds, not what it was given (issue 29),
// so it is expected as served, at the agent's scrape time where other series of the same
// scrape (u is one target: its series of one time are one scrape) showed it alike in every
// storage. Its value, changed or not, is then that storage's to answer for.
func (v *Verifier) agentSeries(u unit, answers []map[string][]point, prom []bool, ch *results.SenderChanges) map[string]*expSeries {
	limit := v.interval/2 - 1
	out := make(map[string]*expSeries, len(u.series))
	scrapedAt := map[int64]int64{} // served time → the agent's scrape time, as the storages agree
	type lone struct {
		s *expSeries
		k int
	}
	var lones []lone
	for key, es := range u.series {
		ns := &expSeries{labels: es.labels, samples: make([]expSample, len(es.samples))}
		copy(ns.samples, es.samples)
		out[key] = ns
		for k, e := range ns.samples {
			if e.stale {
				continue
			}
			got := make([]agentSample, len(answers))
			answered := 0
			for j, a := range answers {
				if got[j] = nearest(a[key], e.t, limit); got[j].ok {
					answered++
				}
			}
			switch answered {
			case 0:
				continue
			case 1:
				lones = append(lones, lone{ns, k})
				continue
			}
			sent, agreed := agentSent(e, got, prom)
			ch.ComparedSamples++
			if !agreed {
				ch.Disagreements++
			}
			if !slices.ContainsFunc(got, func(g agentSample) bool { return g.ok && g.t != sent.t }) {
				scrapedAt[e.t] = sent.t // every storage at one time: the agent's scrape
			}
			if sent.t != e.t {
				ch.ShiftedTimestamps++
				ch.MaxShiftMillis = max(ch.MaxShiftMillis, abs(sent.t-e.t))
			}
			if math.Float64bits(sent.v) != math.Float64bits(e.v) && !(math.IsNaN(sent.v) && math.IsNaN(e.v)) {
				ch.ChangedValues++
				if d, ok := relErr(e.v, sent.v); ok {
					ch.MaxRelativeError = max(ch.MaxRelativeError, d)
				}
			}
			ns.samples[k] = expSample{t: sent.t, v: sent.v}
		}
	}
	for _, l := range lones {
		ch.SingleAnswers++
		if t, ok := scrapedAt[l.s.samples[l.k].t]; ok {
			l.s.samples[l.k].t = t
		}
	}
	return out
}

// maxParseError bounds the relative error an agent's float parsing makes of a served value:
// vmagent's reads some decimals one unit in the last place off (up to 2.7e-16 seen in e2e
// TestScrapeVMAgent); four units leave room. Prometheus' parser makes none.
const maxParseError = 0x1p-50

// agentSent is what the agent sent for the served sample e, from the answers got of two
// storages or more: their common answer when the storages that returned it agree. When they
// do not, one of them at least changed what it was given: the agent sent what a Prometheus
// storage returned (its TSDB keeps the float64 bits and milliseconds it receives, where
// VictoriaMetrics' decimal encoding may turn a value the agent parsed one unit off back into
// the served one) if its value is one the agent's parsing could have made of the served one,
// else as served, at the time the storages agree on (the agent's scrape time). A Prometheus
// storage's value further off is its own change, not the agent's (issue 29, item 5: a
// Prometheus that rounded what it stored had the rounding charged to vmagent and to the
// VictoriaMetrics beside it). A change within a few units in the last place at Prometheus
// beside VictoriaMetrics stays ambiguous: the agent's parsing undone by VictoriaMetrics'
// encoding looks the same. A storage that returned nothing for it is left out
// (VictoriaMetrics drops NaN; a missing sample is its own verdict).
func agentSent(e expSample, got []agentSample, prom []bool) (sent agentSample, agreed bool) {
	same := func(a, b agentSample) bool {
		return a.t == b.t && (math.Float64bits(a.v) == math.Float64bits(b.v) || math.IsNaN(a.v) && math.IsNaN(b.v))
	}
	agreed = true
	for _, g := range got {
		switch {
		case !g.ok:
		case !sent.ok:
			sent = g
		default:
			agreed = agreed && same(g, sent)
		}
	}
	if agreed {
		return sent, true
	}
	for j, g := range got {
		if prom[j] && g.ok && parsedFrom(e.v, g.v) {
			return g, false
		}
	}
	// As served, at the time every storage that returned it shows, where they agree on one:
	// the agent's scrape time is the agent's, whoever changed the value.
	t := sent.t
	for _, g := range got {
		if g.ok && g.t != t {
			t = e.t
		}
	}
	return agentSample{t: t, v: e.v, ok: true}, false
}

// parsedFrom reports whether an agent's float parsing could have read got from the served
// value: the same bits, NaN for NaN, or within maxParseError.
func parsedFrom(served, got float64) bool {
	if math.Float64bits(served) == math.Float64bits(got) || math.IsNaN(served) && math.IsNaN(got) {
		return true
	}
	d, ok := relErr(served, got)
	return ok && d <= maxParseError
}

// nearest is the point of pts closest in time to t, within limit ms.
func nearest(pts []point, t, limit int64) agentSample {
	best := agentSample{}
	bestD := limit + 1
	for _, p := range pts {
		if d := abs(p.T - t); d < bestD && !isStale(p.V) {
			best, bestD = agentSample{t: p.T, v: p.V, ok: true}, d
		}
	}
	return best
}
