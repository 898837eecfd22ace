package workload

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// Appender receives samples. labels is sorted by name (so "__name__" first for lower-case
// names) and is valid only during the call: the generator reuses the slice and its strings.
type Appender interface {
	Append(labels []Label, t int64, v float64)
}

// SeriesAppender is an Appender that knows the generator's series (SeriesLabels,
// TargetLabelNames) and takes each sample by the index of its series, with the target's label
// values given once per target and revision: an encoder then prepares every series' fixed
// labels once, when the profile loads, and per sample writes only the value and timestamp.
// Scrape uses it when app has it.
type SeriesAppender interface {
	Appender
	// StartTarget gives the values of TargetLabelNames for the samples that follow, valid
	// until the next StartTarget.
	StartTarget(values []string)
	// AppendSeries is series s (an index into the profile) at t.
	AppendSeries(s int, t int64, v float64)
}

// Options describe the simulated targets.
type Options struct {
	Seed  uint64
	Start time.Time // run start; every timestamp derives from it, in whole milliseconds
	// Hosts is targetsCount: the hosts the profile's targets stand for, each scraped once per
	// writeReplica and HA replica, so the Generator's Targets() is Hosts × Replicas × HA
	// replicas. With events it is their base (series.go).
	Hosts          int
	Replicas       int // writeReplicas; > 1 adds replica="0".."N-1"
	ScrapeInterval time.Duration
	ChurnPercent   float64       // scrapeConfigUpdatePercent
	ChurnInterval  time.Duration // scrapeConfigUpdateInterval
	Job            string        // job label; default "node_exporter"
	HostLoad       float64       // hostLoad, (0, 1]; 0 means 1: values move as captured
	Events         Events        // cardinality events (series.go); Hosts is then their base
	Late           Held          // series sent late, in order (series.go)
	OutOfOrder     Held          // samples sent after newer ones of their series (series.go)
	Native         NativeOptions // nativeHistograms (native.go)
	ExemplarPct    float64       // exemplars.percent (exemplar.go)
	HA             HA            // HA pairs (ha.go)
}

// Target labels tsbench adds to every series.
const (
	labelInstance = "instance"
	labelJob      = "job"
	labelReplica  = "replica"
	labelRevision = "revision"
)

// slot says which target label goes at a position of a series' label template.
type slot uint8

const (
	fixed slot = iota
	slotInstance
	slotJob
	slotReplica
	slotRevision
	slotHACluster
	slotHAReplica
)

// template is a profile series with its full sorted label set, target labels as slots.
type template struct {
	labels []Label
	slots  []slot
	own    []Label // labels without the target label slots
	shape  compiled
}

// Generator computes every target's samples. It holds per-profile-series templates and one
// small revision cursor per target, and no per-series state: its memory grows with targets
// (16 bytes each), not with series or time.
type Generator struct {
	profile   *Profile
	opts      Options
	startMs   int64
	interval  int64 // ms
	churnMs   int64 // 0: no churn
	churnN    int   // targets churned per round in each replica
	hosts     int   // Hosts, or with events the most hosts they ever make active (newEvents)
	total     int   // hosts × Replicas × HA replicas: the targets
	haOffMs   int64 // HA.Offset in ms
	names     []string
	slots     []slot // by names: the target labels (TargetLabelNames)
	templates []template
	natives   []nativeFamily // sent as native histograms (native.go)
	skip      []bool         // by series: left out, sent as a native histogram only; nil: none
	nfloats   int            // series not skipped
	exemplar  []bool         // by series: may carry an exemplar; nil: none does
	exemplarP float64        // probability of an exemplar on such a sample
	plain     bool           // no series skipped, no exemplars: every series sent as it is
	maxLabels int
	scratch   sync.Pool // *scratch
	ev        *events   // nil without events or held samples (series.go)

	// One lock for every cursor: Scrape takes it at most twice per target scrape (hundreds
	// of samples), so the shards hardly ever meet on it.
	cursorMu sync.Mutex // guards cursors
	cursors  []cursor   // per target
}

// cursor is a target's revision at a churn round: where the furthest Revision call left it,
// so that the next call counts only the rounds in between.
type cursor struct{ round, rev int64 }

// scratch is one Scrape's reusable buffers.
type scratch struct {
	labels  []Label
	text    []byte
	values  []string // target label values in TargetLabelNames order
	hist    Histogram
	buckets []uint64
	ex      Exemplar
	trace   []byte
}

// New compiles the profile for the options.
func New(p *Profile, o Options) (*Generator, error) {
	if o.Replicas < 1 {
		o.Replicas = 1
	}
	if o.Job == "" {
		o.Job = "node_exporter"
	}
	var errs []error
	if o.Hosts < 1 {
		errs = append(errs, errors.New("hosts (targetsCount) must be >= 1"))
	}
	if o.ScrapeInterval < time.Millisecond {
		errs = append(errs, errors.New("scrape interval must be >= 1ms"))
	}
	if o.HostLoad == 0 {
		o.HostLoad = 1
	}
	if !(o.HostLoad > 0 && o.HostLoad <= 1) {
		errs = append(errs, errors.New("host load must be in (0, 1]"))
	}
	if o.ChurnPercent < 0 || o.ChurnPercent > 100 {
		errs = append(errs, errors.New("churn percent must be between 0 and 100"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	p = p.atLoad(o.HostLoad)
	// Each replica churns round(targetsCount × percent / 100) of its own targets, as each
	// replica of the prometheus-benchmark chart runs its own config updater.
	churnN := int(math.Round(float64(o.Hosts) * o.ChurnPercent / 100))
	ev, pool := newEvents(o, len(p.Series))
	g := &Generator{
		ev:       ev,
		profile:  p,
		opts:     o,
		startMs:  o.Start.UnixMilli(),
		interval: o.ScrapeInterval.Milliseconds(),
		hosts:    pool,
		total:    pool * o.Replicas * o.haReplicas(),
		haOffMs:  o.HA.Offset.Milliseconds(),
	}
	g.names, g.slots = g.targetLabels()
	g.churnN = churnN
	if g.churnN > 0 && o.ChurnInterval > 0 {
		g.churnMs = o.ChurnInterval.Milliseconds()
		g.cursors = make([]cursor, g.total)
	}
	for _, s := range p.Series {
		t := g.template(s)
		g.maxLabels = max(g.maxLabels, len(t.labels))
		g.templates = append(g.templates, t)
	}
	shapes := make([]*compiled, len(g.templates))
	for i := range g.templates {
		shapes[i] = &g.templates[i].shape
	}
	link(p.Series, shapes)
	g.natives = compileNatives(p, o.Native)
	if g.exemplarP = o.ExemplarPct / 100; g.exemplarP > 0 {
		g.exemplar = exemplarSeries(p)
	}
	g.compileNativeSeries()
	g.plain = g.skip == nil && g.exemplar == nil
	g.scratch.New = func() any {
		return &scratch{labels: make([]Label, g.maxLabels), text: make([]byte, 0, 64), values: make([]string, 0, len(g.names))}
	}
	return g, nil
}

// template merges a series' labels with the target label slots, sorted by name. A profile
// label named like a target label is replaced by it.
func (g *Generator) template(s Series) template {
	targetSlots := map[string]slot{}
	for i, n := range g.names {
		targetSlots[n] = g.slots[i]
	}
	labels := []Label{{Name: "__name__", Value: s.Name}}
	for _, l := range s.Labels {
		if _, ok := targetSlots[l.Name]; !ok {
			labels = append(labels, l)
		}
	}
	for name := range targetSlots {
		labels = append(labels, Label{Name: name})
	}
	slices.SortFunc(labels, func(a, b Label) int { return cmp.Compare(a.Name, b.Name) })
	t := template{labels: labels, slots: make([]slot, len(labels)), shape: compile(s.Shape)}
	for i, l := range labels {
		if sl, ok := targetSlots[l.Name]; ok {
			t.slots[i] = sl
		} else {
			t.own = append(t.own, l)
		}
	}
	return t
}

// TargetLabelNames are the labels Scrape adds to every series, sorted: instance, job,
// replica when writeReplicas > 1, revision, and the HA pairs' cluster and replica labels.
// The slice is the generator's: read only.
func (g *Generator) TargetLabelNames() []string { return g.names }

// SeriesLabels is series s's own labels, __name__ included and target labels left out (a
// profile label named like one is replaced by it), sorted by name. The series' full label
// set is these merged with TargetLabelNames by name. The slice is the generator's: read only.
func (g *Generator) SeriesLabels(s int) []Label { return g.templates[s].own }

// Targets is the number of simulated targets: targetsCount × writeReplicas × series.haReplicas.
func (g *Generator) Targets() int { return g.total }

// SeriesPerTarget is the profile's number of series.
func (g *Generator) SeriesPerTarget() int { return len(g.templates) }

// ScrapeInterval is the interval between two scrapes of a target.
func (g *Generator) ScrapeInterval() time.Duration { return g.opts.ScrapeInterval }

// Series returns profile series s.
func (g *Generator) Series(s int) Series { return g.profile.Series[s] }

// phase is target's stable offset within the scrape interval, in ms.
func (g *Generator) phase(target int) int64 {
	return int64(hash(g.opts.Seed, 1, uint64(target)) % uint64(g.interval))
}

// ScrapeTime is the millisecond timestamp of target's scrape k ≥ 0.
// An HA replica's copy scrapes its replica × haOffset after the original.
func (g *Generator) ScrapeTime(target int, k int64) int64 {
	orig, r := g.copyOf(target)
	return g.startMs + g.phase(orig) + k*g.interval + int64(r)*g.haOffMs
}

// churnRounds is how many churn rounds have happened at or before t (ms).
func (g *Generator) churnRounds(t int64) int64 {
	if g.churnMs == 0 || t < g.startMs {
		return 0
	}
	return (t - g.startMs) / g.churnMs
}

// churned reports whether target gets a new revision in churn round j ≥ 1: in each replica,
// the churnN targets from a seeded offset on, wrapping around, so exactly churnN distinct
// targets per replica. Replica 0 draws its offset as a single replica always did.
func (g *Generator) churned(target int, j int64) bool {
	n := g.hosts
	orig, _ := g.copyOf(target) // an HA copy's revisions are its original's
	base, rep := orig%n, orig/n
	h := hash(g.opts.Seed, 2, uint64(j))
	if rep > 0 {
		h = hash(g.opts.Seed, 6, uint64(j), uint64(rep))
	}
	off := int(h % uint64(n))
	return (base-off+n)%n < g.churnN
}

// Revision is target's revision label at scrape k: how many churn rounds up to that scrape
// picked it.
func (g *Generator) Revision(target int, k int64) int64 {
	return g.revisionAt(target, g.churnRounds(g.ScrapeTime(target, k)))
}

// revisionAt is target's revision after churn round r. It counts from the target's cursor,
// or from round 0 when that is nearer, and moves the cursor forward: the writer, which asks
// for each target's rounds in time order, pays O(1) per call however long the run.
func (g *Generator) revisionAt(target int, r int64) int64 {
	if g.churnMs == 0 || r <= 0 {
		return 0
	}
	g.cursorMu.Lock()
	c := g.cursors[target]
	g.cursorMu.Unlock()
	if r < c.round-r {
		c = cursor{}
	}
	rev := c.rev + g.churnedBetween(target, c.round, r)
	if r > c.round {
		g.cursorMu.Lock()
		if r > g.cursors[target].round {
			g.cursors[target] = cursor{round: r, rev: rev}
		}
		g.cursorMu.Unlock()
	}
	return rev
}

// churnedBetween counts the rounds in (from, to] that picked target, negated when to < from.
func (g *Generator) churnedBetween(target int, from, to int64) int64 {
	sign := int64(1)
	if to < from {
		from, to, sign = to, from, -1
	}
	var n int64
	for j := from + 1; j <= to; j++ {
		if g.churned(target, j) {
			n++
		}
	}
	return sign * n
}

// ChurnedTargets is the number of targets given a new revision in one churn round, over
// every replica: writeReplicas × round(targetsCount × percent / 100).
func (g *Generator) ChurnedTargets() int {
	if g.churnMs == 0 {
		return 0
	}
	return g.churnN * g.opts.Replicas * g.opts.haReplicas()
}

// scale is the target's factor on counters, the same for every series of a target: 0.5–1.
// It never exceeds 1, because the captured rate is what a real host can do: CPU seconds of
// every mode add up to 1 s/s per CPU, and a factor above 1 made idle alone exceed it (a CPU
// utilisation below zero in the default rules).
func (g *Generator) scale(target int) float64 {
	return 0.5 + unit(hash(g.opts.Seed, 3, uint64(target)))/2
}

// Value is series s of target at t (ms). Pure: the same arguments give the same bits.
func (g *Generator) Value(target, s int, t int64) float64 {
	return g.value(&g.templates[s].shape, target, s, t, g.scale(target))
}

// value is Value with the target's scale computed once by the caller: once per scrape, not
// once per sample.
func (g *Generator) value(c *compiled, target, s int, t int64, scale float64) float64 {
	switch c.kind {
	case kindConstant:
		return c.value
	case kindNaN:
		return math.NaN()
	}
	x := float64(max(0, t-g.startMs)) / 1000
	if c.tick > 0 {
		return c.tickEval(g.opts.Seed, target, s, x, scale)
	}
	phase := unit(hash(g.opts.Seed, 4, uint64(target), uint64(s)))
	var noise float64
	if c.kind == kindGauge && c.noise != 0 {
		noise = unit(hash(g.opts.Seed, 5, uint64(target), uint64(s), uint64(t)))
	}
	return c.eval(x, scale, phase, noise)
}

// Labels returns the full sorted label set of series s of target at revision rev, as a new slice.
func (g *Generator) Labels(target, s int, rev int64) []Label {
	sc := g.scratch.Get().(*scratch)
	defer g.scratch.Put(sc)
	labels := g.fill(sc, &g.templates[s], g.targetText(sc, target, rev, life{}))
	out := make([]Label, len(labels))
	for i, l := range labels {
		out[i] = Label{Name: l.Name, Value: string([]byte(l.Value))} // copy: scratch is reused
	}
	return out
}

// targetValues are the values of one target's labels at one revision.
type targetValues struct{ instance, replica, revision, haReplica string }

// targetText writes target's instance, replica and revision values into sc.text and returns
// them as strings over it: valid until the next targetText on sc.
func (g *Generator) targetText(sc *scratch, target int, rev int64, l life) targetValues {
	orig, haRep := g.copyOf(target)
	base, rep := orig%g.hosts, orig/g.hosts
	b := sc.text[:0]
	b = append(b, "host-"...)
	b = appendPadded(b, base, 6)
	b = g.appendLife(b, l)
	b = append(b, ":9100"...)
	n1 := len(b)
	b = strconv.AppendInt(b, int64(rep), 10)
	n2 := len(b)
	b = strconv.AppendInt(b, rev, 10)
	sc.text = b
	s := unsafe.String(unsafe.SliceData(b), len(b))
	tv := targetValues{instance: s[:n1], replica: s[n1:n2], revision: s[n2:]}
	if g.opts.HA.ReplicaName != "" {
		tv.haReplica = g.opts.HA.ReplicaValue[haRep]
	}
	return tv
}

func appendPadded(b []byte, n, width int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(n), 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// fill sets the target labels of template t into sc.labels.
func (g *Generator) fill(sc *scratch, t *template, tv targetValues) []Label {
	labels := sc.labels[:len(t.labels)]
	copy(labels, t.labels)
	for i, sl := range t.slots {
		switch sl {
		case slotInstance:
			labels[i].Value = tv.instance
		case slotJob:
			labels[i].Value = g.opts.Job
		case slotReplica:
			labels[i].Value = tv.replica
		case slotRevision:
			labels[i].Value = tv.revision
		case slotHACluster:
			labels[i].Value = g.opts.HA.ClusterValue
		case slotHAReplica:
			labels[i].Value = tv.haReplica
		}
	}
	return labels
}

// Scrape appends every sample of target's scrape k: one value per profile series, then, when
// churn gave the target a new revision since scrape k-1 (or an event ended or replaced it),
// one staleness marker for every series of the old label set, at the same timestamp (as
// Prometheus writes them when a target leaves). An inactive target writes nothing. Samples
// held late or out of order are left out: Held sends them. Safe for concurrent calls; no
// allocation in steady state.
func (g *Generator) Scrape(app Appender, target int, k int64) (values, staleMarkers int) {
	if target < 0 || target >= g.total || k < 0 {
		panic(fmt.Sprintf("workload: scrape of target %d/%d at k=%d", target, g.total, k))
	}
	return g.scrape(app, target, k, g.selectionOf(OnTime, target, k))
}

// scrape is Scrape of the series sel takes.
func (g *Generator) scrape(app Appender, target int, k int64, sel selection) (values, staleMarkers int) {
	sc := g.scratch.Get().(*scratch)
	defer g.scratch.Put(sc)
	t := g.ScrapeTime(target, k)
	round := g.churnRounds(t)
	rev := g.revisionAt(target, round)
	cur := g.lifeAt(target, t)
	orig, _ := g.copyOf(target) // an HA copy reads its original's exporter
	if cur.active {
		g.startCreated(app, orig)
		values = g.emit(app, sc, g.targetText(sc, target, rev, cur), orig, t, &sel, false)
	}
	if k == 0 {
		return values, 0
	}
	// Rounds since scrape k-1 that picked target: each gave it a new revision.
	n := g.churnedBetween(target, g.churnRounds(t-g.interval), round)
	if prev := g.lifeAt(target, t-g.interval); prev.active && (n > 0 || prev != cur) {
		sel.oooN = 0 // markers are never held out of order: no newer sample of theirs goes first
		staleMarkers = g.emit(app, sc, g.targetText(sc, target, rev-n, prev), orig, t, &sel, true)
	}
	return values, staleMarkers
}

// emit appends the series sel takes with the target values tv at t: their values, or
// staleness markers.
func (g *Generator) emit(app Appender, sc *scratch, tv targetValues, target int, t int64, sel *selection, stale bool) int {
	sa, fast := app.(SeriesAppender)
	if fast {
		sa.StartTarget(g.targetValues(sc, tv))
	}
	scale, n := g.scale(target), 0
	if g.plain && sel.everything && !stale { // the default workload's values: nothing to skip
		for s := range g.templates {
			tm := &g.templates[s]
			if fast {
				sa.AppendSeries(s, t, g.value(&tm.shape, target, s, t, scale))
			} else {
				app.Append(g.fill(sc, tm, tv), t, g.value(&tm.shape, target, s, t, scale))
			}
		}
		return len(g.templates) + g.scrapeNatives(app, sc, tv, target, t, scale, false)
	}
	for s := range g.templates {
		if !sel.takes(s) || (g.skip != nil && g.skip[s]) { // skipped: sent as a native histogram only
			continue
		}
		tm := &g.templates[s]
		v := StaleNaN()
		if !stale {
			v = g.value(&tm.shape, target, s, t, scale)
			g.counterExemplar(app, sc, target, s, t, v, scale)
		}
		if fast {
			sa.AppendSeries(s, t, v)
		} else {
			app.Append(g.fill(sc, tm, tv), t, v)
		}
		n++
	}
	if sel.everything || sel.kind == OnTime { // native histograms are never held back
		n += g.scrapeNatives(app, sc, tv, target, t, scale, stale)
	}
	return n
}

// targetValues lists tv in TargetLabelNames order, in sc.values.
func (g *Generator) targetValues(sc *scratch, tv targetValues) []string {
	v := sc.values[:0]
	for _, sl := range g.slots {
		switch sl {
		case slotInstance:
			v = append(v, tv.instance)
		case slotJob:
			v = append(v, g.opts.Job)
		case slotReplica:
			v = append(v, tv.replica)
		case slotRevision:
			v = append(v, tv.revision)
		case slotHACluster:
			v = append(v, g.opts.HA.ClusterValue)
		case slotHAReplica:
			v = append(v, tv.haReplica)
		}
	}
	sc.values = v
	return v
}
