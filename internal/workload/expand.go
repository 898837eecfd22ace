package workload

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// keepHistogramsCumulative makes every histogram's buckets cumulative by construction: within
// a family (same name and labels but le) starts and rates never decrease with le, and _count
// takes the +Inf bucket's shape, so _count equals the +Inf bucket at every timestamp.
func keepHistogramsCumulative(p *Profile) {
	families := familiesOf(p, func(s Series) (string, float64, bool) {
		if s.Type != "histogram" || !strings.HasSuffix(s.Name, "_bucket") {
			return "", 0, false
		}
		var le float64
		rest := make([]Label, 0, len(s.Labels))
		for _, l := range s.Labels {
			if l.Name == "le" {
				le = parseLe(l.Value)
			} else {
				rest = append(rest, l)
			}
		}
		return Series{Name: strings.TrimSuffix(s.Name, "_bucket"), Labels: rest}.key(), le, true
	})
	index := seriesIndex(p)
	for k, bs := range families {
		for j := 1; j < len(bs); j++ {
			prev, cur := &p.Series[bs[j-1].idx].Shape, &p.Series[bs[j].idx].Shape
			cur.Value = max(cur.Value, prev.Value)
			cur.Rate = max(cur.Rate, prev.Rate)
			cur.Resolution = 1
		}
		p.Series[bs[0].idx].Shape.Resolution = 1
		// The family key is the _count series' key without its suffix.
		name, labels := splitKey(k)
		sumIdx, hasSum := index[Series{Name: name + "_sum", Labels: labels}.key()]
		if inf := p.Series[bs[len(bs)-1].idx].Shape; inf.TickSeconds > 0 {
			// Tick model: the buckets and _sum move at the same ticks (one observation lands
			// in several buckets at once), with one jitter, so the steps stay ordered too.
			jitter := 1.0
			for _, b := range bs {
				if sh := p.Series[b.idx].Shape; sh.TickSeconds > 0 {
					jitter = min(jitter, sh.Jitter)
				}
			}
			key := seriesKey(name, labels)
			for _, b := range bs {
				sh := &p.Series[b.idx].Shape
				*sh = Shape{
					Kind: Counter, Value: sh.Value, Rate: sh.Rate, Resolution: 1,
					TickSeconds: inf.TickSeconds, Changes: inf.Changes, Jitter: jitter, Events: key,
				}
			}
			if sh := &p.Series[sumIdx].Shape; hasSum && sh.TickSeconds > 0 {
				sh.Changes, sh.Events = inf.Changes, key
			}
		}
		if i, ok := index[Series{Name: name + "_count", Labels: labels}.key()]; ok {
			p.Series[i].Shape = p.Series[bs[len(bs)-1].idx].Shape
		}
	}
}

// member is a series of a family, by its index in the profile, with its place in the family:
// a bucket's le, a quantile's quantile.
type member struct {
	idx int
	at  float64
}

// familiesOf groups p's series into families: of gives a series' family key and place in it,
// or false when it is in none. Each family is sorted by place.
func familiesOf(p *Profile, of func(s Series) (key string, at float64, ok bool)) map[string][]member {
	families := map[string][]member{}
	for i, s := range p.Series {
		if k, at, ok := of(s); ok {
			families[k] = append(families[k], member{i, at})
		}
	}
	for _, ms := range families {
		slices.SortFunc(ms, func(a, b member) int { return cmp.Compare(a.at, b.at) })
	}
	return families
}

// seriesIndex is the index of each of p's series by its key.
func seriesIndex(p *Profile) map[string]int {
	index := map[string]int{}
	for i, s := range p.Series {
		index[s.key()] = i
	}
	return index
}

// fitSum makes the counters ms of Sum group key fit under their remainder ri (validateSums):
// first the mode with the largest step changes more often in smaller steps and less
// unevenly, then none jitters, then all change every tick, and last their rates shrink
// together to what one tick holds.
func fitSum(p *Profile, key string, ri int, ms []int) bool {
	members := func(f func(sh *Shape)) {
		for _, i := range ms {
			if i != ri {
				f(&p.Series[i].Shape)
			}
		}
	}
	for range 50 {
		if p.sumFits(key) {
			return true
		}
		var largest *Shape
		size := 0.0
		members(func(sh *Shape) {
			if step := sh.Rate / sh.Changes * (1 + sh.Jitter); sh.Rate > 0 && sh.Changes < 1 && step > size {
				largest, size = sh, step
			}
		})
		if largest == nil {
			break
		}
		largest.Changes = min(1, largest.Changes*1.25)
		largest.Jitter = round3(largest.Jitter * 0.9)
	}
	if !p.sumFits(key) {
		members(func(sh *Shape) { sh.Jitter = 0 })
	}
	if !p.sumFits(key) {
		members(func(sh *Shape) { sh.Changes = 1 })
	}
	if !p.sumFits(key) {
		// Whole ticks: one quantum of rounding per member and one for the remainder.
		rest := p.Series[ri].Shape
		var sum float64
		members(func(sh *Shape) { sum += sh.Rate })
		room := 0.999 * (rest.Rate*rest.TickSeconds - float64(len(ms)+1)*rest.Resolution)
		if sum > 0 && room > 0 {
			f := room / (sum * rest.TickSeconds)
			members(func(sh *Shape) { sh.Rate *= f })
		}
	}
	return p.sumFits(key)
}

// seriesKey writes a series as name{a="b",...}: the key of an Events or Sum group.
func seriesKey(name string, labels []Label) string {
	var b strings.Builder
	b.WriteString(name + "{")
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.Name + "=" + strconv.Quote(l.Value))
	}
	b.WriteString("}")
	return b.String()
}

// without returns labels less the one named name.
func without(labels []Label, name string) []Label {
	out := make([]Label, 0, len(labels))
	for _, l := range labels {
		if l.Name != name {
			out = append(out, l)
		}
	}
	return out
}

// orderQuantiles keeps a summary's quantiles ordered: its quantile gauges share one event
// stream and one noise over ranges that grow with the quantile (as observed: every scrape had
// them ordered), all on the finest resolution among them; _sum and _count change with them.
func orderQuantiles(p *Profile) {
	families := familiesOf(p, func(s Series) (string, float64, bool) {
		if s.Type != "summary" {
			return "", 0, false
		}
		q, ok := labelValue(s.Labels, "quantile")
		return seriesKey(s.Name, without(s.Labels, "quantile")), parseLe(q), ok
	})
	index := seriesIndex(p)
	for key, ms := range families {
		first := p.Series[ms[0].idx]
		base := Series{Name: first.Name, Labels: without(first.Labels, "quantile")}
		changes, tick := 0.0, 0.0
		res := math.Inf(1)
		for _, m := range ms {
			sh := p.Series[m.idx].Shape
			if sh.Kind == Gauge && sh.TickSeconds > 0 {
				changes, tick = max(changes, sh.Changes), sh.TickSeconds
				if sh.Resolution < res {
					res = sh.Resolution
				}
			}
		}
		countIdx, hasCount := index[Series{Name: base.Name + "_count", Labels: base.Labels}.key()]
		if hasCount && p.Series[countIdx].Shape.TickSeconds > 0 {
			changes = p.Series[countIdx].Shape.Changes
		}
		if tick == 0 {
			continue
		}
		lo, hi := math.Inf(-1), math.Inf(-1)
		for _, m := range ms {
			sh := &p.Series[m.idx].Shape
			switch sh.Kind {
			case Gauge:
				lo, hi = max(lo, sh.Min), max(hi, sh.Max)
				sh.Min, sh.Max = lo, max(hi, lo)
				sh.Changes, sh.Events, sh.Resolution, sh.Multiple = changes, key, res, 0
			case Constant:
				lo, hi = max(lo, sh.Value), max(hi, sh.Value)
			}
		}
		for _, suffix := range []string{"_sum", "_count"} {
			if i, ok := index[Series{Name: base.Name + suffix, Labels: base.Labels}.key()]; ok {
				if sh := &p.Series[i].Shape; sh.TickSeconds > 0 && sh.Kind == Counter {
					sh.Changes, sh.Events = changes, key
				}
			}
		}
	}
}

// completeCPUModes makes each CPU's busiest mode (idle on a quiet host, user on a loaded one)
// the remainder of its modes: it counts Rate × elapsed less what the other modes counted, Rate
// being the captured sum over modes (at most 1 s/s), so the modes add up to the elapsed time
// as /proc/stat's do, and the remainder's steps vary against the others' as they do on a real
// CPU. When the other modes could together step past one tick's total, the one with the
// largest step changes more often in smaller steps (same rate) and less unevenly, until they
// fit; rates give way last.
func completeCPUModes(p *Profile) {
	groups := map[string][]int{}
	busiest := map[string]int{}
	for i, s := range p.Series {
		if _, ok := labelValue(s.Labels, "mode"); !ok || !strings.HasSuffix(s.Name, "cpu_seconds_total") || s.Shape.Kind != Counter {
			continue
		}
		k := seriesKey(s.Name, without(s.Labels, "mode"))
		groups[k] = append(groups[k], i)
		if b, ok := busiest[k]; s.Shape.TickSeconds > 0 && (!ok || s.Shape.Rate > p.Series[b].Shape.Rate) {
			busiest[k] = i
		}
	}
	for key, ms := range groups {
		ri, ok := busiest[key]
		if !ok {
			continue
		}
		rest := &p.Series[ri].Shape
		total, res := 0.0, rest.Resolution
		for _, i := range ms {
			total += p.Series[i].Shape.Rate
			if r := p.Series[i].Shape.Resolution; p.Series[i].Shape.TickSeconds > 0 && r < res {
				res = r
			}
		}
		if res == 0 {
			continue // unquantized CPU seconds: keep the modes as they are
		}
		saved := make([]Shape, len(ms))
		for j, i := range ms {
			saved[j] = p.Series[i].Shape
		}
		*rest = Shape{
			Kind: Remainder, Value: rest.Value, Rate: min(1, total), Resolution: res,
			TickSeconds: rest.TickSeconds, Sum: key,
		}
		for _, i := range ms {
			if sh := &p.Series[i].Shape; i != ri {
				sh.Sum, sh.Resolution, sh.Multiple = key, res, 0
				if sh.TickSeconds == 0 {
					// A mode that did not move is a still counter; give it the group's grid.
					sh.TickSeconds, sh.Changes = rest.TickSeconds, 1
				}
			}
		}
		if !fitSum(p, key, ri, ms) {
			for j, i := range ms { // no room: the modes stay independent counters
				p.Series[i].Shape = saved[j]
			}
		}
	}
}

func parseLe(v string) float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return f
}

// splitKey inverts Series.key.
func splitKey(k string) (string, []Label) {
	parts := strings.Split(k, "\xff")
	var labels []Label
	for i := 1; i+1 < len(parts); i += 2 {
		labels = append(labels, Label{Name: parts[i], Value: parts[i+1]})
	}
	return parts[0], labels
}

// expand adds series so that label e.Label of the metrics starting with e.Prefix has e.Count
// distinct values: new values copy, in turn, the real values with the most series (a new
// CPU behaves like a real CPU; a new interface like the busiest real one, not like a dummy
// interface that is down), shapes and all, with their Events and Sum keys renamed; each copy
// is a series of its own, so it moves with its own events.
func expand(p *Profile, e Expansion) {
	var values []string
	count := map[string]int{}
	for _, s := range p.Series {
		if !strings.HasPrefix(s.Name, e.Prefix) {
			continue
		}
		if v, ok := labelValue(s.Labels, e.Label); ok {
			if count[v] == 0 {
				values = append(values, v)
			}
			count[v]++
		}
	}
	if len(values) == 0 || len(values) >= e.Count {
		return
	}
	slices.SortFunc(values, compareNatural)
	most := 0
	for _, v := range values {
		most = max(most, count[v])
	}
	var templates []string
	for _, v := range values {
		if count[v] == most {
			templates = append(templates, v)
		}
	}
	var added []Series
	for n, made := len(values), 0; len(values) < e.Count; n++ {
		nv := newValue(values[0], values, n)
		if slices.Contains(values, nv) {
			continue // "eth2" is there already: the next number
		}
		values = append(values, nv)
		template := templates[made%len(templates)]
		made++
		from, to := e.Label+"="+strconv.Quote(template), e.Label+"="+strconv.Quote(nv)
		for _, s := range p.Series {
			if v, ok := labelValue(s.Labels, e.Label); ok && v == template && strings.HasPrefix(s.Name, e.Prefix) {
				c := s
				c.Labels = slices.Clone(s.Labels)
				for i := range c.Labels {
					if c.Labels[i].Name == e.Label {
						c.Labels[i].Value = nv
					}
				}
				c.Shape.Events = strings.Replace(c.Shape.Events, from, to, 1)
				c.Shape.Sum = strings.Replace(c.Shape.Sum, from, to, 1)
				added = append(added, c)
			}
		}
	}
	p.Series = append(p.Series, added...)
	slices.SortStableFunc(p.Series, func(a, b Series) int { return strings.Compare(a.key(), b.key()) })
}

func labelValue(ls []Label, name string) (string, bool) {
	for _, l := range ls {
		if l.Name == name {
			return l.Value, true
		}
	}
	return "", false
}

// newValue names the n-th value of a label family: the next number for numeric families,
// else the template with its trailing number replaced by n ("eth0" → "eth4"), n appended
// ("vda" → "vda2"), or a mount point ("/" → "/mnt2").
func newValue(template string, existing []string, n int) string {
	numeric := true
	for _, v := range existing {
		if _, err := strconv.Atoi(v); err != nil {
			numeric = false
		}
	}
	if numeric {
		return strconv.Itoa(n)
	}
	if strings.HasSuffix(template, "/") {
		return template + "mnt" + strconv.Itoa(n)
	}
	return strings.TrimRight(template, "0123456789") + strconv.Itoa(n)
}

// compareNatural orders "2" before "10".
func compareNatural(a, b string) int {
	ai, aerr := strconv.Atoi(a)
	bi, berr := strconv.Atoi(b)
	if aerr == nil && berr == nil {
		return cmp.Compare(ai, bi)
	}
	return strings.Compare(a, b)
}
