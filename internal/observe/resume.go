package observe

import (
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// prior is what a checkpoint said of a storage, or of tsbench, before the restart (issue 19).
type prior struct {
	res     *results.Resources
	covered time.Duration // of the load the checkpoint's means cover
}

// Resume continues storage name's figures from a checkpoint's, which covered the first
// covered of the load: its timeline goes on, and the summary figures combine both runs
// (means weighed by the time each covers, maxima of both, disk growth from the checkpoint's
// first observation, ingested samples added up). Call it before Run.
func (o *Observer) Resume(name string, res *results.Resources, covered time.Duration) {
	ob := o.target(name)
	if ob == nil || res == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	ob.prior = &prior{res: res, covered: covered}
	ob.timeline.Restore(res.Timeline)
}

// ResumeGenerator continues tsbench's own figures from a checkpoint's, as Resume.
func (o *Observer) ResumeGenerator(g *results.Generator, covered time.Duration) {
	if g == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.selfPrior = &prior{covered: covered, res: &results.Resources{
		CPUCoresMean: g.CPUCoresMean, CPUCoresMax: g.CPUCoresMax, RSSBytesMean: g.RSSBytesMean, RSSBytesMax: g.RSSBytesMax,
	}}
	o.selfTL.Restore(g.Timeline)
}

// combine puts the checkpoint's figures (p) and this run's (cur, covering curSecs of the
// load) together in cur. A figure either part does not know stays unknown, with the reason.
func (p *prior) combine(cur *results.Resources, curSecs float64) {
	a, wa, wb := p.res, p.covered.Seconds(), max(curSecs, 0)
	why := func(field string) {
		if cur.Reasons == nil {
			cur.Reasons = map[string]string{}
		}
		if cur.Reasons[field] == "" {
			cur.Reasons[field] = "unknown before the restart (the checkpoint resumed from has none)"
		}
	}
	mean := func(field string, x **float64, before *float64) {
		switch {
		case before == nil:
			*x = nil
			why(field)
		case *x == nil:
		case wa+wb > 0:
			*x = new((*before*wa + **x*wb) / (wa + wb))
		}
	}
	most := func(field string, x **float64, before *float64) {
		switch {
		case before == nil:
			*x = nil
			why(field)
		case *x != nil:
			*x = new(max(*before, **x))
		}
	}
	mean("cpuCoresMean", &cur.CPUCoresMean, a.CPUCoresMean)
	most("cpuCoresMax", &cur.CPUCoresMax, a.CPUCoresMax)
	mean("rssBytesMean", &cur.RSSBytesMean, a.RSSBytesMean)
	most("rssBytesMax", &cur.RSSBytesMax, a.RSSBytesMax)
	mean("diskReadBytesPerSecond", &cur.DiskReadBytesPerSecond, a.DiskReadBytesPerSecond)
	mean("diskWriteBytesPerSecond", &cur.DiskWriteBytesPerSecond, a.DiskWriteBytesPerSecond)
	most("activeSeriesMax", &cur.ActiveSeriesMax, a.ActiveSeriesMax)
	most("diskBytesMax", &cur.DiskBytesMax, a.DiskBytesMax)
	// The disk growth runs from the checkpoint's first observation, before the load.
	cur.DiskBytesGrowth = diff(cur.DiskBytesEnd, diff(a.DiskBytesEnd, a.DiskBytesGrowth))
	if cur.DiskBytesGrowth == nil && cur.DiskBytesEnd != nil {
		why("diskBytesGrowth")
	}
	// What the storage ingested during the gap is in neither part, like the gap's samples.
	if a.IngestedSamples == nil || cur.IngestedSamples == nil {
		cur.IngestedSamples = nil
		why("ingestedSamples")
	} else {
		cur.IngestedSamples = new(*a.IngestedSamples + *cur.IngestedSamples)
	}
}

// loadSeconds is how much of the load the summary's observations cover: from the first to
// the last, or to loadEnd when that came before.
func (s *summary) loadSeconds(loadEnd time.Time) float64 {
	if s.n == 0 {
		return 0
	}
	end := s.last.at
	if !loadEnd.IsZero() && loadEnd.Before(end) {
		end = loadEnd
	}
	return end.Sub(s.first.at).Seconds()
}

// firstDisk is the disk size at the first observation, before the load: of a resumed run,
// the checkpoint's. Guarded by Observer.mu.
func (ob *observed) firstDisk() *float64 {
	if ob.prior != nil {
		return diff(ob.prior.res.DiskBytesEnd, ob.prior.res.DiskBytesGrowth)
	}
	return ob.hist.first().disk
}
