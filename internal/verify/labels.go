package verify

import (
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// Attribution of samples missing under their own labels (issue 21): a storage, or the
// protocol's translation, may keep every value under another label set (OTLP's job and
// instance as service.name and service.instance.id). The units whose read returned nothing are
// searched by metric name alone; a series with the same name holding the same values at the
// same timestamps is the written one under other labels, and the difference of the two label
// sets is the mapping. The units are then read again under the mapping, and what is found
// counts as renamed, not missing.

// maxLearnUnits bounds the units searched by metric name to learn the mapping: the answers
// hold every target's series of the names asked, so a few units suffice.
const maxLearnUnits = 3

// namesPerSearch is how many metric names one search asks for.
const namesPerSearch = 4

// labelMap is a mapping learned: renamed label names, labels dropped, labels added.
type labelMap struct {
	rename map[string]string // written name → stored name
	drop   map[string]bool   // written, not stored
	add    map[string]bool   // stored, not written (values ignored)
}

func (m labelMap) empty() bool { return len(m.rename)+len(m.drop)+len(m.add) == 0 }

// changes lists the mapping as results, each with the series found under it.
func (m labelMap) changes(series int64) []results.LabelChange {
	var out []results.LabelChange
	for from, to := range m.rename {
		out = append(out, results.LabelChange{From: from, To: to, Series: series})
	}
	for from := range m.drop {
		out = append(out, results.LabelChange{From: from, Series: series})
	}
	for to := range m.add {
		out = append(out, results.LabelChange{To: to, Series: series})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].From+"\x00"+out[i].To < out[j].From+"\x00"+out[j].To
	})
	return out
}

// apply maps a written label set to the stored one (added labels left out), sorted by name.
func (m labelMap) apply(ls []label) []label {
	out := make([]label, 0, len(ls))
	for _, l := range ls {
		if m.drop[l.Name] {
			continue
		}
		if to, ok := m.rename[l.Name]; ok {
			l.Name = to
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// mapUnit returns u with its selector and expected series under m.
func mapUnit(u unit, m labelMap) unit {
	u.selector = m.apply(u.selector)
	series := make(map[string]*expSeries, len(u.series))
	for _, s := range u.series {
		ls := m.apply(s.labels)
		series[keyOf(ls)] = &expSeries{labels: ls, samples: s.samples}
	}
	u.series = series
	return u
}

// diffLabels is the mapping from a written label set to a stored one: a label whose value
// is stored under another name (not written) is renamed, one whose value is gone is dropped,
// and stored names left over are added.
func diffLabels(written, stored []label) labelMap {
	m := labelMap{rename: map[string]string{}, drop: map[string]bool{}, add: map[string]bool{}}
	has := func(ls []label, name string) (string, bool) {
		for _, l := range ls {
			if l.Name == name {
				return l.Value, true
			}
		}
		return "", false
	}
	used := map[string]bool{}
	for _, w := range written {
		if v, ok := has(stored, w.Name); ok && v == w.Value {
			used[w.Name] = true
		}
	}
	for _, w := range written {
		if used[w.Name] {
			continue
		}
		found := false
		for _, s := range stored {
			if _, written := has(written, s.Name); !written && !used[s.Name] && s.Value == w.Value {
				m.rename[w.Name], used[s.Name], found = s.Name, true, true
				break
			}
		}
		if !found {
			m.drop[w.Name] = true
		}
	}
	for _, s := range stored {
		if _, written := has(written, s.Name); !used[s.Name] && !written {
			m.add[s.Name] = true
		}
	}
	return m
}

// sameSamples reports whether got holds every value of es (not markers, not NaN) at its
// timestamp with its bits, and at least one.
func sameSamples(es *expSeries, got []point) bool {
	at := make(map[int64]float64, len(got))
	for _, p := range got {
		at[p.T] = p.V
	}
	n := 0
	for _, e := range es.samples {
		if e.stale || math.IsNaN(e.v) {
			continue
		}
		v, ok := at[e.t]
		if !ok || math.Float64bits(v) != math.Float64bits(e.v) {
			return false
		}
		n++
	}
	return n > 0
}

// sharedValues counts the label values of a written set found among a stored set's.
func sharedValues(written, stored []label) int {
	n := 0
	for _, w := range written {
		if slices.ContainsFunc(stored, func(s label) bool { return s.Value == w.Value }) {
			n++
		}
	}
	return n
}

// match finds, among the answered series of es's name, the one holding es's samples: the one
// of those sharing the most label values with it, if it alone does.
func match(es *expSeries, got []series) (series, bool) {
	var best series
	bestN, ties := -1, 0
	for _, s := range got {
		if nameOf(s.Labels) != nameOf(es.labels) || !sameSamples(es, s.Points) {
			continue
		}
		switch n := sharedValues(es.labels, s.Labels); {
		case n > bestN:
			best, bestN, ties = s, n, 0
		case n == bestN:
			ties++
		}
	}
	return best, bestN >= 0 && ties == 0
}

func nameOf(ls []label) string {
	for _, l := range ls {
		if l.Name == "__name__" {
			return l.Value
		}
	}
	return ""
}

// learn searches a unit's first metric names alone and returns the mapping of its series'
// labels to those of the stored series holding their samples, and how many were found.
func (v *Verifier) learn(ctx context.Context, r *reader, u *unit) (labelMap, int, error) {
	perName := map[string][]*expSeries{}
	for _, s := range u.series {
		perName[nameOf(s.labels)] = append(perName[nameOf(s.labels)], s)
	}
	var names []string
	for n := range perName {
		names = append(names, n)
	}
	sort.Strings(names)
	names = names[:min(len(names), namesPerSearch)]
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	q := fmt.Sprintf(`{__name__=~%s}[%dms]`, quote(strings.Join(quoted, "|")), u.hi-u.lo)
	got, err := r.instant(ctx, q, u.hi)
	if err != nil {
		return labelMap{}, 0, fmt.Errorf("search by name %s at %d: %w", q, u.hi, err)
	}
	v.ignore(got)
	m := labelMap{rename: map[string]string{}, drop: map[string]bool{}, add: map[string]bool{}}
	found := 0
	for _, n := range names {
		for _, es := range perName[n] {
			if s, ok := match(es, got.Series); ok {
				found++
				m = merge(m, diffLabels(es.labels, s.Labels))
			}
		}
	}
	return m, found, nil
}

// merge joins two mappings: a change either shows.
func merge(a, b labelMap) labelMap {
	maps.Copy(a.rename, b.rename)
	for k := range b.drop {
		a.drop[k] = true
	}
	for k := range b.add {
		a.add[k] = true
	}
	return a
}

// missedUnit is a unit whose read found none of its series under their labels: unit is its
// index, unexpected the points the read returned instead (counted unexpected).
type missedUnit struct {
	unit       int
	unexpected int64
}

// missedBy reports whether the answer got to unit i holds none of its series.
func missedBy(i int, u *unit, got *result) (missedUnit, bool) {
	m := missedUnit{unit: i}
	for _, s := range got.Series {
		ls, _ := splitReplica(s.Labels)
		if u.series[keyOf(ls)] != nil {
			return m, false
		}
		m.unexpected += int64(len(s.Points))
	}
	return m, len(u.series) > 0
}

// attribute searches the units whose read found none of their series under other label sets
// (see the top of this file) and moves what it finds from res's missing samples to
// RenamedSamples; copies is the url_replica copies each series has. With nothing found
// anywhere and every read answered, the storage stored nothing: res.StoredNothing.
func (v *Verifier) attribute(ctx context.Context, r *reader, t Target, units []unit, missed []missedUnit, copies int, res *results.Verify) {
	if len(missed) == 0 || r.api == nil {
		return
	}
	var m labelMap
	for _, mu := range missed[:min(len(missed), maxLearnUnits)] {
		learned, found, err := v.learn(ctx, r, &units[mu.unit])
		res.Reads++
		if err != nil {
			readFailed(res, err)
			continue
		}
		if found > 0 {
			m = learned
			break
		}
	}
	if m.empty() {
		if res.ReadErrors == 0 && res.CheckedSamples > 0 && res.MissingSamples+res.NaNAltered >= res.CheckedSamples {
			res.StoredNothing = &results.StoredNothing{Protocol: string(t.Protocol), Hint: storedNothingHint(t.Protocol)}
		}
		return
	}
	tt := &tally{}
	var written, nan, series, unexpected int64
	for _, mi := range missed {
		if ctx.Err() != nil {
			break
		}
		unexpected += mi.unexpected
		mu := mapUnit(units[mi.unit], m)
		q := render(mu.selector) + fmt.Sprintf("[%dms]", mu.hi-mu.lo)
		got, err := r.instant(ctx, q, mu.hi)
		if err != nil {
			readFailed(res, fmt.Errorf("read under the labels found %s at %d: %w", q, mu.hi, err))
			continue
		}
		res.Reads++
		v.ignore(got)
		v.dropAgentMarkers(&mu, got)
		for j := range got.Series {
			got.Series[j].Labels = slices.DeleteFunc(got.Series[j].Labels, func(l label) bool { return m.add[l.Name] })
			if mu.series[keyOf(got.Series[j].Labels)] != nil {
				series++
			}
		}
		compareUnit(&mu, got, copies, v.interval/2-1, false, tt)
		w, n := valuesOf(&mu)
		written, nan = written+w*int64(copies), nan+n*int64(copies)
	}
	// The first read counted these units' samples and series checked, their values missing,
	// their NaN altered and what it returned unexpected: the second read's counts replace
	// the last three.
	res.MissingSamples -= written
	res.NaNAltered -= nan
	res.UnexpectedSamples -= unexpected
	res.RenamedSamples += written + nan - tt.MissingSamples - tt.NaNAltered
	res.LabelChanges = m.changes(series)
	// Examples the second read explained: every missing sample found, every unexpected one
	// placed.
	res.Examples = slices.DeleteFunc(res.Examples, func(e string) bool {
		return res.MissingSamples == 0 && (strings.HasPrefix(e, "missing ") || strings.HasPrefix(e, "NaN missing: ")) ||
			res.UnexpectedSamples == 0 && strings.HasPrefix(e, "unexpected ")
	})
	tt.CheckedSamples, tt.series = 0, 0
	tt.fill(res)
}

// valuesOf counts a unit's expected values (not NaN, not markers) and NaN samples.
func valuesOf(u *unit) (values, nan int64) {
	for _, s := range u.series {
		for _, e := range s.samples {
			switch {
			case e.stale:
			case math.IsNaN(e.v):
				nan++
			default:
				values++
			}
		}
	}
	return values, nan
}

// storedNothingHint says what to check of a storage that acked writes in protocol p and
// stored none of them.
func storedNothingHint(p config.Protocol) string {
	switch p {
	case config.ProtocolRW2:
		return "a receiver that does not take remote write 2.0 may answer its requests 2xx without X-Prometheus-Remote-Write-Samples-Written and drop them: write it in prometheus-rw1 (protocol), or turn 2.0 on in the storage"
	case config.ProtocolOTLP:
		return "check that writeURL is the storage's OTLP endpoint and that readURL reads the same storage (tenant, database)"
	}
	return "check that writeURL and readURL point at the same storage (tenant, database)"
}
