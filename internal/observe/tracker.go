package observe

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/report"
)

// rates are one observation made comparable: CPU and disk IO as rates over the last
// interval, RSS and disk as they are, ingested samples as the storage's own cumulative count
// (reset-corrected). A nil figure is unknown and missing says why.
type rates struct {
	cpu, rss, disk, read, write, ingested *float64
	missing                               map[string]string
	failed                                bool // the source could not be read at all
}

// tracker turns one source's cumulative samples into rates.
type tracker struct {
	name, where string // storage, and URL or /proc path, for the log
	src         Source
	log         *slog.Logger

	mu           sync.Mutex // guards the fields below
	prev         Sample     // the last successful collection; zero after a failure
	prevTime     time.Time
	lastIngested *float64 // the storage's counter at the last collection that gave it
	ingested     float64  // its count, corrected for resets
	logged       bool     // the first failure was logged; later ones are only recorded
	kindSeen     string
	all          []rates // every observation
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
		if !t.logged {
			t.log.Warn("cannot observe the storage, its figures are unknown", "source", t.where, "err", err)
			t.logged = true
		}
		r := rates{missing: map[string]string{}, failed: true}
		for _, f := range allFigures {
			r.missing[f] = err.Error()
		}
		t.prev, t.prevTime = Sample{}, time.Time{} // rates restart after the gap
		t.all = append(t.all, r)
		return r
	}
	if s.Kind != "" {
		t.kindSeen = s.Kind
	}
	r := rates{rss: s.RSSBytes, disk: s.DiskBytes, missing: map[string]string{}}
	maps.Copy(r.missing, s.Missing)
	if dt := now.Sub(t.prevTime).Seconds(); !t.prevTime.IsZero() && dt > 0 {
		r.cpu = perSecond(t.prev.CPUSeconds, s.CPUSeconds, dt)
		r.read = perSecond(t.prev.ReadBytes, s.ReadBytes, dt)
		r.write = perSecond(t.prev.WriteBytes, s.WriteBytes, dt)
	}
	for _, f := range []string{figCPU, figRead, figWrite} {
		if r.missing[f] == "" && t.prevTime.IsZero() {
			r.missing[f] = needsTwo
		}
	}
	if s.Ingested != nil {
		if t.lastIngested == nil {
			t.ingested = *s.Ingested
		} else {
			t.ingested += increase(*t.lastIngested, *s.Ingested)
		}
		t.lastIngested = s.Ingested
		v := t.ingested
		r.ingested = &v
	}
	t.prev, t.prevTime = s, now
	t.all = append(t.all, r)
	return r
}

// needsTwo is the reason of a rate at the first observation; it is not reported when a later
// observation gives the rate.
const needsTwo = "needs two observations"

var allFigures = []string{figCPU, figRSS, figDisk, figRead, figWrite, figIngested}

func (t *tracker) kind() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.kindSeen
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
	maps.Copy(out.missing, o.missing)
	maps.Copy(out.missing, r.missing) // r's reason wins
	for fig, v := range out.figures() {
		if v != nil {
			delete(out.missing, fig)
		}
	}
	return out
}

// figures maps the figure names to r's values.
func (r rates) figures() map[string]*float64 {
	return map[string]*float64{
		figCPU: r.cpu, figRSS: r.rss, figDisk: r.disk,
		figRead: r.read, figWrite: r.write, figIngested: r.ingested,
	}
}

// addRates adds the components of a cluster. A figure is the sum over the components that
// give it (vm_data_size_bytes is only on vmstorage); it is unknown when a component could not
// be read at all, or when none gives it.
func addRates(parts []rates) rates {
	out := rates{missing: map[string]string{}}
	for _, p := range parts {
		if p.failed {
			out.failed = true
			maps.Copy(out.missing, p.missing)
			return out
		}
	}
	add := func(get func(r *rates) *float64, fig string) *float64 {
		var total *float64
		for i := range parts {
			v := get(&parts[i])
			if v == nil {
				if reason := parts[i].missing[fig]; reason != "" && out.missing[fig] == "" {
					out.missing[fig] = reason
				}
				continue
			}
			if total == nil {
				total = new(float64)
			}
			*total += *v
		}
		if total != nil {
			delete(out.missing, fig)
		} else if out.missing[fig] == "" {
			out.missing[fig] = "no source"
		}
		return total
	}
	out.cpu = add(func(r *rates) *float64 { return r.cpu }, figCPU)
	out.rss = add(func(r *rates) *float64 { return r.rss }, figRSS)
	out.disk = add(func(r *rates) *float64 { return r.disk }, figDisk)
	out.read = add(func(r *rates) *float64 { return r.read }, figRead)
	out.write = add(func(r *rates) *float64 { return r.write }, figWrite)
	out.ingested = add(func(r *rates) *float64 { return r.ingested }, figIngested)
	return out
}

// point is the observation as a timeline point. BytesPerSample stays nil: its divisor is
// tsbench's acked count, which only the caller knows.
func (r rates) point(now time.Time) report.ResourcePoint {
	return report.ResourcePoint{
		Time: now.UTC().Format(time.RFC3339), CPUCores: r.cpu, RSSBytes: r.rss, DiskBytes: r.disk,
		DiskReadBytesPerSecond: r.read, DiskWriteBytesPerSecond: r.write, IngestedSamples: r.ingested,
	}
}
