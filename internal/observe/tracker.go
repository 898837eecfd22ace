package observe

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/report"
)

// rates are one observation made comparable: CPU and disk IO as rates over the last
// interval, RSS and disk as they are, ingested samples counted from the first observation.
// A nil figure is unknown and missing says why.
type rates struct {
	cpu, rss, disk, read, write, ingested *float64
	missing                               map[string]string
}

// tracker turns one source's cumulative samples into rates.
type tracker struct {
	name, where string // storage and URL or "/proc", for the log
	src         Source
	log         *slog.Logger

	mu       sync.Mutex
	prev     Sample
	prevTime time.Time
	ingested float64 // increase of the storage's own count since the first observation
	failed   bool    // the last collection failed (logged once per failure streak)
	all      []rates // every observation
}

func newTracker(name, where string, src Source, log *slog.Logger) *tracker {
	return &tracker{name: name, where: where, src: src, log: log}
}

// observe collects once and returns the rates since the previous collection.
func (t *tracker) observe(ctx context.Context, now time.Time) rates {
	s, err := t.src.Collect(ctx, now)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if !t.failed {
			t.log.Warn("cannot observe the storage; its figures are unknown until this works", "source", t.where, "err", err)
		}
		t.failed = true
		r := rates{missing: map[string]string{}}
		for _, f := range []string{figCPU, figRSS, figDisk, figRead, figWrite, figIngested} {
			r.missing[f] = err.Error()
		}
		t.prev, t.prevTime = Sample{}, time.Time{} // rates restart after the gap
		t.all = append(t.all, r)
		return r
	}
	if t.failed {
		t.log.Info("observing the storage again", "source", t.where)
	}
	t.failed = false
	r := rates{rss: s.RSSBytes, disk: s.DiskBytes, missing: map[string]string{}}
	for k, v := range s.Missing {
		r.missing[k] = v
	}
	if dt := now.Sub(t.prevTime).Seconds(); !t.prevTime.IsZero() && dt > 0 {
		r.cpu = perSecond(t.prev.CPUSeconds, s.CPUSeconds, dt)
		r.read = perSecond(t.prev.ReadBytes, s.ReadBytes, dt)
		r.write = perSecond(t.prev.WriteBytes, s.WriteBytes, dt)
	} else {
		for _, f := range []string{figCPU, figRead, figWrite} {
			if r.missing[f] == "" {
				r.missing[f] = "needs two observations"
			}
		}
	}
	if s.Ingested != nil {
		if t.prev.Ingested != nil {
			t.ingested += increase(*t.prev.Ingested, *s.Ingested)
		}
		v := t.ingested
		r.ingested = &v
	}
	t.prev, t.prevTime = s, now
	t.all = append(t.all, r)
	return r
}

// increase of a counter from a to b; a counter that went down was reset (the process
// restarted) and counts from zero.
func increase(a, b float64) float64 {
	if b < a {
		return b
	}
	return b - a
}

func perSecond(a, b *float64, dt float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	v := increase(*a, *b) / dt
	return &v
}

// history returns a copy of every observation so far.
func (t *tracker) history() []rates {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]rates(nil), t.all...)
}

// or takes r's figures where known, else o's.
func (r rates) or(o rates) rates {
	pick := func(a, b *float64) *float64 {
		if a != nil {
			return a
		}
		return b
	}
	out := rates{
		cpu: pick(r.cpu, o.cpu), rss: pick(r.rss, o.rss), disk: pick(r.disk, o.disk),
		read: pick(r.read, o.read), write: pick(r.write, o.write), ingested: pick(r.ingested, o.ingested),
		missing: map[string]string{},
	}
	for _, m := range []map[string]string{o.missing, r.missing} { // r's reason wins
		for k, v := range m {
			out.missing[k] = v
		}
	}
	return out
}

// addRates adds the components of a cluster; a figure is known only when every component
// gives it.
func addRates(parts []rates) rates {
	if len(parts) == 0 {
		return rates{missing: map[string]string{}}
	}
	out := rates{missing: map[string]string{}}
	add := func(get func(r *rates) *float64, fig string) *float64 {
		total := 0.0
		for i := range parts {
			v := get(&parts[i])
			if v == nil {
				if reason := parts[i].missing[fig]; reason != "" {
					out.missing[fig] = reason
				}
				return nil
			}
			total += *v
		}
		return &total
	}
	out.cpu = add(func(r *rates) *float64 { return r.cpu }, figCPU)
	out.rss = add(func(r *rates) *float64 { return r.rss }, figRSS)
	out.disk = add(func(r *rates) *float64 { return r.disk }, figDisk)
	out.read = add(func(r *rates) *float64 { return r.read }, figRead)
	out.write = add(func(r *rates) *float64 { return r.write }, figWrite)
	out.ingested = add(func(r *rates) *float64 { return r.ingested }, figIngested)
	return out
}

// point is the observation as a timeline point.
func (r rates) point(now time.Time) report.ResourcePoint {
	p := report.ResourcePoint{
		Time: now.UTC().Format(time.RFC3339), CPUCores: r.cpu, RSSBytes: r.rss, DiskBytes: r.disk,
		DiskReadBytesPerSecond: r.read, DiskWriteBytesPerSecond: r.write, IngestedSamples: r.ingested,
	}
	if r.disk != nil && r.ingested != nil && *r.ingested > 0 {
		v := *r.disk / *r.ingested // by the storage's own count: acked is not known here
		p.BytesPerSample = &v
	}
	return p
}
