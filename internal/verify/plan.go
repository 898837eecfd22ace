package verify

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/prometheus/prometheus/model/value"

	"github.com/tsbench/tsbench/internal/workload"
)

// staleNaNBits is the staleness marker Prometheus writes (and the generator with it).
const staleNaNBits = value.StaleNaN

func isStale(v float64) bool { return math.Float64bits(v) == staleNaNBits }

// Unit kinds: why a read was chosen.
const (
	kindAll    = "all"    // verifySamples covers the whole window: every target, every scrape
	kindRecent = "recent" // the newest minute of one target
	kindChurn  = "churn"  // the last scrapes of a revision and its staleness markers
	kindSample = "sample" // a few scrapes of a target picked by the seed
)

// maxSamplesPerRead bounds one range read: longer windows are split.
const maxSamplesPerRead = 50_000

// unit is one read: a target at one revision over consecutive scrapes kFrom..kTo, plus the
// staleness markers of that revision at scrape kTo+1 when marker is set.
type unit struct {
	kind       string
	target     int
	kFrom, kTo int64
	marker     bool
	sentBy     int64 // the checked window's end: held samples sent after it are not expected

	// Filled by expect.
	selector []label // labels every series of the target at this revision has (not __name__)
	series   map[string]*expSeries
	lo, hi   int64 // the read covers (lo, hi]: half a scrape interval beyond the first and last scrape
	markerT  int64 // timestamp of the staleness markers, when marker
	samples  int64 // expected values (not markers)
	markers  int64
}

// expSeries is what one series must hold in the unit's window.
type expSeries struct {
	labels  []label
	samples []expSample // by time
	held    bool        // some samples are held (series.late, series.outOfOrder)
}

type expSample struct {
	t      int64
	v      float64
	stale  bool
	held   uint8 // 0, or the workload's held kind (Late, OutOfOrder)
	unsent bool  // held and sent after the checked window's end: not expected
}

// window is the part of the run that is checked, in ms: scrapes at from..to inclusive.
type window struct{ from, to int64 }

// scrapeRange returns the first and last scrape of target whose time is in w; ok is false
// when there is none.
func scrapeRange(wl Workload, target int, w window, interval int64) (first, last int64, ok bool) {
	t0 := wl.ScrapeTime(target, 0)
	if t0 > w.to {
		return 0, 0, false
	}
	first = 0
	if t0 < w.from {
		first = (w.from - t0) / interval
	}
	for first > 0 && wl.ScrapeTime(target, first-1) >= w.from {
		first--
	}
	for wl.ScrapeTime(target, first) < w.from {
		first++
	}
	last = (w.to - t0) / interval
	for wl.ScrapeTime(target, last) > w.to {
		last--
	}
	for wl.ScrapeTime(target, last+1) <= w.to {
		last++
	}
	return first, last, last >= first
}

// segments splits first..last of target into runs of one label set (revision, and pod with
// series events); marker is set on a run whose next scrape (in the window) starts another.
// A target's inactive runs (series events) hold nothing and make no unit.
func segments(wl Workload, target int, first, last int64, kind string) []unit {
	var us []unit
	start, st := first, stateOf(wl, target, first)
	for k := first + 1; k <= last; k++ {
		if s := stateOf(wl, target, k); s != st {
			if st.epoch >= 0 {
				us = append(us, unit{kind: kind, target: target, kFrom: start, kTo: k - 1, marker: true})
			}
			start, st = k, s
		}
	}
	if st.epoch < 0 {
		return us
	}
	return append(us, unit{kind: kind, target: target, kFrom: start, kTo: last})
}

// plan chooses the reads: every sample of the window when budget covers it, else a recent
// minute, churned-out revisions with their markers, and seed-picked scrapes, about budget
// samples in all. The choice depends only on seed, workload and window.
func plan(wl Workload, seed uint64, w window, interval int64, budget int) []unit {
	n, perScrape := wl.Targets(), int64(wl.SeriesPerTarget())
	spans := make([]scrapeSpan, n)
	var total int64
	for i := range n {
		f, l, ok := scrapeRange(wl, i, w, interval)
		if !ok {
			spans[i] = scrapeSpan{0, -1}
			continue
		}
		spans[i] = scrapeSpan{f, l}
		total += (l - f + 1) * perScrape
	}
	if total <= int64(budget) {
		var us []unit
		for i := range n {
			if spans[i].last >= spans[i].first {
				us = append(us, segments(wl, i, spans[i].first, spans[i].last, kindAll)...)
			}
		}
		return split(us, perScrape)
	}
	rng := rand.New(rand.NewPCG(seed, 0x766572696679)) // "verify"
	p := &planner{wl: wl, perScrape: perScrape, spans: spans, claimed: map[[2]int64]bool{}}
	order := rng.Perm(n)
	p.recent(order, interval)
	p.churned(order, budget)
	p.sampled(rng, order, budget)
	us := p.us
	sort.SliceStable(us, func(a, b int) bool {
		if us[a].target != us[b].target {
			return us[a].target < us[b].target
		}
		return us[a].kFrom < us[b].kFrom
	})
	return split(us, perScrape)
}

// scrapeSpan is a target's scrapes in the window, first to last; empty when last < first.
type scrapeSpan struct{ first, last int64 }

// planner is a sampled plan as it is chosen: the units, the scrapes they claim, the samples
// they read.
type planner struct {
	wl        Workload
	perScrape int64
	spans     []scrapeSpan      // by target
	claimed   map[[2]int64]bool // (target, scrape) already read
	us        []unit
	planned   int64
}

// add plans u unless a scrape of it is planned already.
func (p *planner) add(u unit) {
	for k := u.kFrom; k <= u.kTo; k++ {
		if p.claimed[[2]int64{int64(u.target), k}] {
			return
		}
	}
	for k := u.kFrom; k <= u.kTo; k++ {
		p.claimed[[2]int64{int64(u.target), k}] = true
	}
	p.us = append(p.us, u)
	p.planned += (u.kTo - u.kFrom + 1) * p.perScrape
}

// recent plans the newest minute of one target: where a storage that hides recent data
// shows it.
func (p *planner) recent(order []int, interval int64) {
	recent := int64(math.Ceil(60_000 / float64(interval)))
	for _, i := range order {
		sp := p.spans[i]
		if sp.last < sp.first {
			continue
		}
		from := max(sp.first, sp.last-recent+1)
		segs := segments(p.wl, i, from, sp.last, kindRecent)
		if len(segs) == 0 || segs[len(segs)-1].kTo != sp.last {
			continue // inactive at the end (series events)
		}
		u := segs[len(segs)-1] // the current revision only: no marker inside the newest minute
		p.add(u)
		break
	}
}

// churned plans churned-out revisions: their last two scrapes and their staleness markers,
// at least one and up to half the budget. Targets are scanned in seed order; only those
// whose revision changed in the window are walked scrape by scrape.
func (p *planner) churned(order []int, budget int) {
	const scanLimit = 100_000
	before := p.planned
	churnFull := func() bool { return p.planned > before && p.planned-before >= int64(budget)/2 }
	for j, i := range order {
		if churnFull() || j >= scanLimit {
			break
		}
		sp := p.spans[i]
		if sp.last <= sp.first || !changes(p.wl, i, sp.first, sp.last) {
			continue
		}
		for _, seg := range segments(p.wl, i, sp.first, sp.last, kindChurn) {
			if !seg.marker || churnFull() {
				continue
			}
			seg.kFrom = max(seg.kFrom, seg.kTo-1)
			p.add(seg)
		}
	}
}

// sampled plans seed-picked scrapes of seed-picked targets until the budget is spent: three
// scrapes each, trimmed to a revision.
func (p *planner) sampled(rng *rand.Rand, order []int, budget int) {
	n := len(order)
	for attempts := 0; p.planned < int64(budget) && attempts < 20*n+1000; attempts++ {
		i := order[rng.IntN(n)]
		sp := p.spans[i]
		if sp.last < sp.first {
			continue
		}
		k := sp.first + rng.Int64N(sp.last-sp.first+1)
		segs := segments(p.wl, i, k, min(k+2, sp.last), kindSample)
		if len(segs) == 0 {
			continue // inactive then (series events)
		}
		u := segs[0]
		u.marker = false // a marker is checked with churn units, where it ends a revision
		p.add(u)
	}
}

// split cuts units longer than maxSamplesPerRead; a marker stays with the last piece.
func split(us []unit, perScrape int64) []unit {
	per := max(1, maxSamplesPerRead/max(1, perScrape))
	var out []unit
	for _, u := range us {
		for u.kTo-u.kFrom+1 > per {
			head := u
			head.kTo, head.marker = u.kFrom+per-1, false
			out = append(out, head)
			u.kFrom += per
		}
		out = append(out, u)
	}
	return out
}

// expect fills u with the samples the generator wrote for it: the values of scrapes
// kFrom..kTo of the target's series at its revision, and the staleness markers of those
// series at scrape kTo+1. It runs the generator's own Scrape, so what is expected is what was
// sent, not a second implementation of it.
func expect(wl Workload, u *unit, interval int64) {
	u.series = map[string]*expSeries{}
	c := &collector{u: u, sentBy: u.sentBy}
	// The selector: label pairs shared by every value of the first scrape except the name.
	c.mode = collectCommon
	wl.Scrape(c, u.target, u.kFrom)
	u.selector = c.common
	c.mode = collectValues
	for k := u.kFrom; k <= u.kTo; k++ {
		wl.Scrape(c, u.target, k)
		expectHeld(wl, c, u.target, k)
	}
	u.lo = wl.ScrapeTime(u.target, u.kFrom) - interval/2
	u.hi = wl.ScrapeTime(u.target, u.kTo) + interval/2
	if u.marker {
		c.mode = collectMarkers
		wl.Scrape(c, u.target, u.kTo+1)
		expectHeld(wl, c, u.target, u.kTo+1)
		u.markerT = wl.ScrapeTime(u.target, u.kTo+1)
		u.hi = u.markerT + interval/2
		if u.markers == 0 || c.unsentMarkers {
			u.marker = false // no marker, or one not sent by the check: nothing to check
		}
	}
	sortHeld(u)
}

const (
	collectCommon = iota
	collectValues
	collectMarkers
)

// collector is the Appender expect hands to the generator.
type collector struct {
	u      *unit
	mode   int
	common []label
	init   bool
	// The held kind and send time of the samples being appended (series.go), and the end of
	// the checked window: samples sent after it are not expected yet.
	held          uint8
	sentAt        int64
	sentBy        int64
	unsentMarkers bool
}

var _ workload.Appender = (*collector)(nil)

func (c *collector) Append(ls []workload.Label, t int64, v float64) {
	switch c.mode {
	case collectCommon:
		if isStale(v) {
			return
		}
		if !c.init {
			c.init = true
			for _, l := range ls {
				if l.Name != "__name__" {
					c.common = append(c.common, label{Name: strings.Clone(l.Name), Value: strings.Clone(l.Value)})
				}
			}
			return
		}
		kept := c.common[:0]
		for _, l := range c.common {
			if hasLabel(ls, l) {
				kept = append(kept, l)
			}
		}
		c.common = kept
	case collectValues, collectMarkers:
		if isStale(v) != (c.mode == collectMarkers) || !matches(ls, c.u.selector) {
			return
		}
		key := keyOf(ls)
		s := c.u.series[key]
		if s == nil {
			if c.mode == collectMarkers {
				return // a marker of a series not read (cannot happen within one revision)
			}
			s = &expSeries{labels: toLabels(ls)}
			c.u.series[key] = s
		}
		e := expSample{t: t, v: v, stale: isStale(v), held: c.held, unsent: c.held != 0 && c.sentAt > c.sentBy}
		s.samples = append(s.samples, e)
		s.held = s.held || c.held != 0
		if e.unsent {
			c.unsentMarkers = c.unsentMarkers || e.stale
			return
		}
		if c.mode == collectMarkers {
			c.u.markers++
		} else {
			c.u.samples++
		}
	}
}

func hasLabel(ls []workload.Label, want label) bool {
	for _, l := range ls {
		if l.Name == want.Name {
			return l.Value == want.Value
		}
	}
	return false
}

func matches(ls []workload.Label, sel []label) bool {
	for _, l := range sel {
		if !hasLabel(ls, l) {
			return false
		}
	}
	return true
}

func toLabels(ls []workload.Label) []label {
	out := make([]label, len(ls))
	for i, l := range ls {
		// The generator's label strings are valid only during Append: keep copies.
		out[i] = label{Name: strings.Clone(l.Name), Value: strings.Clone(l.Value)}
	}
	return out
}

// keyOf is the identity of a label set sorted by name.
func keyOf(ls []workload.Label) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Name)
		b.WriteByte(0xfe)
		b.WriteString(l.Value)
		b.WriteByte(0xff)
	}
	return b.String()
}
