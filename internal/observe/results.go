package observe

import (
	"fmt"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// heldBefore is the disk size at the first observation from which the snapshot figure gets a
// caveat: a fresh VictoriaMetrics or Prometheus data dir holds a few kB.
const heldBefore = 1 << 20

// Resources summarises one storage over the run. Bytes per sample divide by tsbench's own
// count of what the storage acked (Options.Writes): each timeline point by the count read at
// its observation, bytesPerSample by the count at the last observation, where the disk
// growth is taken, and the snapshot figures by the count now.
func (o *Observer) Resources(name string) *results.Resources {
	ob := o.target(name)
	if ob == nil {
		res := summarise(nil, time.Time{})
		for field := range res.Reasons {
			res.Reasons[field] = "storage " + name + " was not observed"
		}
		res.Source = "none"
		return res
	}
	o.mu.Lock()
	merged := append([]rates(nil), ob.merged...)
	timeline := append([]results.ResourcePoint(nil), ob.timeline...)
	snap, loadEnd := ob.snapshot, o.loadEnd
	o.mu.Unlock()

	res := summarise(merged, loadEnd)
	res.Timeline = timeline
	res.Source = ob.source()
	if len(ob.comps) > 1 {
		res.Components = map[string]*results.Resources{}
		for _, c := range ob.comps {
			cr := summarise(c.history(), loadEnd)
			cr.Source = "metrics"
			if len(cr.Reasons) == 0 {
				cr.Reasons = nil
			}
			res.Components[c.where] = cr
		}
	}
	if ob.proc != nil && len(ob.comps) > 0 {
		p, m := summarise(ob.proc.history(), loadEnd), summarise(metricsHistory(ob.comps), loadEnd)
		res.Crosscheck = &results.Crosscheck{
			ProcCPUCoresMean: p.CPUCoresMean, MetricsCPUCoresMean: m.CPUCoresMean,
			ProcRSSBytesMean: p.RSSBytesMean, MetricsRSSBytesMean: m.RSSBytesMean,
		}
	}
	var ackedEnd int64
	if len(merged) > 0 {
		ackedEnd = merged[len(merged)-1].acked
	}
	var why string
	res.BytesPerSample, why = perSample(res.DiskBytesGrowth, ackedEnd, res.Reasons["diskBytesGrowth"])
	note(res.Reasons, "bytesPerSample", why)
	ackedNow := o.acked(name)
	res.SnapshotBytes = snap.bytes
	note(res.Reasons, "snapshotBytes", snap.reason())
	res.SnapshotBytesPerSample, why = perSample(snap.bytes, ackedNow, snap.reason())
	note(res.Reasons, "snapshotBytesPerSample", why)
	if before := diff(res.DiskBytesEnd, res.DiskBytesGrowth); res.SnapshotBytesPerSample != nil && before != nil && *before >= heldBefore {
		res.Reasons["snapshotBytesPerSample"] = fmt.Sprintf("the storage held %.0f bytes when first observed: "+
			"a snapshot holds all its data, so this figure counts them against this run's samples (bytesPerSample does not)", *before)
	}
	if len(res.Reasons) == 0 {
		res.Reasons = nil
	}
	return res
}

// HistoryResources summarises one storage over its catch-up (config history, issue 12): the
// observations up to the first one at or after caughtUp (zero: all of them, the storage
// never caught up), means and maxima over the time before caughtUp, disk growth from the
// first observation to that one, and bytes per sample over what it had acked by then. Nil
// when the storage was not observed.
func (o *Observer) HistoryResources(name string, caughtUp time.Time) *results.Resources {
	ob := o.target(name)
	if ob == nil {
		return nil
	}
	o.mu.Lock()
	merged := append([]rates(nil), ob.merged...)
	o.mu.Unlock()
	if !caughtUp.IsZero() {
		for i, r := range merged {
			if !r.at.Before(caughtUp) {
				merged = merged[:i+1]
				break
			}
		}
	}
	res := summarise(merged, caughtUp)
	res.Source = ob.source()
	var acked int64
	if len(merged) > 0 {
		acked = merged[len(merged)-1].acked
	}
	var why string
	res.BytesPerSample, why = perSample(res.DiskBytesGrowth, acked, res.Reasons["diskBytesGrowth"])
	note(res.Reasons, "bytesPerSample", why)
	if len(res.Reasons) == 0 {
		res.Reasons = nil
	}
	return res
}

// Generator is tsbench's own CPU and RSS over the load.
func (o *Observer) Generator() *results.Generator {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := summarise(o.self.history(), o.loadEnd)
	g := &results.Generator{
		CPUCoresMean: r.CPUCoresMean, CPUCoresMax: r.CPUCoresMax,
		RSSBytesMean: r.RSSBytesMean, RSSBytesMax: r.RSSBytesMax,
		Reasons:  map[string]string{},
		Timeline: append([]results.ResourcePoint(nil), o.selfTL...),
	}
	for _, field := range []string{"cpuCoresMean", "cpuCoresMax", "rssBytesMean", "rssBytesMax"} {
		note(g.Reasons, field, r.Reasons[field])
	}
	if len(g.Reasons) == 0 {
		g.Reasons = nil
	}
	return g
}

func (o *Observer) target(name string) *observed {
	for _, t := range o.targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// perSample divides a size by the acked samples: the one definition of bytes per sample,
// in results.json, its timeline and on /metrics. The reason is the size's own, why it is
// unknown or its caveat, unless no sample was acked.
func perSample(bytes *float64, acked int64, sizeWhy string) (*float64, string) {
	switch {
	case bytes == nil:
		return nil, sizeWhy
	case acked <= 0:
		return nil, "no sample was acked"
	}
	v := *bytes / float64(acked)
	return &v, sizeWhy
}

// note records why for field, unless it is empty.
func note(reasons map[string]string, field, why string) {
	if why != "" {
		reasons[field] = why
	}
}

func (ob *observed) source() string {
	switch {
	case ob.proc != nil && len(ob.comps) > 0:
		return "proc+metrics"
	case ob.proc != nil:
		return "proc"
	case len(ob.comps) > 0:
		return "metrics"
	}
	return "none"
}

// metricsHistory adds the components' observations, made in lockstep, one by one.
func metricsHistory(comps []*tracker) []rates {
	if len(comps) == 0 {
		return nil
	}
	hist := make([][]rates, len(comps))
	n := -1
	for i, c := range comps {
		hist[i] = c.history()
		if n < 0 || len(hist[i]) < n {
			n = len(hist[i])
		}
	}
	out := make([]rates, n)
	for k := range n {
		parts := make([]rates, len(comps))
		for i := range comps {
			parts[i] = hist[i][k]
		}
		out[k] = addRates(parts)
	}
	return out
}

// summarise turns observations into the summary figures. Means and maxima cover the load
// window: the observations up to loadEnd (zero: all of them) and the one whose interval
// crosses it. A mean weighs each observation by the part of the interval it closes that lies
// in the window, so a short last interval counts for its length; the first observation,
// which closes none, counts only when no other does. Disk end and the ingested count are the
// last observation's, what the storage holds at the end of the run; the disk growth is from
// the first observation, before the load, to the last. A figure either of them does not give
// is unknown, never taken from another observation. Every unknown figure gets a reason.
func summarise(all []rates, loadEnd time.Time) *results.Resources {
	stats := map[string]*stat{}
	reason := map[string]string{}
	for i, r := range all {
		w := 0.0
		if i > 0 {
			w = overlap(all[i-1].at, r.at, loadEnd)
		}
		in := w > 0 || loadEnd.IsZero() || !r.at.After(loadEnd)
		for fig, v := range r.fields() {
			if *v == nil {
				if m := r.missing[fig]; m != "" && m != needsTwo {
					reason[fig] = m
				}
				continue
			}
			s := stats[fig]
			if s == nil {
				s = &stat{}
				stats[fig] = s
			}
			if in {
				s.add(**v, w)
			}
		}
	}
	res := &results.Resources{Reasons: map[string]string{}}
	// never is why a figure no observation gave is unknown.
	never := func(fig string) string {
		if why := reason[fig]; why != "" {
			return why
		}
		return "no observation gave it (a rate needs two observations)"
	}
	window := func(fig, field string, f func(s *stat) float64) *float64 {
		s := stats[fig]
		switch {
		case s == nil:
			res.Reasons[field] = never(fig)
			return nil
		case s.n == 0:
			res.Reasons[field] = "no observation in the load window gave it"
			return nil
		}
		v := f(s)
		return &v
	}
	// at is the figure at the first or last observation; when is "first" or "last".
	at := func(fig, field string, r *rates, when string) *float64 {
		if v := *r.fields()[fig]; v != nil {
			return v
		}
		if stats[fig] == nil {
			res.Reasons[field] = never(fig)
		} else {
			res.Reasons[field] = fmt.Sprintf("the %s observation gave none: %s", when, r.missing[fig])
		}
		return nil
	}
	mean := func(s *stat) float64 { return s.mean() }
	maxOf := func(s *stat) float64 { return s.max }
	res.CPUCoresMean = window(figCPU, "cpuCoresMean", mean)
	res.CPUCoresMax = window(figCPU, "cpuCoresMax", maxOf)
	res.RSSBytesMean = window(figRSS, "rssBytesMean", mean)
	res.RSSBytesMax = window(figRSS, "rssBytesMax", maxOf)
	res.DiskReadBytesPerSecond = window(figRead, "diskReadBytesPerSecond", mean)
	res.DiskWriteBytesPerSecond = window(figWrite, "diskWriteBytesPerSecond", mean)
	res.ActiveSeriesMax = window(figActive, "activeSeriesMax", maxOf)
	if len(all) == 0 {
		for _, field := range []string{"diskBytesEnd", "diskBytesMax", "diskBytesGrowth", "ingestedSamples"} {
			res.Reasons[field] = "no observation"
		}
		return res
	}
	first, last := &all[0], &all[len(all)-1]
	res.DiskBytesEnd = at(figDisk, "diskBytesEnd", last, "last")
	res.IngestedSamples = at(figIngested, "ingestedSamples", last, "last")
	if res.DiskBytesEnd != nil {
		res.DiskBytesMax = new(*res.DiskBytesEnd)
		if s := stats[figDisk]; s.n > 0 {
			*res.DiskBytesMax = max(s.max, *res.DiskBytesEnd)
		}
		from := at(figDisk, "diskBytesGrowth", first, "first")
		if res.DiskBytesGrowth = diff(res.DiskBytesEnd, from); from == nil {
			res.Reasons["diskBytesGrowth"] += " (what the storage held before the load is unknown)"
		}
	} else {
		res.Reasons["diskBytesMax"] = res.Reasons["diskBytesEnd"]
		res.Reasons["diskBytesGrowth"] = res.Reasons["diskBytesEnd"]
	}
	return res
}

// stat is one figure over the observations of the load window.
type stat struct {
	n                      int
	sum, wsum, weight, max float64
}

func (s *stat) add(v, w float64) {
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	s.sum, s.wsum, s.weight = s.sum+v, s.wsum+v*w, s.weight+w
}

// mean is weighted by interval length, or plain when no observation has a weight.
func (s *stat) mean() float64 {
	if s.weight > 0 {
		return s.wsum / s.weight
	}
	return s.sum / float64(s.n)
}

// overlap is how many seconds of the interval (from, to] lie before loadEnd (zero: no end).
func overlap(from, to, loadEnd time.Time) float64 {
	if !loadEnd.IsZero() && to.After(loadEnd) {
		to = loadEnd
	}
	return max(to.Sub(from).Seconds(), 0)
}

// Kind is the storage name's kind: as configured, or guessed from its metrics' names ("" when
// neither tells, or it is not observed).
func (o *Observer) Kind(name string) string {
	if t := o.target(name); t != nil {
		return t.kind()
	}
	return ""
}
