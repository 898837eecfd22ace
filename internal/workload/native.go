package workload

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// NativeMode says how the profile's histograms (and, with FromSummaries, summaries) are sent
// (nativeHistograms, issue 23).
type NativeMode uint8

// Native histogram modes.
const (
	NativeOff  NativeMode = iota // classic series only, as captured
	NativeOnly                   // each family as one native histogram series instead of its classic series
	NativeBoth                   // classic series and the native histogram, as Prometheus' always_scrape_classic_histograms
)

// NativeOptions choose the families sent as native histograms.
type NativeOptions struct {
	Mode          NativeMode
	FromSummaries bool   // summaries too, their quantiles taken as bucket positions
	Schema        *int32 // nil: per family, the coarsest that keeps its bounds apart (NativeSchemas)
}

// Histogram is one native (exponential) histogram sample in Prometheus' terms: bucket i of
// schema s holds the observations in (2^((i-1)/2^s), 2^(i/2^s)]. Buckets are absolute counts
// of one span of consecutive buckets from index Offset, empty ones included. A staleness
// marker is a Histogram whose Sum is StaleNaN and all else zero, as Prometheus writes one.
type Histogram struct {
	Schema        int32
	ZeroThreshold float64
	ZeroCount     uint64
	Count         uint64
	Sum           float64
	Offset        int32
	Buckets       []uint64
}

// Stale reports whether h is a staleness marker.
func (h *Histogram) Stale() bool { return math.Float64bits(h.Sum) == StaleNaNBits }

// HistogramAppender receives native histograms beside an Appender's floats; an Appender
// without it gets none. labels and h are valid only during the call.
type HistogramAppender interface {
	AppendHistogram(labels []Label, t int64, h *Histogram)
}

// nativeZeroThreshold is the width of the zero bucket, client_golang's default: 2^-128.
const nativeZeroThreshold = 0x1p-128

// Schema bounds of Prometheus' exponential histograms.
const (
	minSchema = -4
	maxSchema = 8
)

// nativeFamily is one histogram or summary family sent as a native histogram. Its count and
// sum are the classic _count and _sum at every point; its buckets split the count in fixed
// proportions (weights) by a house-monotone apportionment, so no bucket ever decreases while
// the count grows: a counter reset shows only where _count has one.
type nativeFamily struct {
	series     Series   // the native series: the family's name and labels (no le, quantile)
	tpl        template // its labels with the target slots
	count, sum int      // the _count and _sum series
	classic    []int    // every series of the family, left out in NativeOnly
	histogram  bool     // from a histogram (classic _bucket series), not a summary
	schema     int32
	offset     int32     // index of weights[1]
	weights    []float64 // [0] the zero bucket, [1+j] bucket offset+j; they add up to 1
}

// familyPart is a bucket (le) or quantile series of a family: its position and share.
type familyPart struct {
	at    float64 // le, or the quantile's typical value
	share float64 // the classic bucket's rate, or the quantile's level
	inf   bool    // the +Inf bucket
}

// compileNatives finds the families o converts: histograms with _bucket, _count and _sum
// series, and with FromSummaries summaries with _count, _sum and quantiles of known value.
// A family without a positive finite bound stays classic.
func compileNatives(p *Profile, o NativeOptions) []nativeFamily {
	if o.Mode == NativeOff {
		return nil
	}
	type acc struct {
		name          string
		labels        []Label
		count, sum    int
		members       []int
		parts         []familyPart
		fromHistogram bool
	}
	fams := map[string]*acc{}
	var order []string
	for i, s := range p.Series {
		if s.Type != "histogram" && (s.Type != "summary" || !o.FromSummaries) {
			continue
		}
		part := "quantile"
		if s.Type == "histogram" {
			part = "le"
		}
		name, role := s.Name, ""
		var rest []Label
		pos := ""
		for _, l := range s.Labels {
			if l.Name == part {
				pos = l.Value
			} else {
				rest = append(rest, l)
			}
		}
		switch {
		case pos != "" && part == "le" && strings.HasSuffix(name, "_bucket"):
			name, role = strings.TrimSuffix(name, "_bucket"), "part"
		case pos != "" && part == "quantile":
			role = "part"
		case strings.HasSuffix(name, "_count"):
			name, role = strings.TrimSuffix(name, "_count"), "count"
		case strings.HasSuffix(name, "_sum"):
			name, role = strings.TrimSuffix(name, "_sum"), "sum"
		default:
			continue
		}
		k := seriesKey(name, rest)
		a := fams[k]
		if a == nil {
			a = &acc{name: name, labels: rest, count: -1, sum: -1, fromHistogram: s.Type == "histogram"}
			fams[k] = a
			order = append(order, k)
		}
		a.members = append(a.members, i)
		switch role {
		case "count":
			a.count = i
		case "sum":
			a.sum = i
		default:
			if fp, ok := partOf(s.Shape, part, pos); ok {
				a.parts = append(a.parts, fp)
			}
		}
	}
	var out []nativeFamily
	for _, k := range order {
		a := fams[k]
		if a.count < 0 || a.sum < 0 {
			continue
		}
		f := nativeFamily{
			series: Series{Name: a.name, Labels: a.labels, Type: "histogram"}, count: a.count, sum: a.sum, classic: a.members,
			histogram: a.fromHistogram,
		}
		if f.place(a.parts, a.fromHistogram, o.Schema) {
			out = append(out, f)
		}
	}
	return out
}

// partOf reads a bucket's bound and rate, or a quantile's level and typical value (a gauge's
// maximum, a constant's value); a NaN quantile has no position.
func partOf(sh Shape, part, pos string) (familyPart, bool) {
	x, err := strconv.ParseFloat(pos, 64)
	if err != nil || math.IsNaN(x) {
		return familyPart{}, false
	}
	if part == "le" {
		return familyPart{at: x, share: max(sh.Rate, 0), inf: math.IsInf(x, 1)}, true
	}
	var at float64
	switch sh.Kind {
	case Gauge:
		at = sh.Max
	case Constant:
		at = sh.Value
	default:
		return familyPart{}, false
	}
	return familyPart{at: at, share: x}, !math.IsNaN(at)
}

// place turns the family's parts into weights over native buckets at its schema. A classic
// bucket's observations (its rate less the bucket below's) go to the native bucket of its
// upper bound, the +Inf bucket's to the bucket above the last bound; a quantile's level less
// the one below goes to the bucket of its value, the rest above the highest quantile. When no
// bucket moves, each finite bucket weighs the same. False when no part has a position.
func (f *nativeFamily) place(parts []familyPart, fromHistogram bool, schema *int32) bool {
	by := func(a, b familyPart) int { return cmp.Compare(a.at, b.at) }
	if !fromHistogram {
		by = func(a, b familyPart) int { return cmp.Compare(a.share, b.share) } // by level
	}
	slices.SortFunc(parts, by)
	var at []float64 // positive finite positions, sorted
	for _, p := range parts {
		if !p.inf && p.at > nativeZeroThreshold {
			at = append(at, p.at)
		}
	}
	if len(at) == 0 {
		return false
	}
	slices.Sort(at)
	f.schema = chooseSchema(at)
	if schema != nil {
		f.schema = *schema
	}
	above := bucketIndex(at[len(at)-1], f.schema) + 1
	type share struct {
		idx  int32
		w    float64
		zero bool // the zero bucket
		inf  bool // the +Inf bucket's
	}
	var shares []share
	prev := 0.0
	for _, p := range parts {
		sh := share{w: max(p.share-prev, 0), inf: p.inf}
		prev = max(prev, p.share)
		switch {
		case p.inf:
			sh.idx = above
		case p.at <= nativeZeroThreshold:
			sh.zero = true
		default:
			sh.idx = bucketIndex(p.at, f.schema)
		}
		shares = append(shares, sh)
	}
	if !fromHistogram && prev < 1 { // observations above the highest quantile
		shares = append(shares, share{idx: above, w: 1 - prev})
	}
	total := 0.0
	for _, s := range shares {
		total += s.w
	}
	if total <= 0 { // nothing moves: the finite buckets weigh the same
		for i := range shares {
			if !shares[i].inf {
				shares[i].w = 1
				total++
			}
		}
	}
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for _, s := range shares {
		if !s.zero && s.w > 0 {
			lo, hi = min(lo, s.idx), max(hi, s.idx)
		}
	}
	if lo > hi { // every observation in the zero bucket: one empty bucket for the span
		lo, hi = above-1, above-1
	}
	f.offset = lo
	f.weights = make([]float64, 2+hi-lo)
	for _, s := range shares {
		if s.zero {
			f.weights[0] += s.w / total
		} else if s.w > 0 {
			f.weights[1+s.idx-lo] += s.w / total
		}
	}
	return true
}

// chooseSchema is the coarsest schema, from -4 up to 8, that puts every position (sorted,
// positive) in a bucket of its own: the fewest buckets that still tell the bounds apart.
func chooseSchema(at []float64) int32 {
	for s := int32(minSchema); s < maxSchema; s++ {
		apart := true
		for i := 1; i < len(at); i++ {
			if at[i] > at[i-1] && bucketIndex(at[i], s) == bucketIndex(at[i-1], s) {
				apart = false
				break
			}
		}
		if apart {
			return s
		}
	}
	return maxSchema
}

// bucketIndex is the index of the bucket of schema s that holds v > 0: the i with
// 2^((i-1)/2^s) < v <= 2^(i/2^s).
func bucketIndex(v float64, s int32) int32 {
	i := int32(math.Ceil(math.Log2(v) * math.Exp2(float64(s))))
	for v > BucketUpper(i, s) {
		i++
	}
	for v <= BucketUpper(i-1, s) {
		i--
	}
	return i
}

// BucketUpper is the upper bound of bucket i of schema s: 2^(i/2^s).
func BucketUpper(i, s int32) float64 { return math.Exp2(float64(i) / math.Exp2(float64(s))) }

// apportion splits c observations over the weights (adding up to 1) into out by D'Hondt's
// method: the c largest of w[j]/k (k = 1, 2, ...; ties to the lower j) each give bucket j one.
// The c+1 largest hold the c largest, so no bucket ever decreases as c grows, and the counts
// add up to c exactly. It starts a little under each bucket's quota (floor(c·w) - 1, which
// the method never goes below), so it takes at most about 2·len(w) steps whatever c.
func apportion(c uint64, w []float64, out []uint64) {
	var total uint64
	for j, x := range w {
		out[j] = 0
		if q := math.Floor(float64(c)*x) - 1; x > 0 && q > 0 {
			out[j] = uint64(q)
		}
		total += out[j]
	}
	for ; total < c; total++ {
		best, bq := -1, 0.0
		for j, x := range w {
			if x <= 0 {
				continue
			}
			if q := x / float64(out[j]+1); best < 0 || q > bq {
				best, bq = j, q
			}
		}
		out[best]++
	}
}

// native fills h with family f of target at t, its buckets in buf (grown and returned).
func (g *Generator) native(f *nativeFamily, target int, t int64, scale float64, h *Histogram, buf []uint64) []uint64 {
	cv := g.value(&g.templates[f.count].shape, target, f.count, t, scale)
	sum := g.value(&g.templates[f.sum].shape, target, f.sum, t, scale)
	var c uint64
	if cv >= 1 && !math.IsInf(cv, 1) {
		c = uint64(math.Round(cv))
	}
	buf = slices.Grow(buf[:0], len(f.weights))[:len(f.weights)]
	apportion(c, f.weights, buf)
	*h = Histogram{
		Schema: f.schema, ZeroThreshold: nativeZeroThreshold, ZeroCount: buf[0], Count: c, Sum: sum,
		Offset: f.offset, Buckets: buf[1:],
	}
	if c == 0 {
		h.Sum = 0 // no observation, no sum (a captured sum with a zero count is noise)
	}
	return buf
}

// NativeHistogram is native family f of target at t, for the read-back: a new Histogram.
func (g *Generator) NativeHistogram(target, f int, t int64) Histogram {
	var h Histogram
	buf := g.native(&g.natives[f], target, t, g.scale(target), &h, nil)
	h.Buckets = slices.Clone(buf[1:])
	return h
}

// NativeFamilies is how many families go as native histograms.
func (g *Generator) NativeFamilies() int { return len(g.natives) }

// NativeSeries is native family f's series: its name (the family's) and labels.
func (g *Generator) NativeSeries(f int) Series { return g.natives[f].series }

// NativeLabels is the full sorted label set of native family f of target at revision rev.
func (g *Generator) NativeLabels(target, f int, rev int64) []Label {
	sc := g.scratch.Get().(*scratch)
	defer g.scratch.Put(sc)
	return slices.Clone(g.fill(sc, &g.natives[f].tpl, g.targetText(sc, target, rev, life{})))
}

// NativeBucketsSent reports whether native family f's classic _bucket series are sent too
// (nativeHistograms both, a histogram's family).
func (g *Generator) NativeBucketsSent(f int) bool {
	return g.opts.Native.Mode == NativeBoth && g.natives[f].histogram
}

// NativeSchemas lists each native family's name and schema, for the results.
func (g *Generator) NativeSchemas() map[string]int32 {
	out := map[string]int32{}
	for _, f := range g.natives {
		out[f.series.Name] = f.schema
	}
	return out
}

// compileNativeSeries compiles the natives' label templates and marks the classic series
// NativeOnly leaves out.
func (g *Generator) compileNativeSeries() {
	defer func() {
		g.nfloats = len(g.templates)
		for _, skip := range g.skip {
			if skip {
				g.nfloats--
			}
		}
	}()
	for i := range g.natives {
		f := &g.natives[i]
		f.tpl = g.template(f.series)
		g.maxLabels = max(g.maxLabels, len(f.tpl.labels))
		if g.opts.Native.Mode == NativeOnly {
			if g.skip == nil {
				g.skip = make([]bool, len(g.templates))
			}
			for _, s := range f.classic {
				g.skip[s] = true
			}
		}
	}
}

// scrapeNatives appends every native family of target at t (stale: staleness markers) to
// app when it takes histograms, and says how many.
func (g *Generator) scrapeNatives(app Appender, sc *scratch, tv targetValues, target int, t int64, scale float64, stale bool) int {
	ha, ok := app.(HistogramAppender)
	if !ok || len(g.natives) == 0 {
		return 0
	}
	for i := range g.natives {
		f := &g.natives[i]
		if stale {
			sc.hist = Histogram{Sum: StaleNaN()}
		} else {
			sc.buckets = g.native(f, target, t, scale, &sc.hist, sc.buckets)
			g.histogramExemplar(app, sc, target, i, t, &sc.hist)
		}
		ha.AppendHistogram(g.fill(sc, &f.tpl, tv), t, &sc.hist)
	}
	return len(g.natives)
}

// floats is how many float series a scrape sends: the profile's less those sent as native only.
func (g *Generator) floats() int { return g.nfloats }

// NativeFamilies is the generator's.
func (p *Part) NativeFamilies() int { return p.g.NativeFamilies() }

// NativeSeries is the generator's.
func (p *Part) NativeSeries(f int) Series { return p.g.NativeSeries(f) }

// NativeSchemas is the generator's.
func (p *Part) NativeSchemas() map[string]int32 { return p.g.NativeSchemas() }

// NativeBucketsSent is the generator's.
func (p *Part) NativeBucketsSent(f int) bool { return p.g.NativeBucketsSent(f) }

// NativeLabels is the generator's for the part's target j.
func (p *Part) NativeLabels(j, f int, rev int64) []Label {
	return p.g.NativeLabels(p.targets[j], f, rev)
}

// NativeHistogram is the generator's for the part's target j.
func (p *Part) NativeHistogram(j, f int, t int64) Histogram {
	return p.g.NativeHistogram(p.targets[j], f, t)
}

// SamplesPerScrape is how many samples one scrape of a target sends to an appender that
// takes histograms: the profile's series less those sent as native only, plus one per
// native family. Without native histograms it is SeriesPerTarget.
func (g *Generator) SamplesPerScrape() int { return g.floats() + len(g.natives) }

// SamplesPerScrape is the generator's.
func (p *Part) SamplesPerScrape() int { return p.g.SamplesPerScrape() }
