package workload

import "math"

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
	default:
		c.kind = kindConstant
	}
	if c.res > 0 && c.res < 1 {
		// The resolution is a power of ten: dividing an integer by 10^d gives the double
		// nearest the decimal, as a real exporter's text does.
		c.inv = math.Pow10(int(math.Round(-math.Log10(c.res))))
	}
	return c
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
	case kindCounter:
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
