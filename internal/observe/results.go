package observe

import (
	"github.com/tsbench/tsbench/internal/report"
)

// Resources summarises one storage over the run; ackedSamples is tsbench's own count of
// what the storage acknowledged, the divisor of bytes per sample.
func (o *Observer) Resources(name string, ackedSamples int64) *report.Resources {
	var ob *observed
	for _, t := range o.targets {
		if t.Name == name {
			ob = t
		}
	}
	if ob == nil {
		return nil
	}
	o.mu.Lock()
	timeline := append([]report.ResourcePoint(nil), ob.timeline...)
	snap := ob.snapshot
	o.mu.Unlock()

	var proc []rates
	if ob.proc != nil {
		proc = ob.proc.history()
	}
	metrics := metricsHistory(ob.comps)
	res := summarise(merge(proc, metrics))
	res.Timeline = timeline
	res.Source = source(ob)
	if len(ob.comps) > 1 {
		res.Components = map[string]*report.Resources{}
		for _, c := range ob.comps {
			cr := summarise(c.history())
			cr.Source = "metrics"
			res.Components[c.where] = cr
		}
	}
	if proc != nil && metrics != nil {
		p, m := summarise(proc), summarise(metrics)
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

func source(ob *observed) string {
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

// merge takes /proc's figures where known, else the /metrics ones, observation by observation.
func merge(proc, metrics []rates) []rates {
	switch {
	case proc == nil:
		return metrics
	case metrics == nil:
		return proc
	}
	out := make([]rates, min(len(proc), len(metrics)))
	for i := range out {
		out[i] = proc[i].or(metrics[i])
	}
	return out
}

// summarise turns observations into the summary figures; every unknown one gets a reason.
func summarise(all []rates) *report.Resources {
	res := &report.Resources{Reasons: map[string]string{}}
	type agg struct {
		sum, max, last float64
		n              int
	}
	figures := map[string]*agg{}
	reason := map[string]string{}
	for _, r := range all {
		for fig, v := range map[string]*float64{figCPU: r.cpu, figRSS: r.rss, figDisk: r.disk, figRead: r.read, figWrite: r.write, figIngested: r.ingested} {
			if v == nil {
				if m := r.missing[fig]; m != "" && m != "needs two observations" {
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
	get := func(fig string, f func(a *agg) float64, fields ...string) *float64 {
		a := figures[fig]
		if a == nil {
			why := reason[fig]
			if why == "" {
				why = "no observation gave it (the run was shorter than two observe intervals?)"
			}
			for _, field := range fields {
				res.Reasons[field] = why
			}
			return nil
		}
		v := f(a)
		return &v
	}
	mean := func(a *agg) float64 { return a.sum / float64(a.n) }
	maxOf := func(a *agg) float64 { return a.max }
	last := func(a *agg) float64 { return a.last }
	res.CPUCoresMean = get(figCPU, mean, "cpuCoresMean")
	res.CPUCoresMax = get(figCPU, maxOf, "cpuCoresMax")
	res.RSSBytesMean = get(figRSS, mean, "rssBytesMean")
	res.RSSBytesMax = get(figRSS, maxOf, "rssBytesMax")
	res.DiskBytesEnd = get(figDisk, last, "diskBytesEnd")
	res.DiskBytesMax = get(figDisk, maxOf, "diskBytesMax")
	res.DiskReadBytesPerSecond = get(figRead, mean, "diskReadBytesPerSecond")
	res.DiskWriteBytesPerSecond = get(figWrite, mean, "diskWriteBytesPerSecond")
	res.IngestedSamples = get(figIngested, last, "ingestedSamples")
	return res
}
