package observe

import (
	"fmt"
	"maps"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

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
	all := ob.hist.summary(o.loadEnd)
	sums := ob.sums.summary(o.loadEnd)
	timeline := ob.timeline.Points()
	snap, loadEnd, before := ob.snapshot, o.loadEnd, ob.prior
	o.mu.Unlock()

	res := all.result()
	if before != nil {
		before.combine(res, all.loadSeconds(loadEnd))
	}
	res.Timeline = timeline
	res.Source = ob.source()
	if len(ob.comps) > 1 {
		res.Components = map[string]*results.Resources{}
		for _, c := range ob.comps {
			cs := c.summary(loadEnd)
			cr := cs.result()
			cr.Source = "metrics"
			if len(cr.Reasons) == 0 {
				cr.Reasons = nil
			}
			res.Components[c.where] = cr
		}
	}
	if ob.proc != nil && len(ob.comps) > 0 {
		ps := ob.proc.summary(loadEnd)
		p, m := ps.result(), sums.result()
		res.Crosscheck = &results.Crosscheck{
			ProcCPUCoresMean: p.CPUCoresMean, MetricsCPUCoresMean: m.CPUCoresMean,
			ProcRSSBytesMean: p.RSSBytesMean, MetricsRSSBytesMean: m.RSSBytesMean,
		}
	}
	var why string
	res.BytesPerSample, why = perSample(res.DiskBytesGrowth, all.last.acked, res.Reasons["diskBytesGrowth"])
	res.BytesPerSample, why = growthOnly(res.BytesPerSample, why, res.DiskBytesGrowth, res.DiskBytesStart())
	note(res.Reasons, "bytesPerSample", why)
	ackedNow := o.acked(name)
	res.SnapshotBytes = snap.bytes
	note(res.Reasons, "snapshotBytes", snap.reason())
	res.SnapshotBytesPerSample, why = perSample(snap.bytes, ackedNow, snap.reason())
	note(res.Reasons, "snapshotBytesPerSample", why)
	if before := res.DiskBytesStart(); res.SnapshotBytesPerSample != nil && before != nil && *before >= results.HeldDataBytes {
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
// when the storage was not observed. The observer learns caughtUp from Options.Writes as it
// observes (the observations are not kept); one that cannot tell it summarises them all.
func (o *Observer) HistoryResources(name string, caughtUp time.Time) *results.Resources {
	ob := o.target(name)
	if ob == nil {
		return nil
	}
	o.mu.Lock()
	var s summary
	if ob.caught != nil && !caughtUp.IsZero() {
		s = ob.caught.clone()
	} else {
		s = ob.hist.summary(caughtUp)
	}
	o.mu.Unlock()
	res := s.result()
	res.Source = ob.source()
	var why string
	res.BytesPerSample, why = perSample(res.DiskBytesGrowth, s.last.acked, res.Reasons["diskBytesGrowth"])
	res.BytesPerSample, why = growthOnly(res.BytesPerSample, why, res.DiskBytesGrowth, res.DiskBytesStart())
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
	s := o.self.summary(o.loadEnd)
	r := s.result()
	if o.selfPrior != nil {
		o.selfPrior.combine(r, s.loadSeconds(o.loadEnd))
	}
	g := &results.Generator{
		CPUCoresMean: r.CPUCoresMean, CPUCoresMax: r.CPUCoresMax,
		RSSBytesMean: r.RSSBytesMean, RSSBytesMax: r.RSSBytesMax,
		Reasons:  map[string]string{},
		Timeline: o.selfTL.Points(),
	}
	if s.n > 0 {
		// After SlopeAfter, or the first fifth of a shorter run: 2 minutes of a 10-minute one.
		first := s.first.at // of a resumed run, the checkpoint's first observation
		if len(g.Timeline) > 0 {
			if t, err := time.Parse(time.RFC3339Nano, g.Timeline[0].Time); err == nil {
				first = t
			}
		}
		// The warm-up counts from the live load: after a history's catch-up (every storage's).
		for _, ob := range o.targets {
			if c := o.caughtUpAt(ob.Name); c.After(first) {
				first = c
			}
		}
		after := min(o.opts.SlopeAfter, s.last.at.Sub(first)/5)
		from := first.Add(after)
		g.SetSlopes(from, after)
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

// growthOnly keeps a bytes-per-sample figure of disk growth only where the growth is this
// run's samples (issue 35): a disk that shrank, or a storage that held more before the run
// than the run added (its background merges of the old data then move the growth either
// way), gives no figure, and why says so.
func growthOnly(v *float64, why string, growth, before *float64) (*float64, string) {
	switch {
	case v == nil || growth == nil:
		return v, why
	case *growth < 0:
		return nil, fmt.Sprintf("the disk shrank by %.0f bytes over the run (a merge or retention freed more than the run wrote): "+
			"no bytes per sample from its growth; see bytesPerSample (snapshot)", -*growth)
	case before != nil && *before >= results.HeldDataBytes && *before > *growth:
		return nil, fmt.Sprintf("the storage held %.0f bytes before the run, more than the %.0f the run added: "+
			"its merges of the old data move the growth either way; start it empty to measure bytes per sample", *before, *growth)
	}
	return v, why
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

// summarise turns observations into the summary figures (summary.add says which count).
func summarise(all []rates, loadEnd time.Time) *results.Resources {
	var s summary
	for _, r := range all {
		s.add(r, loadEnd)
	}
	return s.result()
}

// summary is summarise's figures so far, so that observations need not be kept (history).
// Means and maxima cover the load window: the observations up to loadEnd (zero: all of
// them) and the one whose interval crosses it. A mean weighs each observation by the part of
// the interval it closes that lies in the window, so a short last interval counts for its
// length; the first observation, which closes none, counts only when no other does. Disk
// end and the ingested count are the last observation's, what the storage holds at the end
// of the run; the disk growth is from the first observation, before the load, to the last. A
// figure either of them does not give is unknown, never taken from another observation.
// Every unknown figure gets a reason.
type summary struct {
	n           int
	first, last rates
	stats       map[string]*stat
	reason      map[string]string
}

// add counts one observation, later than every one before.
func (s *summary) add(r rates, loadEnd time.Time) {
	if s.stats == nil {
		s.stats, s.reason = map[string]*stat{}, map[string]string{}
	}
	w := 0.0
	if s.n > 0 {
		w = overlap(s.last.at, r.at, loadEnd)
	} else {
		s.first = r
	}
	s.n++
	s.last = r
	in := w > 0 || loadEnd.IsZero() || !r.at.After(loadEnd)
	for fig, v := range r.fields() {
		if *v == nil {
			if m := r.missing[fig]; m != "" && m != needsTwo {
				s.reason[fig] = m
			}
			continue
		}
		st := s.stats[fig]
		if st == nil {
			st = &stat{}
			s.stats[fig] = st
		}
		if in {
			st.add(**v, w)
		}
	}
}

// clone is a copy that adds apart from s.
func (s *summary) clone() summary {
	c := *s
	c.stats, c.reason = map[string]*stat{}, map[string]string{}
	maps.Copy(c.reason, s.reason)
	for fig, st := range s.stats {
		c.stats[fig] = new(*st)
	}
	return c
}

// result is the summary figures.
func (s *summary) result() *results.Resources {
	stats, reason := s.stats, s.reason
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
	if s.n == 0 {
		for _, field := range []string{"diskBytesEnd", "diskBytesMax", "diskBytesGrowth", "ingestedSamples"} {
			res.Reasons[field] = "no observation"
		}
		return res
	}
	first, last := &s.first, &s.last
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
func (o *Observer) Kind(name string) storage.Kind {
	if t := o.target(name); t != nil {
		return t.kind()
	}
	return ""
}
