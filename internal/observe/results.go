package observe

import (
	"github.com/tsbench/tsbench/internal/report"
)

// Resources summarises one storage over the run; ackedSamples is tsbench's own count of
// what the storage acknowledged, the divisor of both bytes-per-sample figures.
func (o *Observer) Resources(name string, ackedSamples int64) *report.Resources {
	ob := o.target(name)
	if ob == nil {
		res := summarise(nil)
		for field := range res.Reasons {
			res.Reasons[field] = "storage " + name + " was not observed"
		}
		res.Source = "none"
		return res
	}
	o.mu.Lock()
	merged := append([]rates(nil), ob.merged...)
	timeline := append([]report.ResourcePoint(nil), ob.timeline...)
	snap := ob.snapshot
	o.mu.Unlock()

	res := summarise(merged)
	res.Timeline = timeline
	res.Source = ob.source()
	if len(ob.comps) > 1 {
		res.Components = map[string]*report.Resources{}
		for _, c := range ob.comps {
			cr := summarise(c.history())
			cr.Source = "metrics"
			if len(cr.Reasons) == 0 {
				cr.Reasons = nil
			}
			res.Components[c.where] = cr
		}
	}
	if ob.proc != nil && len(ob.comps) > 0 {
		p, m := summarise(ob.proc.history()), summarise(metricsHistory(ob.comps))
		res.Crosscheck = &report.Crosscheck{
			ProcCPUCoresMean: p.CPUCoresMean, MetricsCPUCoresMean: m.CPUCoresMean,
			ProcRSSBytesMean: p.RSSBytesMean, MetricsRSSBytesMean: m.RSSBytesMean,
		}
	}
	res.BytesPerSample = perSample(res.DiskBytesEnd, ackedSamples, res.Reasons["diskBytesEnd"], "bytesPerSample", res.Reasons)
	res.SnapshotBytes = snap.bytes
	if snap.bytes == nil {
		res.Reasons["snapshotBytes"] = snap.reason()
	}
	res.SnapshotBytesPerSample = perSample(snap.bytes, ackedSamples, snap.reason(), "snapshotBytesPerSample", res.Reasons)
	if len(res.Reasons) == 0 {
		res.Reasons = nil
	}
	return res
}

// Generator is tsbench's own CPU and RSS over the run.
func (o *Observer) Generator() *report.Generator {
	r := summarise(o.self.history())
	o.mu.Lock()
	defer o.mu.Unlock()
	return &report.Generator{
		CPUCoresMean: r.CPUCoresMean, CPUCoresMax: r.CPUCoresMax,
		RSSBytesMean: r.RSSBytesMean, RSSBytesMax: r.RSSBytesMax,
		Timeline: append([]report.ResourcePoint(nil), o.selfTL...),
	}
}

func (o *Observer) target(name string) *observed {
	for _, t := range o.targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// perSample divides a size by the acked samples, or records why it cannot.
func perSample(bytes *float64, acked int64, sizeReason, field string, reasons map[string]string) *float64 {
	switch {
	case bytes == nil:
		reasons[field] = sizeReason
	case acked <= 0:
		reasons[field] = "no sample was acked"
	default:
		v := *bytes / float64(acked)
		return &v
	}
	return nil
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

// summarise turns observations into the summary figures: means and maxima over the
// observations that gave a figure, the last one for sizes and counts. Every unknown figure
// gets a reason.
func summarise(all []rates) *report.Resources {
	type agg struct {
		sum, max, last float64
		n              int
	}
	figures := map[string]*agg{}
	reason := map[string]string{}
	for _, r := range all {
		for fig, v := range r.figures() {
			if v == nil {
				if m := r.missing[fig]; m != "" && m != needsTwo {
					reason[fig] = m
				}
				continue
			}
			a := figures[fig]
			if a == nil {
				a = &agg{max: *v}
				figures[fig] = a
			}
			a.sum, a.max, a.last, a.n = a.sum+*v, max(a.max, *v), *v, a.n+1
		}
	}
	res := &report.Resources{Reasons: map[string]string{}}
	get := func(fig, field string, f func(a *agg) float64) *float64 {
		a := figures[fig]
		if a == nil {
			why := reason[fig]
			if why == "" {
				why = "no observation gave it (a rate needs two observations)"
			}
			res.Reasons[field] = why
			return nil
		}
		v := f(a)
		return &v
	}
	mean := func(a *agg) float64 { return a.sum / float64(a.n) }
	maxOf := func(a *agg) float64 { return a.max }
	last := func(a *agg) float64 { return a.last }
	res.CPUCoresMean = get(figCPU, "cpuCoresMean", mean)
	res.CPUCoresMax = get(figCPU, "cpuCoresMax", maxOf)
	res.RSSBytesMean = get(figRSS, "rssBytesMean", mean)
	res.RSSBytesMax = get(figRSS, "rssBytesMax", maxOf)
	res.DiskBytesEnd = get(figDisk, "diskBytesEnd", last)
	res.DiskBytesMax = get(figDisk, "diskBytesMax", maxOf)
	res.DiskReadBytesPerSecond = get(figRead, "diskReadBytesPerSecond", mean)
	res.DiskWriteBytesPerSecond = get(figWrite, "diskWriteBytesPerSecond", mean)
	res.IngestedSamples = get(figIngested, "ingestedSamples", last)
	return res
}
