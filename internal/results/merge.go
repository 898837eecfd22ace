package results

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"
)

// Merge adds up the results of every shard of one sharded run (shard 0/n to n-1/n, each
// once) into the results of the whole workload: write counts summed and the account checked
// per shard and in total, query latencies merged from their histograms, the storages'
// resources from the lead shard (the one that observed them), the generators' resources and
// the read-backs summed. Thresholds are left to the caller, which knows how to evaluate them.
func Merge(runs []*Run) (*Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("no results to merge")
	}
	n := 0
	byIndex := map[int]*Run{}
	var errs []error
	for _, r := range runs {
		if r.Shard == nil {
			errs = append(errs, errors.New("a results file without a shard: it is the whole workload of one process (run with -shard i/n to merge)"))
			continue
		}
		if n == 0 {
			n = r.Shard.Count
		}
		if r.Shard.Count != n {
			errs = append(errs, fmt.Errorf("shard %d/%d among shards of %d: not one run", r.Shard.Index, r.Shard.Count, n))
			continue
		}
		if byIndex[r.Shard.Index] != nil {
			errs = append(errs, fmt.Errorf("shard %d/%d given twice", r.Shard.Index, n))
			continue
		}
		byIndex[r.Shard.Index] = r
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i := range n {
		if byIndex[i] == nil {
			errs = append(errs, fmt.Errorf("shard %d/%d missing", i, n))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	shards := make([]*Run, n)
	for i := range n {
		shards[i] = byIndex[i]
	}
	if err := sameRun(shards); err != nil {
		return nil, err
	}
	lead := shards[0]
	for _, r := range shards {
		if r.Shard.Lead {
			lead = r
		}
	}

	m := &Run{
		SchemaVersion: SchemaVersion, StartTime: lead.StartTime, EndTime: lead.EndTime,
		Config: mergedConfig(lead.Config), Merged: n,
		Workload: Workload{
			SeriesPerTarget: lead.Workload.SeriesPerTarget, Seed: lead.Workload.Seed,
			ScrapeIntervalSeconds: lead.Workload.ScrapeIntervalSeconds,
		},
	}
	var gens []*Generator
	for _, r := range shards {
		if r.EndTime.After(m.EndTime) {
			m.EndTime = r.EndTime
		}
		m.Workload.Targets += r.Workload.Targets
		m.Workload.ActiveSeries += r.Workload.ActiveSeries
		m.Workload.SeriesCreated += r.Workload.SeriesCreated
		m.Workload.StaleMarkers += r.Workload.StaleMarkers
		for _, e := range r.AccountingErrors {
			m.AccountingErrors = append(m.AccountingErrors, fmt.Sprintf("shard %d/%d: %s", r.Shard.Index, n, e))
		}
		if r.Generator != nil {
			gens = append(gens, r.Generator)
		}
	}
	m.Generator = mergeGenerators(gens)
	m.Workload.Series = mergeSeries(lead, shards)
	m.Partial, m.Gaps = mergeLongRun(shards)
	for _, s := range lead.Storages {
		ms, accErrs, err := mergeStorage(s.Name, shards, lead)
		if err != nil {
			return nil, fmt.Errorf("storage %s: %w", s.Name, err)
		}
		m.AccountingErrors = append(m.AccountingErrors, accErrs...)
		m.Storages = append(m.Storages, ms)
	}
	return m, nil
}

// sameRun checks that the shards ran one workload: same start, seed, interval, profile and
// storages.
func sameRun(shards []*Run) error {
	a := shards[0]
	names := func(r *Run) []string {
		var ns []string
		for _, s := range r.Storages {
			ns = append(ns, s.Name)
		}
		return ns
	}
	var errs []error
	for _, b := range shards[1:] {
		what := fmt.Sprintf("shard %d/%d differs from shard %d", b.Shard.Index, b.Shard.Count, a.Shard.Index)
		switch {
		case !a.StartTime.Equal(b.StartTime):
			errs = append(errs, fmt.Errorf("%s in startTime (%s, %s): set one startTime for every shard", what, b.StartTime.Format(time.RFC3339Nano), a.StartTime.Format(time.RFC3339Nano)))
		case a.Workload.Seed != b.Workload.Seed || a.Workload.ScrapeIntervalSeconds != b.Workload.ScrapeIntervalSeconds ||
			a.Workload.SeriesPerTarget != b.Workload.SeriesPerTarget:
			errs = append(errs, fmt.Errorf("%s in seed, scrapeInterval or profile: not one run", what))
		case !slices.Equal(names(a), names(b)):
			errs = append(errs, fmt.Errorf("%s in storages (%v, %v): not one run", what, names(b), names(a)))
		}
	}
	return errors.Join(errs...)
}

// mergedConfig is the lead's config as the whole workload's: without its shard.
func mergedConfig(c any) any {
	m, ok := c.(map[string]any)
	if !ok {
		return c
	}
	out := maps.Clone(m)
	out["shard"] = "0/1"
	return out
}

func mergeStorage(name string, shards []*Run, lead *Run) (Storage, []string, error) {
	ls := lead.Storage(name)
	out := Storage{Name: name, QueryAPI: ls.QueryAPI, Settings: ls.Settings, SettingsWarnings: ls.SettingsWarnings, Version: ls.Version}
	var writes []*Write
	var queries []*Query
	var verifies []*Verify
	var accErrs []string
	n := len(shards)
	for _, r := range shards {
		s := r.Storage(name)
		for _, p := range s.Problems {
			out.Problems = append(out.Problems, fmt.Sprintf("shard %d/%d: %s", r.Shard.Index, n, p))
		}
		if s.ExitedAt != nil && (out.ExitedAt == nil || s.ExitedAt.Before(*out.ExitedAt)) {
			out.ExitedAt = s.ExitedAt
		}
		if s.Write != nil {
			if ok, diff := s.Write.Balanced(); !ok {
				accErrs = append(accErrs, fmt.Sprintf("shard %d/%d: %s: generated %d != acked %d + dropped %d + pending %d (off by %d)",
					r.Shard.Index, n, name, s.Write.GeneratedSamples, s.Write.AckedSamples, s.Write.Dropped(), s.Write.PendingSamples, diff))
			}
			writes = append(writes, s.Write)
		}
		if s.Query != nil {
			queries = append(queries, s.Query)
		}
		if s.Verify != nil {
			verifies = append(verifies, s.Verify)
		}
	}
	if len(writes) > 0 {
		out.Write = mergeWrites(writes)
		if ok, diff := out.Write.Balanced(); !ok {
			accErrs = append(accErrs, fmt.Sprintf("all shards: %s: generated %d != acked %d + dropped %d + pending %d (off by %d)",
				name, out.Write.GeneratedSamples, out.Write.AckedSamples, out.Write.Dropped(), out.Write.PendingSamples, diff))
		}
	}
	var err error
	if out.Query, err = mergeQueries(queries); err != nil {
		return out, nil, err
	}
	out.Verify = mergeVerifies(verifies, false)
	out.Freshness = lead.Storage(name).Freshness // the lead shard alone runs the canary
	if ls := lead.Storage(name); ls.Resources != nil {
		var acked int64
		if out.Write != nil {
			acked = out.Write.AckedSamples
		}
		out.Resources = leadResources(ls.Resources, acked)
	}
	out.Series = lead.Storage(name).Series // observed by the lead, like the resources
	return out, accErrs, nil
}

// AddCounts adds src's counts into dst by key and returns dst, made when nil: the counts by
// reason of runs, shards or parts of one run added up.
func AddCounts(dst, src map[string]int64) map[string]int64 {
	if dst == nil {
		dst = map[string]int64{}
	}
	for k, v := range src {
		dst[k] += v
	}
	return dst
}

// mergeWrites sums the shards' accounts. Rates add up (every shard runs over the same load
// window); lags are the worst shard's.
func mergeWrites(ws []*Write) *Write {
	m := &Write{DroppedSamples: map[string]int64{}, RequestsByStatus: map[string]int64{}, Copies: ws[0].Copies}
	timelines := make([][]WritePoint, 0, len(ws))
	for _, w := range ws {
		m.GeneratedSamples += w.GeneratedSamples
		m.AckedSamples += w.AckedSamples
		m.DroppedSamples = AddCounts(m.DroppedSamples, w.DroppedSamples)
		m.PendingSamples += w.PendingSamples
		m.Retries += w.Retries
		m.RequestsByStatus = AddCounts(m.RequestsByStatus, w.RequestsByStatus)
		m.BytesSent += w.BytesSent
		m.TargetSamplesPerSecond += w.TargetSamplesPerSecond
		m.AchievedSamplesPerSecond += w.AchievedSamplesPerSecond
		m.MaxLagSeconds = math.Max(m.MaxLagSeconds, w.MaxLagSeconds)
		m.LagSeconds = math.Max(m.LagSeconds, w.LagSeconds)
		addHeld(&m.Late, w.Late)
		addHeld(&m.OutOfOrder, w.OutOfOrder)
		m.Limits = AddLimits(m.Limits, w.Limits)
		timelines = append(timelines, w.Timeline)
	}
	m.Timeline = mergeWriteTimelines(timelines)
	return m
}

// AddLimits adds ls to into (a shard's to the shards' before it, a resumed run's to its
// checkpoint's): one entry per limit and storage family, its answers added up, the first
// wording and status kept. It changes into's entries in place.
func AddLimits(into, ls []WriteLimit) []WriteLimit {
	return addByKey(into, ls, func(l WriteLimit) [2]string { return [2]string{l.Limit, l.Family} },
		func(have *WriteLimit, l WriteLimit) { have.Requests += l.Requests })
}

// mergeWriteTimelines adds up the shards' counters at the times of the first shard's points:
// each shard's point nearest in time (shards share startTime, so their progress lines come
// within milliseconds of each other). The rate is recomputed from the summed acks.
func mergeWriteTimelines(ts [][]WritePoint) []WritePoint {
	if len(ts) == 0 || len(ts[0]) == 0 {
		return nil
	}
	out := make([]WritePoint, len(ts[0]))
	for i, p0 := range ts[0] {
		sum := WritePoint{Time: p0.Time}
		for _, tl := range ts {
			if len(tl) == 0 {
				continue
			}
			p := nearest(tl, p0.Time)
			sum.Generated += p.Generated
			sum.Acked += p.Acked
			sum.Dropped += p.Dropped
			sum.Pending += p.Pending
			sum.Retries += p.Retries
			sum.LagSeconds = math.Max(sum.LagSeconds, p.LagSeconds)
			if i == 0 { // no earlier sum to take the difference from: the shards' own rates
				sum.SamplesPerSecs += p.SamplesPerSecs
			}
		}
		if i > 0 {
			if dt := sum.Time.Sub(out[i-1].Time).Seconds(); dt > 0 {
				sum.SamplesPerSecs = float64(sum.Acked-out[i-1].Acked) / dt
			}
		}
		out[i] = sum
	}
	return out
}

func nearest(tl []WritePoint, t time.Time) WritePoint {
	i := sort.Search(len(tl), func(i int) bool { return !tl[i].Time.Before(t) })
	switch {
	case i == len(tl):
		return tl[i-1]
	case i > 0 && t.Sub(tl[i-1].Time) < tl[i].Time.Sub(t):
		return tl[i-1]
	}
	return tl[i]
}

// mergeQueries adds up the query accounts of the shards that ran queries (the lead shard
// alone, as tsbench runs them): counts summed, latencies merged from their histograms, per
// query by name and kind. The timeline is kept when one shard ran queries; of several, its
// quantiles per interval cannot be merged, and it is left out.
func mergeQueries(qs []*Query) (*Query, error) {
	switch len(qs) {
	case 0:
		return nil, nil
	case 1:
		return qs[0], nil
	}
	m := &Query{Errors: map[string]int64{}}
	var lat, svc []Latency
	type key struct{ name, kind string }
	per := map[key]*QueryStat{}
	perLat, perSvc := map[key][]Latency{}, map[key][]Latency{}
	var order []key
	for _, q := range qs {
		m.Executed += q.Executed
		m.OK += q.OK
		m.Errors = AddCounts(m.Errors, q.Errors)
		m.Warnings += q.Warnings
		m.Missed += q.Missed
		lat, svc = append(lat, q.LatencySeconds), append(svc, q.ServiceSeconds)
		for _, s := range q.PerQuery {
			k := key{s.Name, s.Kind}
			p := per[k]
			if p == nil {
				p = &QueryStat{
					Name: s.Name, Kind: s.Kind, Expr: s.Expr, Errors: map[string]int64{}, FirstError: s.FirstError,
					Group: s.Group, IntervalSeconds: s.IntervalSeconds,
				}
				per[k] = p
				order = append(order, k)
			}
			p.Executed += s.Executed
			p.OK += s.OK
			p.Errors = AddCounts(p.Errors, s.Errors)
			p.Warnings += s.Warnings
			p.Missed += s.Missed
			if s.ResultSeries != nil && (p.ResultSeries == nil || *s.ResultSeries > *p.ResultSeries) {
				p.ResultSeries = s.ResultSeries
			}
			perLat[k], perSvc[k] = append(perLat[k], s.LatencySeconds), append(perSvc[k], s.ServiceSeconds)
		}
	}
	var err error
	if m.LatencySeconds, err = MergeLatency(lat...); err != nil {
		return nil, err
	}
	if m.ServiceSeconds, err = MergeLatency(svc...); err != nil {
		return nil, err
	}
	for _, k := range order {
		p := per[k]
		if p.LatencySeconds, err = MergeLatency(perLat[k]...); err != nil {
			return nil, fmt.Errorf("query %s: %w", k.name, err)
		}
		if p.ServiceSeconds, err = MergeLatency(perSvc[k]...); err != nil {
			return nil, fmt.Errorf("query %s: %w", k.name, err)
		}
		m.PerQuery = append(m.PerQuery, *p)
	}
	return m, nil
}

// leadResources is the lead shard's observation of a storage, with the per-sample sizes
// divided by every shard's acked samples instead of the lead's alone. The timeline's
// per-point sizes were divided by the lead's acks: they are left out.
func leadResources(r *Resources, acked int64) *Resources {
	c := *r
	c.Timeline = slices.Clone(r.Timeline)
	for i := range c.Timeline {
		c.Timeline[i].BytesPerSample = nil
	}
	per := func(b *float64) *float64 {
		if b == nil || acked <= 0 {
			return nil
		}
		v := *b / float64(acked)
		return &v
	}
	c.BytesPerSample = per(r.DiskBytesGrowth)
	c.SnapshotBytesPerSample = per(r.SnapshotBytes)
	return &c
}

// mergeGenerators sums the generators' resources: means add up exactly; the maximum is the
// sum of each shard's maximum, the most the set can have used at once.
func mergeGenerators(gs []*Generator) *Generator {
	if len(gs) == 0 {
		return nil
	}
	m := &Generator{}
	fields := func(g *Generator) map[string]**float64 {
		return map[string]**float64{"cpuCoresMean": &g.CPUCoresMean, "cpuCoresMax": &g.CPUCoresMax, "rssBytesMean": &g.RSSBytesMean, "rssBytesMax": &g.RSSBytesMax}
	}
	sums := fields(m)
	for _, g := range gs {
		for name, v := range fields(g) {
			switch dst := sums[name]; {
			case *v == nil:
				if m.Reasons == nil {
					m.Reasons = map[string]string{}
				}
				m.Reasons[name] = "unknown on at least one shard"
			case *dst == nil:
				*dst = new(**v)
			default:
				**dst += **v
			}
		}
	}
	for name := range m.Reasons { // a sum missing a shard is not the set's figure
		*sums[name] = nil
	}
	return m
}
