package workload

import (
	"math"
	"strconv"
	"time"
)

// Cardinality events and held samples (issue 22). Like the values, each is a pure function
// of (seed, target, time): which targets are active, which pod a target runs as, and which
// of its series are sent late or out of order. Nothing is kept per series.

// Events change the set of active targets over time. The zero value changes nothing.
type Events struct {
	Ramp        *Ramp
	Spike       *Spike
	DoubleHalve time.Duration // 0: off; else the targets double after it, halve after as long again, ...
	PodLifetime time.Duration // 0: off; else each target is replaced by a new instance after it
}

// Ramp moves the active targets from From to To over Over, then holds To.
type Ramp struct {
	From, To int
	Over     time.Duration
}

// Spike multiplies the active targets by Factor for For, every Every from Every on.
type Spike struct {
	For, Every time.Duration
	Factor     float64
}

// Held is a share of samples sent later than their timestamp: Percent of each target's
// series, By later (rounded up to whole scrape intervals).
type Held struct {
	Percent float64
	By      time.Duration
}

// Kinds of samples by when they are sent.
const (
	OnTime     = iota // sent at their scrape
	Late              // a fixed share of each target's series, every sample sent By later, in order
	OutOfOrder        // a share of each scrape, sent By later, after newer samples of the series
)

// events is a Generator's compiled series section; nil when it has none.
type events struct {
	base      int // targetsCount, Options.Hosts; the Generator's hosts are the pool, the most ever active
	ramp      *Ramp
	spike     *Spike
	dhMs      int64
	podMs     int64
	lateN     int   // series held late per target
	oooN      int   // series held out of order per scrape
	lateK     int64 // scrapes later a late sample is sent
	oooK      int64
	rampOver  int64 // ms
	spikeFor  int64
	spikeEach int64
}

// newEvents compiles the options' events and held shares; nil when there are none. It
// returns the pool of targets: the most the events ever make active.
func newEvents(o Options, seriesPerTarget int) (*events, int) {
	e := o.Events
	if e.Ramp == nil && e.Spike == nil && e.DoubleHalve == 0 && e.PodLifetime == 0 && o.Late.Percent == 0 && o.OutOfOrder.Percent == 0 {
		return nil, o.Hosts
	}
	ev := &events{base: o.Hosts, ramp: e.Ramp, spike: e.Spike, dhMs: e.DoubleHalve.Milliseconds(), podMs: e.PodLifetime.Milliseconds()}
	pool := o.Hosts
	if r := e.Ramp; r != nil {
		pool = max(r.From, r.To)
		ev.rampOver = max(1, r.Over.Milliseconds())
	}
	if s := e.Spike; s != nil {
		pool = int(math.Round(float64(pool) * s.Factor))
		ev.spikeFor, ev.spikeEach = s.For.Milliseconds(), max(1, s.Every.Milliseconds())
	}
	if ev.dhMs > 0 {
		pool *= 2
	}
	iv := o.ScrapeInterval.Milliseconds()
	ev.lateN = int(math.Round(float64(seriesPerTarget) * o.Late.Percent / 100))
	// At most half the rest, so that consecutive scrapes' runs never overlap (kindOf).
	ev.oooN = min((seriesPerTarget-ev.lateN)/2, int(math.Round(float64(seriesPerTarget)*o.OutOfOrder.Percent/100)))
	ev.lateK = max(1, ceilDiv(o.Late.By.Milliseconds(), iv))
	ev.oooK = max(2, ceilDiv(o.OutOfOrder.By.Milliseconds(), iv))
	return ev, max(1, pool)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// life is a target's state at one scrape: active or not, which pod it runs as, and the
// event occurrence it was added by (kind 's' spike or 'd' doubled half, and which one; 0 for
// the targets the ramp or targetsCount make). A target a spike adds is a new instance at each
// spike, as a scaled-up pod is: its series are new series each time.
type life struct {
	active bool
	kind   byte
	occ    int64
	pod    int64
}

// place is base target b's state e ms after the start, its pod aside.
func (ev *events) place(b int, e int64) life {
	e = max(0, e)
	n := ev.base
	if r := ev.ramp; r != nil {
		n = r.From + int(float64(r.To-r.From)*float64(min(e, ev.rampOver))/float64(ev.rampOver))
	}
	if b < n {
		return life{active: true}
	}
	if s := ev.spike; s != nil && e >= ev.spikeEach && e%ev.spikeEach < ev.spikeFor {
		n = int(math.Round(float64(n) * s.Factor))
		if b < n {
			return life{active: true, kind: 's', occ: e / ev.spikeEach}
		}
	}
	if ev.dhMs > 0 && (e/ev.dhMs)%2 == 1 && b < 2*n {
		return life{active: true, kind: 'd', occ: (e/ev.dhMs + 1) / 2}
	}
	return life{}
}

// lifeAt is target's state at t (ms). Without events every target is active as pod 0.
func (g *Generator) lifeAt(target int, t int64) life {
	ev := g.ev
	if ev == nil {
		return life{active: true}
	}
	base, e := target%g.hosts, t-g.startMs
	l := ev.place(base, e)
	if l.active && ev.podMs > 0 {
		// Each target's pods start at a seeded moment of the lifetime, so replacements are
		// spread evenly: targets / lifetime pods replaced per second.
		off := int64(hash(g.opts.Seed, 8, uint64(base)) % uint64(ev.podMs))
		l.pod = (max(0, e) + off) / ev.podMs
	}
	return l
}

// ActiveTargets is how many targets (over every replica) are active at t (ms): HA copies
// count when a replica label tells their series apart.
func (g *Generator) ActiveTargets(t int64) int {
	if g.ev == nil {
		return g.total
	}
	n := 0
	for b := range g.hosts {
		if g.ev.place(b, t-g.startMs).active {
			n++
		}
	}
	return n * g.opts.Replicas * g.haSeriesCopies()
}

// Epoch identifies target's label set at scrape k apart from its revision: -1 while the
// target is inactive, else a number of its pod and event occurrence. Two scrapes of one
// revision and epoch write one set of series.
func (g *Generator) Epoch(target int, k int64) int64 {
	l := g.lifeAt(target, g.ScrapeTime(target, k))
	if !l.active {
		return -1
	}
	return l.pod<<32 | l.occ<<8 | int64(l.kind)
}

// Created is how many series target's scrape k sends a first sample of: of a label set
// that starts at k (the target activated, a new pod or revision, or k = 0), the series sent
// on time; of one that started at k-1, those held out of order then (sent on time at k); of
// one that started HeldDelay(Late) scrapes before, the late ones. Summed over every scrape
// made, it is the series a storage that keeps them all holds: a label set started in the
// last scrapes of a run has its held series not sent yet.
func (g *Generator) Created(target int, k int64) int {
	if _, r := g.copyOf(target); r > 0 && g.opts.HA.ReplicaName == "" {
		return 0 // without a replica label, an HA copy writes its original's series
	}
	n := 0
	if g.starts(target, k) {
		sel := g.selectionOf(OnTime, target, k)
		n += len(g.templates) - sel.lateN - sel.oooN
	}
	if ev := g.ev; ev != nil && ev.oooN > 0 && k >= 1 && g.starts(target, k-1) {
		n += g.selectionOf(OutOfOrder, target, k-1).oooN
	}
	if ev := g.ev; ev != nil && ev.lateN > 0 && k >= ev.lateK && g.starts(target, k-ev.lateK) {
		n += ev.lateN
	}
	return n
}

// starts reports whether target's scrape k writes a label set scrape k-1 did not.
func (g *Generator) starts(target int, k int64) bool {
	t := g.ScrapeTime(target, k)
	cur := g.lifeAt(target, t)
	if !cur.active || k == 0 {
		return cur.active
	}
	prev := g.lifeAt(target, t-g.interval)
	return prev != cur || g.churnedBetween(target, g.churnRounds(t-g.interval), g.churnRounds(t)) != 0
}

// selection picks the series of one scrape a call writes: the on-time ones, or one held kind.
type selection struct {
	kind       int
	n          int // series per target
	lateOff    int
	lateN      int
	oooOff     int
	oooN       int
	everything bool
}

// selectionOf is target's selection of kind at scrape k.
func (g *Generator) selectionOf(kind, target int, k int64) selection {
	ev := g.ev
	if ev == nil || ev.lateN+ev.oooN == 0 {
		return selection{everything: true}
	}
	n := len(g.templates)
	sel := selection{kind: kind, n: n, lateN: ev.lateN, oooN: ev.oooN}
	orig, _ := g.copyOf(target) // HA copies hold the same series
	sel.lateOff = int(hash(g.opts.Seed, 9, uint64(orig)) % uint64(n))
	if rest := n - ev.lateN; rest > 0 && ev.oooN > 0 {
		sel.oooOff = int((hash(g.opts.Seed, 10, uint64(orig)) + uint64(k)*uint64(ev.oooN)) % uint64(rest))
		if g.lastOfLabelSet(target, k) {
			sel.oooN = 0
		}
	}
	return sel
}

// lastOfLabelSet reports whether target's scrape k+1 writes other series than scrape k (the
// target leaves, is replaced or churned): a sample of k held then would be sent after no
// newer one of its series, so none is held out of order.
func (g *Generator) lastOfLabelSet(target int, k int64) bool {
	t := g.ScrapeTime(target, k)
	return g.lifeAt(target, t) != g.lifeAt(target, t+g.interval) ||
		g.churnedBetween(target, g.churnRounds(t), g.churnRounds(t+g.interval)) != 0
}

// kindOf is the kind of series s in the selection's scrape: late for a run of lateN series
// from a seeded offset (the same every scrape), out of order for a run of oooN of the rest
// that moves on by oooN each scrape, else on time. Exactly lateN and oooN per scrape (none
// out of order before the target's series change): as oooN is at most half the rest, a
// series held out of order at scrape k is sent on time at k+1, before it.
func (sel *selection) kindOf(s int) int {
	// Offsets are below their moduli, so one correction each replaces a division per sample.
	rel := s - sel.lateOff
	if rel < 0 {
		rel += sel.n
	}
	if rel < sel.lateN {
		return Late
	}
	pos := rel - sel.lateN - sel.oooOff
	if pos < 0 {
		pos += sel.n - sel.lateN
	}
	if pos < sel.oooN {
		return OutOfOrder
	}
	return OnTime
}

func (sel *selection) takes(s int) bool { return sel.everything || sel.kindOf(s) == sel.kind }

// HeldKinds says whether the workload holds samples back: late, out of order.
func (g *Generator) HeldKinds() (late, outOfOrder bool) {
	if g.ev == nil {
		return false, false
	}
	return g.ev.lateN > 0, g.ev.oooN > 0
}

// HeldDelay is how many scrapes after its own scrape a sample of kind is sent.
func (g *Generator) HeldDelay(kind int) int64 {
	switch {
	case g.ev == nil:
		return 0
	case kind == Late:
		return g.ev.lateK
	case kind == OutOfOrder:
		return g.ev.oooK
	}
	return 0
}

// HeldOf appends the samples of target's scrape k of kind (Late or OutOfOrder), values and
// staleness markers, at their own timestamps: what Held sends HeldDelay(kind) scrapes later.
func (g *Generator) HeldOf(app Appender, kind, target int, k int64) int {
	if g.ev == nil || k < 0 {
		return 0
	}
	v, m := g.scrape(app, target, k, g.selectionOf(kind, target, k))
	return v + m
}

// Held appends what is sent at target's scrape k beside the scrape itself: the late samples
// of the scrape HeldDelay(Late) before, to late, and the out-of-order samples of the scrape
// HeldDelay(OutOfOrder) before, to outOfOrder. It returns how many of each.
func (g *Generator) Held(late, outOfOrder Appender, target int, k int64) (nLate, nOOO int) {
	ev := g.ev
	if ev == nil {
		return 0, 0
	}
	if ev.lateN > 0 && k >= ev.lateK {
		nLate = g.HeldOf(late, Late, target, k-ev.lateK)
	}
	if ev.oooN > 0 && k >= ev.oooK {
		nOOO = g.HeldOf(outOfOrder, OutOfOrder, target, k-ev.oooK)
	}
	return nLate, nOOO
}

// Epoch is part target j's Epoch at scrape k.
func (p *Part) Epoch(j int, k int64) int64 { return p.g.Epoch(p.targets[j], k) }

// Created is part target j's Created at scrape k.
func (p *Part) Created(j int, k int64) int { return p.g.Created(p.targets[j], k) }

// HeldKinds is the generator's HeldKinds.
func (p *Part) HeldKinds() (late, outOfOrder bool) { return p.g.HeldKinds() }

// HeldDelay is the generator's HeldDelay.
func (p *Part) HeldDelay(kind int) int64 { return p.g.HeldDelay(kind) }

// HeldOf is part target j's HeldOf.
func (p *Part) HeldOf(app Appender, kind, j int, k int64) int {
	return p.g.HeldOf(app, kind, p.targets[j], k)
}

// Held is part target j's Held.
func (p *Part) Held(late, outOfOrder Appender, j int, k int64) (nLate, nOOO int) {
	return p.g.Held(late, outOfOrder, p.targets[j], k)
}

// SeriesOn reports whether the workload has events, held samples or HA pairs.
func (g *Generator) SeriesOn() bool { return g.ev != nil || g.opts.haReplicas() > 1 }

// SeriesOn is the generator's SeriesOn.
func (p *Part) SeriesOn() bool { return p.g.SeriesOn() }

// ActiveSeries is how many series the part's targets hold at t (ms): its active targets ×
// the profile's series.
func (p *Part) ActiveSeries(t int64) int64 {
	if p.g.ev == nil && p.g.opts.haReplicas() == 1 {
		return int64(len(p.targets) * len(p.g.templates))
	}
	var n int64
	for _, target := range p.targets {
		// An HA copy without a replica label writes its original's series.
		if _, r := p.g.copyOf(target); r < p.g.haSeriesCopies() && p.g.lifeAt(target, t).active {
			n++
		}
	}
	return n * int64(len(p.g.templates))
}

// EventSpan is one occurrence of a cardinality event, in unix ms.
type EventSpan struct {
	Name       string
	Start, End int64
}

// EventSpans lists the occurrences of ramp, spike and doubleHalve (its doubled halves) that
// start before to (ms), in time order of each kind. Pod churn is steady: it has none.
func (g *Generator) EventSpans(to int64) []EventSpan {
	ev := g.ev
	if ev == nil {
		return nil
	}
	var out []EventSpan
	if ev.ramp != nil {
		out = append(out, EventSpan{"ramp", g.startMs, g.startMs + ev.rampOver})
	}
	if ev.spike != nil {
		for at := g.startMs + ev.spikeEach; at < to; at += ev.spikeEach {
			out = append(out, EventSpan{"spike", at, at + ev.spikeFor})
		}
	}
	if ev.dhMs > 0 {
		for at := g.startMs + ev.dhMs; at < to; at += 2 * ev.dhMs {
			out = append(out, EventSpan{"doubleHalve", at, at + ev.dhMs})
		}
	}
	return out
}

// EventSpans is the generator's EventSpans: events are the whole workload's.
func (p *Part) EventSpans(to int64) []EventSpan { return p.g.EventSpans(to) }

// appendLife writes what tells l's instance apart into the instance label: "-<pod>" with pod
// churn, "-s<n>" for a target the n-th spike added, "-d<n>" for one the n-th doubling added.
func (g *Generator) appendLife(b []byte, l life) []byte {
	if g.ev == nil {
		return b
	}
	if g.ev.podMs > 0 {
		b = append(b, '-')
		b = strconv.AppendInt(b, l.pod, 10)
	}
	if l.kind != 0 {
		b = append(b, '-', l.kind)
		b = strconv.AppendInt(b, l.occ, 10)
	}
	return b
}
