package workload

import (
	"hash/fnv"
	"math"
	"slices"
)

// StaleNaNBits is the bit pattern of Prometheus' staleness marker, a signalling NaN.
const StaleNaNBits uint64 = 0x7ff0000000000002

// StaleNaN returns the staleness marker value.
func StaleNaN() float64 { return math.Float64frombits(StaleNaNBits) }

// IsStaleNaN reports whether v is the staleness marker (bit for bit, not any NaN).
func IsStaleNaN(v float64) bool { return math.Float64bits(v) == StaleNaNBits }

// shapeKind is Shape.Kind as a small integer for the hot path.
type shapeKind uint8

const (
	kindConstant shapeKind = iota
	kindCounter
	kindGauge
	kindNaN
	kindRemainder
)

// compiled is a Shape ready to evaluate: kinds as integers, resolution as a power of ten.
type compiled struct {
	kind   shapeKind
	value  float64
	rate   float64
	center float64
	amp    float64
	min    float64
	max    float64
	omega  float64 // 2π / period, per second
	noise  float64 // absolute noise amplitude
	res    float64 // 0: not quantized
	inv    float64 // 1/res when res < 1, exactly 10^d

	// Tick model (TickSeconds > 0); see tickEval.
	tick       float64 // seconds; 0: the model above
	invTick    float64
	every      bool        // an event at every tick
	frac       float64     // events per tick, or held ticks per tick when dense; ≤ ½
	dense      bool        // Changes > ½: frac counts the ticks without an event
	multiple   float64     // values are whole multiples of multiple × res
	quantum    float64     // multiple × res; 0 when not quantized
	mu         float64     // counter: mean step per event, in quanta
	jit        float64     // counter: step spread, in quanta, ≤ mu
	group      uint64      // hash of the Events key; 0: the series' own events
	siblings   []*compiled // remainder: the other counters of its Sum group
	sibIdx     []int       // their series indices
	restOffset float64     // remainder: its members' largest first steps, in quanta
	narrow     bool        // gauge: its noise spans fewer than 64 quanta
}

func compile(sh Shape) compiled {
	c := compiled{value: sh.Value, rate: sh.Rate, min: sh.Min, max: sh.Max, res: sh.Resolution}
	switch sh.Kind {
	case Counter:
		c.kind = kindCounter
	case Gauge:
		c.kind = kindGauge
		c.center = (sh.Min + sh.Max) / 2
		c.amp = (sh.Max - sh.Min) / 2
		c.omega = 2 * math.Pi / sh.PeriodSeconds
		c.noise = sh.Noise * (sh.Max - sh.Min)
	case NaN:
		c.kind = kindNaN
	case Remainder:
		c.kind = kindRemainder
	default:
		c.kind = kindConstant
	}
	if c.res > 0 && c.res < 1 {
		// The resolution is a power of ten: dividing an integer by 10^d gives the double
		// nearest the decimal, as a real exporter's text does.
		c.inv = math.Pow10(int(math.Round(-math.Log10(c.res))))
	}
	if sh.TickSeconds > 0 && (c.kind == kindCounter || c.kind == kindGauge || c.kind == kindRemainder) {
		compileTicks(&c, sh)
	}
	return c
}

// atLoad is the profile on a host load ∈ (0, 1] times as busy as the captured one (Shape.atLoad),
// as a copy. In a CPU's Sum group whose remainder is a busy mode (user on a loaded host), the
// time the busy modes give up goes to idle, which then changes at every tick it did and
// more; if its larger steps no longer fit, fitSum smooths them as the capture does.
func (p *Profile) atLoad(load float64) *Profile {
	if load >= 1 || load <= 0 {
		return p
	}
	q := &Profile{Source: p.Source, Series: slices.Clone(p.Series)}
	rests := map[string]int{}
	members := map[string][]int{}
	for i := range q.Series {
		sh := q.Series[i].Shape
		if sh.Sum != "" {
			members[sh.Sum] = append(members[sh.Sum], i)
			if sh.Kind == Remainder {
				rests[sh.Sum] = i
			}
		}
		q.Series[i].Shape = sh.atLoad(load)
	}
	for key, ri := range rests {
		if mode, _ := labelValue(q.Series[ri].Labels, "mode"); mode == "idle" {
			continue // the busy modes slowed down; idle, the rest, takes up the difference
		}
		idle := -1
		busy := q.Series[ri].Shape.Rate
		for _, i := range members[key] {
			if mode, _ := labelValue(q.Series[i].Labels, "mode"); mode == "idle" && i != ri {
				idle = i
				busy -= p.Series[i].Shape.Rate
			}
		}
		if idle < 0 {
			continue
		}
		// Idle got load × its rate from Shape.atLoad; it gets its own rate back plus what
		// the busy modes (the remainder and the others) give up.
		sh := &q.Series[idle].Shape
		sh.Rate = p.Series[idle].Shape.Rate + (1-load)*busy
		sh.Changes = p.Series[idle].Shape.Changes
		fitSum(q, key, ri, members[key])
	}
	return q
}

// atLoad is sh on a host load times as busy as the captured one: a tick-model series changes
// at load × its ticks, and a counter (not a remainder) counts load × as fast in steps of the
// same size; CPU idle, the remainder, takes what the other modes leave. Shapes without ticks
// and load 1 are as they are.
func (sh Shape) atLoad(load float64) Shape {
	if load >= 1 || load <= 0 || sh.TickSeconds == 0 {
		return sh
	}
	switch sh.Kind {
	case Counter:
		sh.Rate *= load
		sh.Changes *= load
	case Gauge:
		sh.Changes *= load
	}
	return sh
}

// compileTicks fills the tick model's fields of c from sh.
func compileTicks(c *compiled, sh Shape) {
	c.tick, c.invTick = sh.TickSeconds, 1/sh.TickSeconds
	c.multiple = max(1, sh.Multiple)
	if c.res > 0 {
		c.quantum = c.res * c.multiple
	}
	p := sh.Changes
	if p <= 0 || p > 1 {
		p = 1
	}
	switch {
	case p >= 0.999:
		c.every = true
	case p > 0.5:
		c.frac, c.dense = 1-p, true
	default:
		c.frac = p
	}
	eventsPerTick := p
	if sh.Events != "" {
		h := fnv.New64a()
		h.Write([]byte(sh.Events))
		c.group = h.Sum64() | 1 // never 0, never a small series index
	}
	switch c.kind {
	case kindCounter:
		c.mu = sh.Rate * sh.TickSeconds / eventsPerTick
		if c.quantum > 0 {
			c.mu /= c.quantum
		}
		c.jit = min(1, max(0, sh.Jitter)) * c.mu
	case kindRemainder:
		c.rate = sh.Rate
	case kindGauge:
		// Noise of ~Step per event (E|d−d'| = ⅓ of its amplitude), the rest of the range to a
		// sine that moves about 0.4 Step per event, so the steps keep the captured size.
		width := sh.Max - sh.Min
		c.noise = min(width, 3*sh.Step)
		c.amp = (width - c.noise) / 2
		c.center = (sh.Min + sh.Max) / 2
		c.omega = 0
		if c.amp > 0 && sh.Step > 0 {
			c.omega = 0.4 * sh.Step / c.amp
		}
		c.narrow = c.quantum > 0 && c.noise < 64*c.quantum
	}
}

// link gives every remainder its Sum group's other counters. shapes[i] is series[i]'s.
func link(series []Series, shapes []*compiled) {
	members := map[string][]int{}
	for i, s := range series {
		if s.Shape.Sum != "" && s.Shape.Kind == Counter {
			members[s.Shape.Sum] = append(members[s.Shape.Sum], i)
		}
	}
	for i, s := range series {
		if s.Shape.Kind != Remainder || shapes[i].tick == 0 {
			continue
		}
		for _, j := range members[s.Shape.Sum] {
			if shapes[j].tick > 0 {
				shapes[i].siblings = append(shapes[i].siblings, shapes[j])
				shapes[i].sibIdx = append(shapes[i].sibIdx, j)
				shapes[i].restOffset += math.Ceil(shapes[j].mu + shapes[j].jit)
			}
		}
	}
}

// fromUnits turns a whole number of resolution steps into the value.
func (c *compiled) fromUnits(n float64) float64 {
	if c.inv > 0 {
		return n / c.inv
	}
	return n * c.res
}

// units is v in resolution steps, not rounded.
func (c *compiled) units(v float64) float64 {
	if c.inv > 0 {
		return v * c.inv
	}
	return v / c.res
}

// toUnits is the number of resolution steps nearest v.
func (c *compiled) toUnits(v float64) float64 { return math.Round(c.units(v)) }

// eval computes the value at elapsed seconds x ≥ 0 since the run's start. scale is the
// target's factor (the same for every series of a target, so histogram buckets stay
// cumulative), phase and noise ∈ [0, 1) are per (target, series) and per sample.
func (c *compiled) eval(x, scale, phase, noise float64) float64 {
	switch c.kind {
	case kindCounter, kindRemainder: // a remainder without ticks is rejected by Validate
		if c.res == 0 {
			return c.value*scale + c.rate*scale*x
		}
		// Whole steps: monotone in x, and in value and rate, so buckets stay cumulative.
		if c.inv > 0 {
			return (math.Round(c.value*scale*c.inv) + math.Floor(c.rate*scale*x*c.inv)) / c.inv
		}
		return (math.Round(c.value*scale/c.res) + math.Floor(c.rate*scale*x/c.res)) * c.res
	case kindGauge:
		v := c.center + c.amp*math.Sin(c.omega*x+2*math.Pi*phase) + c.noise*(2*noise-1)
		v = math.Min(c.max, math.Max(c.min, v))
		if c.res == 0 {
			return v
		}
		// Quantize within the range: the nearest step, kept inside [min, max].
		n, lo, hi := c.toUnits(v), math.Ceil(c.units(c.min)), math.Floor(c.units(c.max))
		if lo > hi {
			return v // no step lies within the range
		}
		return c.fromUnits(math.Min(hi, math.Max(lo, n)))
	case kindNaN:
		return math.NaN()
	default:
		return c.value
	}
}

// mix is splitmix64's finalizer: a fast, well-spread hash of one word.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// hash combines words into one well-spread word.
func hash(words ...uint64) uint64 {
	h := uint64(0x6a09e667f3bcc908)
	for _, w := range words {
		h = mix(h ^ w)
	}
	return h
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// Tick model (issue 14). A shape captured with TickSeconds > 0 moves in events on a grid of
// ticks TickSeconds apart (the capture's scrape interval), offset per target: at a fraction
// Changes of the ticks the value changes, and it holds between them, as a real exporter's
// values do (a disk counter that moves every few seconds, a load average every 5 s). The
// events of a series are placed without state: the count of events up to tick k is a
// formula in k (events), at random ticks.
//
// A counter's value after N events is floor(μN + jitter·d_N) steps, d_N ∈ [0, 1) hashed from
// N: the steps μ + jitter·(d_N − d_{N−1}) vary around μ = Rate·TickSeconds/Changes and can
// never be negative (jitter ≤ μ), so the counter is monotone whatever the times asked.
// A gauge swings over [Min, Max] with a slow sine in events plus a noise of about Step per
// event. Series with the same Events key (a histogram's buckets, a summary's quantiles) share
// their events and their noise, which keeps buckets cumulative and quantiles ordered.
// A "remainder" counter (a CPU's busiest mode) is Rate × elapsed minus the increase of the
// other counters of its Sum group, so a CPU's modes add up to the elapsed time, tick by tick.

// targetKey is the hash every stream of a target derives from, and its tick grid's offset.
func targetKey(seed uint64, target int) uint64 {
	return mix(seed*0x9e3779b97f4a7c15 ^ uint64(target))
}

// streamKey is the hash of one event stream (a series', or its Events group's) of a target
// (tk, from targetKey): the per-tick and per-event draws below are one mix of it each.
func streamKey(tk, key uint64) uint64 { return mix(tk ^ key*0xbf58476d1ce4e5b9) }

// events returns the number of events in ticks 0..k of the stream sk: floor(f·(k+1+u_k))
// with u_k ∈ [0, 1) hashed from k. Its steps f·(1 + u_{k+1} − u_k) lie in (0, 2f) ⊂ (0, 1], so
// it grows by 0 or 1 per tick, at exactly f per tick on average (the u telescope), at random
// ticks. Dense streams count the held ticks this way instead.
func (c *compiled) events(sk uint64, k int64) int64 {
	if c.every {
		return k + 1
	}
	u := unit(mix(sk ^ uint64(k)))
	n := int64(math.Floor(c.frac * (float64(k) + 1 + u)))
	if c.dense {
		return k + 1 - n
	}
	return n
}

// draw is the stream's d_n ∈ [0, 1) of event n: its noise, or where its steps fall.
func draw(sk uint64, n int64) float64 { return unit(mix(^sk ^ uint64(n))) }

// tickOf is the tick of elapsed seconds x for the target of tk: the grid starts at a
// per-target offset, the same for every series of the target so a Sum group's members move
// at the same instants.
func (c *compiled) tickOf(tk uint64, x float64) int64 {
	return int64(math.Floor(x*c.invTick + unit(tk)))
}

// counterUnits is a tick-model counter's increase since the start at tick k: whole quanta,
// or the value's own units when not quantized.
func (c *compiled) counterUnits(tk uint64, s int, k int64) float64 {
	sk := streamKey(tk, c.eventKey(s))
	n := c.events(sk, k)
	u := c.mu*float64(n) + c.jit*draw(sk, n)
	if c.quantum > 0 {
		return math.Floor(u)
	}
	return u
}

func (c *compiled) eventKey(s int) uint64 {
	if c.group != 0 {
		return c.group
	}
	return uint64(s)
}

// toQuanta is v in whole quanta (v itself when not quantized).
func (c *compiled) toQuanta(v float64) float64 {
	if c.quantum == 0 {
		return v
	}
	return math.Round(c.units(v) / c.multiple)
}

// fromQuanta turns a whole number of quanta into the value: an integer of resolution steps
// divided by 10^d, the double nearest the decimal.
func (c *compiled) fromQuanta(n float64) float64 {
	if c.quantum == 0 {
		return n
	}
	return c.fromUnits(n * c.multiple)
}

// tickEval is the value of a tick-model shape for series s of target at elapsed seconds x.
// The target's factor scale sets where its counters start (hosts up for different times);
// their rates are the captured ones, so a CPU still has 1 s per second to share out, and
// targets differ by their events and noise.
func (c *compiled) tickEval(seed uint64, target, s int, x, scale float64) float64 {
	tk := targetKey(seed, target)
	k := c.tickOf(tk, x)
	switch c.kind {
	case kindCounter:
		return c.fromQuanta(c.toQuanta(c.value*scale) + c.counterUnits(tk, s, k))
	case kindRemainder:
		// The group's elapsed total less every member's increase since tick 0; members step
		// by at most μ + jitter per tick, which Validate keeps below the total's step.
		total := c.rate * c.tick * float64(k)
		if c.quantum > 0 {
			total = math.Floor(total / c.quantum)
		}
		// restOffset, the members' largest first step, keeps it at or above its start.
		n := c.toQuanta(c.value*scale) + total + c.restOffset
		for i, sib := range c.siblings {
			n -= sib.counterUnits(tk, c.sibIdx[i], k)
		}
		return c.fromQuanta(n)
	default: // kindGauge
		sk := streamKey(tk, c.eventKey(s))
		n := c.events(sk, k)
		if c.group != 0 {
			// Shared noise over the whole range: members with ordered ranges stay ordered.
			return c.quantize(c.min + (c.max-c.min)*draw(sk, n))
		}
		phase := 2 * math.Pi * unit(mix(sk^0x5bd1e995))
		v := c.quantize(c.gaugeAt(sk, n, phase))
		// An event that lands on the previous event's quantum would be no change: step one
		// quantum instead, so the changed fraction stays the captured one on narrow ranges
		// (where the noise spans few quanta; on wide ones it hardly happens).
		if c.narrow && n > 0 && v == c.quantize(c.gaugeAt(sk, n-1, phase)) {
			if up := c.fromQuanta(c.toQuanta(v) + 1); up <= c.max {
				return up
			}
			if down := c.fromQuanta(c.toQuanta(v) - 1); down >= c.min {
				return down
			}
		}
		return v
	}
}

// gaugeAt is an ungrouped gauge after n events, before quantization.
func (c *compiled) gaugeAt(sk uint64, n int64, phase float64) float64 {
	return c.center + c.amp*math.Sin(c.omega*float64(n)+phase) + c.noise*(draw(sk, n)-0.5)
}

// quantize clamps v to [min, max] and rounds it to the nearest quantum within the range.
func (c *compiled) quantize(v float64) float64 {
	v = math.Min(c.max, math.Max(c.min, v))
	if c.quantum == 0 {
		return v
	}
	q, lo, hi := c.toQuanta(v), math.Ceil(c.units(c.min)/c.multiple), math.Floor(c.units(c.max)/c.multiple)
	if lo > hi {
		return v // no quantum lies within the range
	}
	return c.fromQuanta(math.Min(hi, math.Max(lo, q)))
}
