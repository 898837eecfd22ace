package verify

import (
	"hash/fnv"
	"math"
	"strconv"
	"strings"
)

// fault alters one sample on its way to a storage, as a broken storage would; keep false
// drops it. Faults are deterministic, so a run can be repeated and counted.
type fault func(key string, t int64, v float64) (t2 int64, v2 float64, keep bool)

// damage is what a fault did among the samples verify checks.
type damage struct {
	values, nans, markers int64
	nansSeen              int64 // NaN values (not markers) passed through, changed or not
	nanSeriesMarkers      int64 // markers among markers of NaN-valued series (fake_nan)
}

// faults are the seeded faults of issue 5.
func faults() map[string]fault {
	return map[string]fault{
		"none": func(_ string, t int64, v float64) (int64, float64, bool) { return t, v, true },
		"drop 1%": func(key string, t int64, v float64) (int64, float64, bool) {
			h := fnv.New64a()
			h.Write([]byte(key))
			h.Write([]byte(strconv.FormatInt(t, 10)))
			return t, v, h.Sum64()%100 != 0
		},
		"round to 15 digits": func(_ string, t int64, v float64) (int64, float64, bool) {
			if math.IsNaN(v) {
				return t, v, true
			}
			r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
			return t, r, true
		},
		"remove NaN": func(_ string, t int64, v float64) (int64, float64, bool) {
			return t, v, !math.IsNaN(v) || isStale(v)
		},
		"shift 1ms": func(_ string, t int64, v float64) (int64, float64, bool) { return t + 1, v, true },
		"drop staleness markers": func(_ string, t int64, v float64) (int64, float64, bool) {
			return t, v, !isStale(v)
		},
	}
}

// apply runs f on a sample and, when t is in w, counts what it changed by kind of sample.
func (d *damage) apply(f fault, key string, t int64, v float64, w window) (int64, float64, bool) {
	t2, v2, keep := f(key, t, v)
	if t < w.from || t > w.to {
		return t2, v2, keep
	}
	if math.IsNaN(v) && !isStale(v) {
		d.nansSeen++
	}
	changed := !keep || t2 != t || math.Float64bits(v2) != math.Float64bits(v)
	if !changed {
		return t2, v2, keep
	}
	switch {
	case isStale(v):
		d.markers++
		if strings.Contains(key, "fake_nan") {
			d.nanSeriesMarkers++
		}
	case math.IsNaN(v):
		d.nans++
	default:
		d.values++
	}
	return t2, v2, keep
}
