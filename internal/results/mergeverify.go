package results

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
)

// The read-backs of parts of one run, added up: a merge's shards, a resumed run's spans.

// maxMergedExamples bounds the read-back examples and errors kept from all shards together.
const maxMergedExamples = 10

// mergeVerifies adds up the read-backs of parts of one run: the shards' (each checked its own
// targets; the lead alone compares the rules) or, with spans, those of the spans of a resumed
// run around its gaps (each compared the rules over its own windows). Counts add up; what the
// parts found of the storage's ways (labels changed, nothing stored, how it was read) is kept
// as one finding, and the probes and rules, the same questions asked again by each part, are
// each counted once (issue 29).
func mergeVerifies(vs []*Verify, spans bool) *Verify {
	if len(vs) == 0 {
		return nil
	}
	m := &Verify{}
	for _, v := range vs {
		addVerify(m, v)
	}
	m.StoredNothing = storedNothing(vs)
	m.RulesNotCompared = rulesNotCompared(vs, spans)
	mergeChecks(m, vs)
	mergeSampleTypes(m, vs)
	return m
}

// mergeSampleTypes adds up the parts' read-backs of the HA pair, native histograms, exemplars
// and created timestamps (each shard read its own targets'; a resumed run's spans have none:
// they are read once, over the whole run), verdicts recomputed from the sums. The metadata
// is the storage's whole, the same to every shard: the first part's is kept.
func mergeSampleTypes(m *Verify, vs []*Verify) {
	var ha HACounts
	for _, v := range vs {
		if m.Metadata == nil && v.Metadata != nil {
			m.Metadata = v.Metadata
		}
		if x := v.HA; x != nil {
			if m.HA == nil {
				m.HA = &VerifyHA{Replicas: x.Replicas, StoredByReplica: map[string]int64{}}
			}
			h := m.HA
			h.CheckedScrapes += x.CheckedScrapes
			h.StoredByReplica = AddCounts(h.StoredByReplica, x.StoredByReplica)
			ha.AllCopies += orZero(x.AllCopies)
			ha.OneCopy += orZero(x.OneCopy)
			ha.Partial += orZero(x.Partial)
			ha.Gaps += orZero(x.Gaps)
			ha.Switchovers += orZero(x.Switchovers)
			h.Error = cmp.Or(h.Error, x.Error)
			if x.CheckedScrapes == 0 {
				h.Reason = cmp.Or(h.Reason, x.Reason)
			}
		}
		if x := v.NativeHistograms; x != nil {
			if m.NativeHistograms == nil {
				m.NativeHistograms = &NativeHistograms{Send: x.Send, Schemas: x.Schemas}
			}
			n := m.NativeHistograms
			n.CheckedSeries += x.CheckedSeries
			n.CheckedHistograms += x.CheckedHistograms
			n.Kept += x.Kept
			n.Changed += x.Changed
			n.Missing += x.Missing
			n.FloatPoints += x.FloatPoints
			n.FailedRequests += x.FailedRequests
			n.Examples, n.Errors = addExamples(n.Examples, x.Examples), addExamples(n.Errors, x.Errors)
		}
		if x := v.Exemplars; x != nil {
			if m.Exemplars == nil {
				m.Exemplars = &Exemplars{Percent: x.Percent}
			}
			e := m.Exemplars
			e.Checked += x.Checked
			e.Kept += x.Kept
			e.Changed += x.Changed
			e.Missing += x.Missing
			e.Examples, e.Errors = addExamples(e.Examples, x.Examples), addExamples(e.Errors, x.Errors)
			e.Reason = cmp.Or(e.Reason, x.Reason)
		}
		if x := v.Created; x != nil {
			if m.Created == nil {
				m.Created = &Created{}
			}
			c := m.Created
			c.Checked += x.Checked
			c.Kept += x.Kept
			c.Missing += x.Missing
			c.Examples, c.Errors = addExamples(c.Examples, x.Examples), addExamples(c.Errors, x.Errors)
		}
	}
	if h := m.HA; h != nil {
		if ha.OneCopy > 0 { // the replica stored most, as the read-back names it
			for _, r := range slices.Sorted(maps.Keys(h.StoredByReplica)) {
				if h.Winner == "" || h.StoredByReplica[r] > h.StoredByReplica[h.Winner] {
					h.Winner = r
				}
			}
		}
		h.SetCounts(ha, h.Reason)
	}
	if n := m.NativeHistograms; n != nil {
		n.Verdict = n.NativeVerdict()
	}
	if e := m.Exemplars; e != nil {
		if e.Verdict = e.ExemplarVerdict(); e.Verdict != VerdictUnknown {
			e.Reason = ""
		}
	}
	if c := m.Created; c != nil {
		c.Verdict = c.CreatedVerdict()
	}
}

// addExamples appends add to lines, up to maxMergedExamples.
func addExamples(lines, add []string) []string {
	return append(lines, add[:min(len(add), max(0, maxMergedExamples-len(lines)))]...)
}

func addVerify(m, v *Verify) {
	first := m.CheckedFrom.IsZero() && m.CheckedTo.IsZero() && m.Reads == 0
	m.AddSampleCounts(v.SampleCounts())
	m.StalenessIgnored += v.StalenessIgnored
	m.MaxShiftMillis = max(m.MaxShiftMillis, v.MaxShiftMillis)
	m.CheckedSeries += v.CheckedSeries
	m.NotAckedSamples += v.NotAckedSamples
	m.RenamedSamples += v.RenamedSamples
	m.LabelChanges = addLabelChanges(m.LabelChanges, v.LabelChanges)
	m.ReadBackVia = cmp.Or(m.ReadBackVia, v.ReadBackVia)
	addVerifyHeld(&m.Late, v.Late)
	addVerifyHeld(&m.OutOfOrder, v.OutOfOrder)
	m.Reads += v.Reads
	m.ReadErrors += v.ReadErrors
	m.UncheckedSamples += v.UncheckedSamples
	m.DurationSeconds = math.Max(m.DurationSeconds, v.DurationSeconds)
	m.Probes = addProbes(m.Probes, v.Probes)
	m.RuleDiffs = addRuleDiffs(m.RuleDiffs, v.RuleDiffs)
	m.RulesCompared = max(m.RulesCompared, v.RulesCompared)
	for _, e := range v.Examples {
		if len(m.Examples) < maxMergedExamples {
			m.Examples = append(m.Examples, e)
		}
	}
	for _, e := range v.Errors {
		if len(m.Errors) < maxMergedExamples {
			m.Errors = append(m.Errors, e)
		}
	}
	if first || (!v.CheckedFrom.IsZero() && v.CheckedFrom.Before(m.CheckedFrom)) {
		m.CheckedFrom = v.CheckedFrom
	}
	if v.CheckedTo.After(m.CheckedTo) {
		m.CheckedTo = v.CheckedTo
	}
	if p := v.PendingFrom; p != nil && (m.PendingFrom == nil || p.Before(*m.PendingFrom)) {
		m.PendingFrom = p
	}
	if v.Export != nil {
		if m.Export == nil {
			m.Export = &ExportCheck{}
		}
		m.Export.Add(v.Export.SampleCounts)
	}
}

// addLabelChanges adds the label changes of one part to those of the others: one entry per
// change, its series added up (each part counts the series it read).
func addLabelChanges(cs, add []LabelChange) []LabelChange {
	return addByKey(cs, add, func(c LabelChange) [2]string { return [2]string{c.From, c.To} },
		func(have *LabelChange, c LabelChange) { have.Series += c.Series })
}

// addByKey adds each entry of add to the entry of into with the same key, with combine, or
// appends it when into has none: one entry per key, in the order the keys came.
func addByKey[T any, K comparable](into, add []T, key func(T) K, combine func(have *T, x T)) []T {
	for _, x := range add {
		i := slices.IndexFunc(into, func(o T) bool { return key(o) == key(x) })
		if i < 0 {
			into = append(into, x)
			continue
		}
		combine(&into[i], x)
	}
	return into
}

// storedNothing is the parts' finding that the storage stored nothing, kept when every part
// that checked samples found it (acks added up); nil when one found anything stored.
func storedNothing(vs []*Verify) *StoredNothing {
	var out *StoredNothing
	for _, v := range vs {
		switch {
		case v.CheckedSamples == 0 && v.StoredNothing == nil: // checked nothing: says nothing
		case v.StoredNothing == nil:
			return nil
		case out == nil:
			out = new(*v.StoredNothing)
		default:
			out.Acked += v.StoredNothing.Acked
		}
	}
	return out
}

// addProbes adds the probes of one part to those of the others, one per name: a behaviour
// one part saw differ from Prometheus' is kept as its answer.
func addProbes(ps, add []Probe) []Probe {
	return addByKey(ps, add, func(p Probe) string { return p.Name }, func(have *Probe, p Probe) {
		if have.Same && !p.Same {
			*have = p
		}
	})
}

// addRuleDiffs adds the rule differences of one part to those of the others, one per rule and
// other storage (the Detail's "vs name" or "error"), the later part's detail kept: its windows
// end later. Never nil, so that a merged read-back that compared rules says none differed.
func addRuleDiffs(ds, add []RuleDiff) []RuleDiff {
	if ds == nil {
		ds = []RuleDiff{}
	}
	key := func(d RuleDiff) string {
		against, _, _ := strings.Cut(d.Detail, ":")
		return d.Rule + "\x00" + against
	}
	return addByKey(ds, add, key, func(have *RuleDiff, d RuleDiff) { *have = d })
}

// rulesNotCompared are the rules no part compared. A shard's file names those of the lead,
// the only shard that compares rules: any shard's are kept. Spans each compare the rules
// whose lookback fits in their own window: a rule a longer span compared is compared.
func rulesNotCompared(vs []*Verify, spans bool) []string {
	var out []string
	ran := false
	for _, v := range vs {
		switch {
		case !spans:
			for _, r := range v.RulesNotCompared {
				if !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		case v.RuleDiffs == nil: // read without the query API: no rules run
		case !ran:
			out, ran = slices.Clone(v.RulesNotCompared), true
		default:
			out = slices.DeleteFunc(out, func(r string) bool { return !slices.Contains(v.RulesNotCompared, r) })
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
