package observe

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// rates are one observation made comparable: CPU and disk IO as rates over the interval
// since the previous observation, RSS, disk and active series as they are, ingested samples
// as the count since the first observation (reset-corrected). A nil figure is unknown and
// missing says why.
type rates struct {
	at                                            time.Time
	cpu, rss, disk, read, write, ingested, active *float64
	created                                       *float64 // Sample.SeriesCreated

	missing      map[string]string
	absent       map[string]bool // figures the source does not expose at all (see Sample.Absent)
	ingestedRank int             // see Sample.IngestedRank
	failed       bool            // the source could not be read at all
	// acked is what tsbench counted the storage as having acked, read right after the
	// observation (the merged observation of a storage only).
	acked int64
}

// tracker turns one source's cumulative samples into rates.
type tracker struct {
	name, where string // storage, and URL or /proc path, for the log
	src         Source
	log         *slog.Logger

	mu           sync.Mutex // guards the fields below
	prev         Sample     // the last successful collection; zero after a failure
	prevTime     time.Time
	start        *float64 // the process's start (Sample.Start) at the last collection that gave it
	gap          string   // why the collection before this one failed; "" when it did not
	lastIngested *float64 // the storage's counter at the last collection that gave it
	ingested     float64  // increases of that counter since the first collection, corrected for resets
	collected    bool     // a collection has succeeded
	logged       bool     // the first failure was logged; later ones are only recorded
	kindSeen     storage.Kind
	hist         history // every observation, summarised
}

func newTracker(name, where string, src Source, log *slog.Logger) *tracker {
	return &tracker{name: name, where: where, src: src, log: log}
}

// observe collects once and returns the rates since the previous collection; loadEnd is the
// load's end as known now (zero while it runs).
func (t *tracker) observe(ctx context.Context, now, loadEnd time.Time) rates {
	s, err := t.src.Collect(ctx, now)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if !t.logged {
			t.log.Warn("cannot observe the storage, its figures are unknown", "source", t.where, "err", err)
			t.logged = true
		}
		r := rates{at: now, missing: map[string]string{}, failed: true}
		for _, f := range allFigures {
			r.missing[f] = err.Error()
		}
		t.prev, t.prevTime, t.gap = Sample{}, time.Time{}, err.Error() // rates restart after the gap
		t.hist.add(r, loadEnd)
		return r
	}
	if s.Kind != "" {
		t.kindSeen = s.Kind
	}
	r := rates{
		at: now, rss: s.RSSBytes, disk: s.DiskBytes, active: s.ActiveSeries, created: s.SeriesCreated, ingestedRank: s.IngestedRank,
		missing: maps.Clone(s.Missing), absent: maps.Clone(s.Absent),
	}
	if r.missing == nil {
		r.missing = map[string]string{}
	}
	restarted := t.start != nil && s.Start != nil && *t.start != *s.Start
	if restarted {
		t.log.Info("the storage process restarted: its counters count from zero", "source", t.where)
	}
	if s.Start != nil {
		t.start = s.Start
	}
	if dt := now.Sub(t.prevTime).Seconds(); !t.prevTime.IsZero() && dt > 0 {
		r.cpu = perSecond(t.prev.CPUSeconds, s.CPUSeconds, dt, restarted)
		r.read = perSecond(t.prev.ReadBytes, s.ReadBytes, dt, restarted)
		r.write = perSecond(t.prev.WriteBytes, s.WriteBytes, dt, restarted)
	}
	for _, f := range []string{figCPU, figRead, figWrite} {
		switch {
		case r.missing[f] != "" || !t.prevTime.IsZero():
		case t.gap != "":
			r.missing[f] = "no rate over the interval after a failed observation: " + t.gap
		default:
			r.missing[f] = needsTwo
		}
	}
	if s.Ingested != nil {
		switch {
		case t.lastIngested == nil && !t.collected: // the first: what the storage held before is not this run's
		case t.lastIngested == nil || restarted:
			// Counted from zero since the last collection: after a restart, or absent from
			// a page read before (a labelled counter appears at its first increment, as
			// Prometheus' prometheus_tsdb_head_samples_appended_total{type}).
			t.ingested += *s.Ingested
		default:
			t.ingested += increase(*t.lastIngested, *s.Ingested)
		}
		t.lastIngested = s.Ingested
		v := t.ingested
		r.ingested = &v
	}
	t.prev, t.prevTime, t.gap, t.collected = s, now, "", true
	t.hist.add(r, loadEnd)
	return r
}

// needsTwo is the reason of a rate at the first observation; it is not reported when a later
// observation gives the rate.
const needsTwo = "needs two observations"

var allFigures = []string{figCPU, figRSS, figDisk, figRead, figWrite, figIngested, figActive}

func (t *tracker) kind() storage.Kind {
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

// perSecond is the rate of a counter from a to b over dt seconds; after a restart the
// counter counts from zero whatever a was.
func perSecond(a, b *float64, dt float64, restarted bool) *float64 {
	switch {
	case a == nil || b == nil:
		return nil
	case restarted:
		v := *b / dt
		return &v
	}
	v := increase(*a, *b) / dt
	return &v
}

// summary is the summary of every observation so far.
func (t *tracker) summary(loadEnd time.Time) summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hist.summary(loadEnd)
}

// or takes r's figures where known, else o's.
func (r rates) or(o rates) rates {
	out := rates{at: r.at, missing: map[string]string{}}
	maps.Copy(out.missing, o.missing)
	maps.Copy(out.missing, r.missing) // r's reason wins
	rf, of := r.fields(), o.fields()
	for f, v := range out.fields() {
		src := rf
		if *rf[f] == nil {
			src = of
		}
		if *v = *src[f]; *v != nil {
			delete(out.missing, f)
		}
	}
	out.created = r.created
	if out.created == nil {
		out.created = o.created
	}
	return out
}

// fields maps the figure names to r's fields.
func (r *rates) fields() map[string]**float64 {
	return map[string]**float64{
		figCPU: &r.cpu, figRSS: &r.rss, figDisk: &r.disk, figRead: &r.read, figWrite: &r.write,
		figIngested: &r.ingested, figActive: &r.active,
	}
}

// addRates adds the components of a cluster. A figure is the sum over the components that
// expose it (vm_data_size_bytes is only on vmstorage); it is unknown, with the reason, when
// a component that exposes it cannot give it now (after a failed scrape its rates are
// unknown for one interval: a sum of the others would look like a drop), when a component
// could not be read at all, or when none exposes it. Ingested samples are added over the
// components with the best ingestion metric only (distributors, not ingesters).
func addRates(parts []rates) rates {
	out := rates{missing: map[string]string{}}
	if len(parts) > 0 {
		out.at = parts[0].at
	}
	for _, p := range parts {
		if p.failed {
			out.failed = true
			maps.Copy(out.missing, p.missing)
			return out
		}
	}
	best := -1
	for _, p := range parts {
		if p.ingested != nil && (best < 0 || p.ingestedRank < best) {
			best = p.ingestedRank
		}
	}
	for f, v := range out.fields() {
		if *v, out.missing[f] = addFigure(parts, f, best); *v != nil {
			delete(out.missing, f)
		}
	}
	out.created = addCreated(parts)
	return out
}

// addFigure adds one figure over parts, or returns why it is unknown.
func addFigure(parts []rates, f string, bestRank int) (*float64, string) {
	var total *float64
	reason := ""
	for i := range parts {
		p := &parts[i]
		if p.absent[f] || (f == figIngested && p.ingested != nil && p.ingestedRank != bestRank) {
			if reason == "" {
				reason = p.missing[f]
			}
			continue
		}
		v := *p.fields()[f]
		if v == nil {
			return nil, p.missing[f]
		}
		if total == nil {
			total = new(float64)
		}
		*total += *v
	}
	if total == nil && reason == "" {
		reason = "no source"
	}
	return total, reason
}

// point is the observation as a timeline point. BytesPerSample stays nil: the Observer
// fills it from the first observation's disk and the acked count.
func (r rates) point() results.ResourcePoint {
	return results.ResourcePoint{
		Time: r.at.UTC().Format(time.RFC3339Nano), CPUCores: r.cpu, RSSBytes: r.rss, DiskBytes: r.disk,
		DiskReadBytesPerSecond: r.read, DiskWriteBytesPerSecond: r.write, IngestedSamples: r.ingested,
		ActiveSeries: r.active, SeriesCreated: r.created,
	}
}
