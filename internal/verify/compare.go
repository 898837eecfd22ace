package verify

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// maxExamples bounds the difference lines kept per storage.
const maxExamples = 10

// urlReplicaLabel is added by writeURLReplicas (extra_label=url_replica=N): each value of it
// is one copy of the workload, checked on its own.
const urlReplicaLabel = "url_replica"

// tally accumulates one storage's read-back counts; results.Verify is filled from it.
type tally struct {
	results.SampleCounts // MissingStaleMarkers: export and remote read only, markers not stored
	staleIgnored, series int64
	maxShift             int64
	examples             []string
	held                 [3]heldTally // by held kind (series.go)
	// notAcked says a sample was in a write the storage did not ack in full (Target.NotAcked;
	// nil: none); notAckedSamples counts those not looked for.
	notAcked        func(t int64) bool
	notAckedSamples int64
}

func (t *tally) example(format string, args ...any) {
	if len(t.examples) < maxExamples {
		t.examples = append(t.examples, fmt.Sprintf(format, args...))
	}
}

func (t *tally) fill(v *results.Verify) {
	v.AddSampleCounts(t.SampleCounts)
	v.StalenessIgnored += t.staleIgnored
	v.MaxShiftMillis = max(v.MaxShiftMillis, t.maxShift)
	v.CheckedSeries += t.series
	v.NotAckedSamples += t.notAckedSamples
	v.Examples = append(v.Examples, t.examples[:min(len(t.examples), maxExamples-len(v.Examples))]...)
	t.fillHeld(v)
}

// compareUnit compares a range read of u with what was written. copies is the number of
// url_replica copies written (1 without writeURLReplicas).
func compareUnit(u *unit, got *result, copies int, shiftLimit int64, markers bool, t *tally) {
	// Group the answer by series identity, url_replica split off as the copy.
	type copySet map[string][]point
	byKey := map[string]copySet{}
	var keys []string
	for _, s := range got.Series {
		ls, replica := splitReplica(s.Labels)
		key := keyOf(ls)
		cs := byKey[key]
		if cs == nil {
			cs = copySet{}
			byKey[key] = cs
			keys = append(keys, key)
		}
		cs[replica] = append(cs[replica], s.Points...)
	}
	expKeys := make([]string, 0, len(u.series))
	for k := range u.series {
		expKeys = append(expKeys, k)
	}
	sort.Strings(expKeys)
	for _, key := range expKeys {
		es := u.series[key]
		cs := byKey[key]
		replicas := make([]string, 0, len(cs))
		for r := range cs {
			replicas = append(replicas, r)
		}
		sort.Strings(replicas)
		for i, r := range replicas {
			if i >= copies {
				for _, p := range cs[r] {
					t.UnexpectedSamples++
					t.example("unexpected copy %s=%q of %s at %d", urlReplicaLabel, r, render(es.labels), p.T)
				}
				continue
			}
			t.series++
			compareSeries(es, cs[r], shiftLimit, markers, t)
		}
		for range copies - len(replicas) {
			t.series++
			compareSeries(es, nil, shiftLimit, markers, t)
		}
		delete(byKey, key)
	}
	for _, key := range keys {
		for r, pts := range byKey[key] {
			for _, p := range pts {
				t.UnexpectedSamples++
				if len(t.examples) < maxExamples {
					ls := labelsFromKey(key)
					if r != "" {
						ls = append(ls, label{Name: urlReplicaLabel, Value: r})
					}
					t.example("unexpected series %s at %d", render(ls), p.T)
				}
			}
		}
	}
}

// compareSeries compares one series' answer with its written samples. Staleness markers in
// the answer are accepted but, unless markers is set (a raw export), not required: PromQL
// range selectors do not return them in Prometheus (VictoriaMetrics returns them as NaN),
// and they are checked by checkStaleness.
func compareSeries(es *expSeries, got []point, shiftLimit int64, markers bool, t *tally) {
	sort.SliceStable(got, func(i, j int) bool { return got[i].T < got[j].T })
	// Duplicates: every answer beyond the first for one timestamp.
	uniq := got[:0:0]
	for i, p := range got {
		if i > 0 && p.T == got[i-1].T {
			t.DuplicateSamples++
			t.example("duplicate %s at %d", render(es.labels), p.T)
			continue
		}
		uniq = append(uniq, p)
	}
	at := make(map[int64]int, len(uniq)) // timestamp → index in uniq
	for i, p := range uniq {
		at[p.T] = i
	}
	used := make([]bool, len(uniq))
	var unmatched []expSample
	for _, e := range es.samples {
		if e.held == 0 && t.notAcked != nil && t.notAcked(e.t) {
			// tsbench dropped the write that carried it, or had it acked in part: the storage
			// may hold it or not, and neither is its doing. (A held sample is judged by its
			// kind's verdict, refused or not, below.)
			if i, ok := at[e.t]; ok {
				used[i] = true
			}
			if !e.stale {
				t.notAckedSamples++
			}
			continue
		}
		if e.unsent || (e.held != 0 && !e.stale) {
			// A held sample is counted by its kind's verdict, not as missing: refusing one is
			// the storage's documented choice, shown beside its account.
			if i, ok := at[e.t]; ok {
				used[i] = true
				if !e.unsent {
					t.held[e.held].stored++
					compareValue(es, e, uniq[i].V, t)
				}
			}
			if !e.unsent {
				t.held[e.held].checked++
			}
			continue
		}
		if !e.stale {
			t.CheckedSamples++
		} else if markers {
			t.CheckedStaleMarkers++
		}
		i, ok := at[e.t]
		if !ok {
			unmatched = append(unmatched, e)
			continue
		}
		used[i] = true
		compareValue(es, e, uniq[i].V, t)
	}
	// Pair what is left by nearest timestamp within shiftLimit: a shifted sample.
	var extra []point
	for i, p := range uniq {
		if !used[i] {
			extra = append(extra, p)
		}
	}
	for _, e := range unmatched {
		best, bestD := -1, shiftLimit+1
		for i, p := range extra {
			if d := abs(p.T - e.t); d < bestD && p.T != math.MinInt64 {
				best, bestD = i, d
			}
		}
		if best < 0 || bestD > shiftLimit {
			t.notFound(es, e, markers)
			continue
		}
		p := extra[best]
		extra[best].T = math.MinInt64 // taken
		if !e.stale {
			t.ShiftedTimestamps++
			t.maxShift = max(t.maxShift, bestD)
			t.example("shifted %s from %d to %d", render(es.labels), e.t, p.T)
		}
		compareValue(es, e, p.V, t)
	}
	for _, p := range extra {
		if p.T != math.MinInt64 {
			t.UnexpectedSamples++
			t.example("unexpected sample %s at %d (%s)", render(es.labels), p.T, fmtFloat(p.V))
		}
	}
}

// notFound counts a written sample no answer had, nor one shifted within the limit: a
// missing sample, a NaN dropped, or (where raw samples show them) a marker not stored.
func (t *tally) notFound(es *expSeries, e expSample, markers bool) {
	switch {
	case e.stale:
		if markers {
			t.MissingStaleMarkers++
			t.example("staleness marker not stored: %s at %d", render(es.labels), e.t)
		}
	case math.IsNaN(e.v):
		t.NaNAltered++
		t.example("NaN missing: %s at %d", render(es.labels), e.t)
	default:
		t.MissingSamples++
		t.example("missing %s at %d (%s)", render(es.labels), e.t, fmtFloat(e.v))
	}
}

// compareValue checks one answer against its written sample: bit for bit, NaN as NaN (the
// JSON API renders every NaN as "NaN", so NaN payloads are not observable).
func compareValue(es *expSeries, e expSample, got float64, t *tally) {
	switch {
	case e.stale:
		// A marker returned as NaN is the marker; a number instead is a changed value, with
		// no relative error.
		if !math.IsNaN(got) {
			t.ChangedValues++
			t.ChangedWithoutRelativeError++
			t.example("staleness marker of %s at %d returned as %s", render(es.labels), e.t, fmtFloat(got))
		}
	case math.IsNaN(e.v):
		if !math.IsNaN(got) {
			t.NaNAltered++
			t.example("NaN altered: %s at %d returned as %s", render(es.labels), e.t, fmtFloat(got))
		}
	case math.Float64bits(got) != math.Float64bits(e.v):
		t.ChangedValues++
		if d, ok := relErr(e.v, got); ok {
			t.MaxRelativeError = max(t.MaxRelativeError, d)
		} else {
			t.ChangedWithoutRelativeError++
		}
		t.example("changed %s at %d: wrote %s, got %s", render(es.labels), e.t, fmtFloat(e.v), fmtFloat(got))
	}
}

// relErr is |got - want| / |want|, defined (ok) only when that is a finite number, since
// results.json cannot hold ±Inf or NaN: not for a 0 written (nor -0 for 0), ±Inf or NaN on
// either side, or a quotient that overflows (|want| below 1).
func relErr(want, got float64) (d float64, ok bool) {
	d = math.Abs(got-want) / math.Abs(want)
	return d, !math.IsInf(d, 0) && !math.IsNaN(d)
}

func splitReplica(ls []label) ([]label, string) {
	for i, l := range ls {
		if l.Name == urlReplicaLabel {
			out := append(append([]label{}, ls[:i]...), ls[i+1:]...)
			return out, l.Value
		}
	}
	return ls, ""
}

func labelsFromKey(key string) []label {
	var ls []label
	for pair := range strings.SplitSeq(strings.TrimSuffix(key, "\xff"), "\xff") {
		if pair == "" {
			continue
		}
		n, v, _ := strings.Cut(pair, "\xfe")
		ls = append(ls, label{Name: n, Value: v})
	}
	return ls
}

// render writes a label set as a PromQL selector: {__name__="x",a="b"}.
func render(ls []label) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		if legacyName.MatchString(l.Name) {
			b.WriteString(l.Name)
		} else {
			b.WriteString(quote(l.Name)) // Prometheus 3's quoted name: service.name (otlpLabels)
		}
		b.WriteByte('=')
		b.WriteString(quote(l.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// legacyName is a label name PromQL takes unquoted.
var legacyName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// quote renders a PromQL string literal; PromQL strings take Go's escapes.
func quote(s string) string { return fmt.Sprintf("%q", s) }

// fmtFloat renders v exactly (the shortest text that parses back to the same bits), without
// an exponent for the magnitudes of timestamps and counters.
func fmtFloat(v float64) string {
	if a := math.Abs(v); a >= 1e-4 && a < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
