package verify

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
)

// lookbackMillis is Prometheus' default lookback delta (5m): an instant selector returns the
// newest sample at most this old.
const lookbackMillis = 5 * 60_000

// probe is one PromQL behaviour with the answer Prometheus gives, computed from the workload.
type probe struct {
	name, query string
	at          int64 // instant query time, ms
	// start, end, step (ms) make it a range query when step > 0.
	start, end, step int64
	want             *result
	wantErr          bool    // a rejected query (type error) is the right answer
	tol              float64 // relative tolerance on values; 0: bit-exact
}

// probes builds the fixed probe set over the written data: reference series are taken from
// the units read, so their samples are known. A probe whose data the run lacks (no NaN
// series in the profile, no churn in the window) is left out. A non-empty replica selects
// that url_replica copy, for a storage that keeps writeURLReplicas copies apart: each probe
// asks about one series.
func probes(units []unit, w window, interval int64, replica string) []probe {
	ref, refLast, nan, churn := probeSeries(units, w)
	var ps []probe
	if ref == nil {
		return ps
	}
	at := refLast.t + 1
	refLabels := withReplica(ref.labels, replica)
	sel := render(refLabels)
	noName := dropName(refLabels)
	ps = append(ps,
		probe{
			name: "time() is a scalar", query: "time()", at: at,
			want: &result{Type: "scalar", Series: []series{{Points: []point{{at, float64(at) / 1000}}}}},
		},
		probe{
			name: "scalar() is a scalar", query: "scalar(vector(1))", at: at,
			want: &result{Type: "scalar", Series: []series{{Points: []point{{at, 1}}}}},
		},
		probe{name: "sum(time()) is a type error", query: "sum(time())", at: at, wantErr: true},
		probe{
			name: "vector(0) - metric matches no labelled series", query: "vector(0) - " + sel, at: at,
			want: &result{Type: "vector"},
		},
		probe{
			name: "instant query in the newest minute", query: sel, at: at,
			want: &result{Type: "vector", Series: []series{{Labels: refLabels, Points: []point{{at, refLast.v}}}}},
		},
		probe{
			name: "millisecond timestamps", query: "timestamp(" + sel + ")", at: at,
			want: &result{Type: "vector", Series: []series{{Labels: noName, Points: []point{{at, float64(refLast.t) / 1000}}}}},
		},
	)
	// avg_over_time over the reference's samples of the last 3 scrape intervals.
	rng := 3*interval - 1
	var sum float64
	var n int
	for _, e := range ref.samples {
		if !e.stale && e.t > at-rng && e.t <= at {
			sum += e.v
			n++
		}
	}
	if n > 0 {
		ps = append(ps, probe{
			name: "avg_over_time drops the metric name", query: fmt.Sprintf("avg_over_time(%s[%dms])", sel, rng), at: at, tol: 1e-9,
			want: &result{Type: "vector", Series: []series{{Labels: noName, Points: []point{{at, sum / float64(n)}}}}},
		})
	}
	if nan != nil {
		last, _ := lastValue(nan)
		ls := withReplica(nan.labels, replica)
		ps = append(ps, probe{
			name: "NaN value is returned", query: render(ls), at: last.t + 1,
			want: &result{Type: "vector", Series: []series{{Labels: ls, Points: []point{{last.t + 1, math.NaN()}}}}},
		})
	}
	if churn != nil {
		if p, ok := stalenessProbe(churn, interval, replica); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// probeSeries picks the series the probes ask about, from the units read: the reference, a
// numeric series with the newest sample in the window (nil when there is none); a series
// whose last sample is NaN; and the first unit with a staleness marker in the window.
func probeSeries(units []unit, w window) (ref *expSeries, refLast expSample, nan *expSeries, churn *unit) {
	for i := range units {
		u := &units[i]
		if u.marker && churn == nil && u.markerT <= w.to {
			churn = u
		}
		for _, key := range slices.Sorted(maps.Keys(u.series)) {
			s := u.series[key]
			last, ok := lastValue(s)
			if !ok {
				continue
			}
			if math.IsNaN(last.v) {
				if nan == nil {
					nan = s
				}
				continue
			}
			if ref == nil || last.t > refLast.t {
				ref, refLast = s, last
			}
			break // one candidate per unit is enough
		}
	}
	// NaN series may sort after the first numeric one: look for one in every unit.
	for i := range units {
		if nan != nil {
			break
		}
		for _, key := range slices.Sorted(maps.Keys(units[i].series)) {
			s := units[i].series[key]
			if last, ok := lastValue(s); ok && math.IsNaN(last.v) {
				nan = s
				break
			}
		}
	}
	return ref, refLast, nan, churn
}

// stalenessProbe is a range query over the staleness marker of the first of churn's series
// that ends in one; false when none does.
func stalenessProbe(churn *unit, interval int64, replica string) (probe, bool) {
	for _, key := range slices.Sorted(maps.Keys(churn.series)) {
		s := churn.series[key]
		last, ok := lastValue(s)
		if !ok || math.IsNaN(last.v) || len(s.samples) == 0 || !s.samples[len(s.samples)-1].stale {
			continue
		}
		// Steps of half an interval from two scrapes before the marker to two after:
		// Prometheus returns the last value up to the marker and nothing from it on.
		// Evaluation times are multiples of the step, as a storage that aligns a range
		// query's start to its step (VictoriaMetrics) would make them anyway.
		step := max(1, interval/2)
		start := (churn.markerT-2*interval)/step*step + step
		end := (churn.markerT + 2*interval) / step * step
		want := &result{Type: "matrix"}
		var pts []point
		for ts := start; ts <= end; ts += step {
			if v, ok := valueAt(s, ts); ok {
				pts = append(pts, point{ts, v})
			}
		}
		ls := withReplica(s.labels, replica)
		if len(pts) > 0 {
			want.Series = []series{{Labels: ls, Points: pts}}
		}
		return probe{
			name: "range query stops at the staleness marker", query: render(ls),
			start: start, end: end, step: step, want: want,
		}, true
	}
	return probe{}, false
}

// valueAt is what an instant selector returns at ts: the newest sample at or before ts within
// the lookback, none when that sample is a staleness marker.
func valueAt(s *expSeries, ts int64) (float64, bool) {
	var last *expSample
	for i := range s.samples {
		if s.samples[i].t <= ts {
			last = &s.samples[i]
		}
	}
	if last == nil || last.stale || ts-last.t > lookbackMillis {
		return 0, false
	}
	return last.v, true
}

// withReplica adds url_replica=replica to ls (sorted by name) unless replica is empty.
func withReplica(ls []label, replica string) []label {
	if replica == "" {
		return ls
	}
	out := make([]label, 0, len(ls)+1)
	added := false
	for _, l := range ls {
		if !added && l.Name > urlReplicaLabel {
			out = append(out, label{Name: urlReplicaLabel, Value: replica})
			added = true
		}
		out = append(out, l)
	}
	if !added {
		out = append(out, label{Name: urlReplicaLabel, Value: replica})
	}
	return out
}

func lastValue(s *expSeries) (expSample, bool) {
	if s.held {
		return expSample{}, false // its newest samples may be refused or not sent yet: no probe
	}
	for _, smp := range slices.Backward(s.samples) {
		if !smp.stale {
			return smp, true
		}
	}
	return expSample{}, false
}

func dropName(ls []label) []label {
	out := make([]label, 0, len(ls))
	for _, l := range ls {
		if l.Name != "__name__" {
			out = append(out, l)
		}
	}
	return out
}

// runProbes asks one storage every probe.
func runProbes(ctx context.Context, r *reader, ps []probe) []results.Probe {
	out := make([]results.Probe, 0, len(ps))
	for _, p := range ps {
		var got *result
		var err error
		if p.step > 0 {
			got, err = r.rangeQuery(ctx, p.query, p.start, p.end, p.step)
		} else {
			got, err = r.instant(ctx, p.query, p.at)
		}
		rp := results.Probe{Name: p.name, Query: p.query, Expected: renderWant(p), Got: renderGot(got, err)}
		switch {
		case p.wantErr:
			// Only the engine's rejection is the answer: a 404 page or a refused connection
			// is no answer at all.
			rp.Same = query.IsPromQLError(err)
		case err == nil:
			rp.Same = sameResult(p.want, got, p.tol)
		}
		out = append(out, rp)
	}
	return out
}

func renderWant(p probe) string {
	if p.wantErr {
		return "error (query rejected)"
	}
	return renderResult(p.want)
}

func renderGot(r *result, err error) string {
	if err != nil {
		return describeErr(err)
	}
	return renderResult(r)
}

// renderResult is a compact, deterministic rendering: type, then each series with its points
// as value@seconds (at most 5 series and 10 points each).
func renderResult(r *result) string {
	var b strings.Builder
	b.WriteString(r.Type)
	if r.Type == "scalar" && len(r.Series) == 1 && len(r.Series[0].Points) == 1 {
		b.WriteString(" " + fmtFloat(r.Series[0].Points[0].V))
		return b.String()
	}
	if len(r.Series) == 0 {
		b.WriteString(" (empty)")
		return b.String()
	}
	ss := append([]series{}, r.Series...)
	sort.Slice(ss, func(i, j int) bool { return keyOf(ss[i].Labels) < keyOf(ss[j].Labels) })
	for i, s := range ss {
		if i == 5 {
			fmt.Fprintf(&b, " … %d series", len(ss))
			break
		}
		b.WriteString(" " + render(s.Labels))
		for j, p := range s.Points {
			if j == 10 {
				fmt.Fprintf(&b, " … %d points", len(s.Points))
				break
			}
			b.WriteString(" " + fmtFloat(p.V) + "@" + query.FormatMillis(p.T))
		}
	}
	return b.String()
}

// sameResult compares two answers: same type, same series (by labels), same timestamps, and
// values equal within the relative tolerance tol (NaN equals NaN).
func sameResult(want, got *result, tol float64) bool {
	if want.Type != got.Type || len(want.Series) != len(got.Series) {
		return false
	}
	index := map[string]series{}
	for _, s := range got.Series {
		index[keyOf(s.Labels)] = s
	}
	for _, w := range want.Series {
		g, ok := index[keyOf(w.Labels)]
		if !ok || len(g.Points) != len(w.Points) {
			return false
		}
		for i := range w.Points {
			if g.Points[i].T != w.Points[i].T || !closeEnough(w.Points[i].V, g.Points[i].V, tol) {
				return false
			}
		}
	}
	return true
}

// closeEnough: NaN equals NaN; with tol 0 the bits must match (but 0 == -0), else
// |a-b| <= tol × max(|a|, |b|).
func closeEnough(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if a == b {
		return true
	}
	if tol == 0 {
		return false
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}
