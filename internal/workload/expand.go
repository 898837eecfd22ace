package workload

import (
	"slices"
	"strconv"
	"strings"
)

// keepHistogramsCumulative makes every histogram's buckets cumulative by construction: within
// a family (same name and labels but le) starts and rates never decrease with le, and _count
// takes the +Inf bucket's shape, so _count equals the +Inf bucket at every timestamp.
func keepHistogramsCumulative(p *Profile) {
	type bucket struct {
		idx int
		le  float64
	}
	families := map[string][]bucket{}
	for i, s := range p.Series {
		if s.Type != "histogram" || !strings.HasSuffix(s.Name, "_bucket") {
			continue
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
		k := Series{Name: strings.TrimSuffix(s.Name, "_bucket"), Labels: rest}.key()
		families[k] = append(families[k], bucket{i, le})
	}
	index := map[string]int{}
	for i, s := range p.Series {
		index[s.key()] = i
	}
	for k, bs := range families {
		slices.SortFunc(bs, func(a, b bucket) int {
			switch {
			case a.le < b.le:
				return -1
			case a.le > b.le:
				return 1
			}
			return 0
		})
		for j := 1; j < len(bs); j++ {
			prev, cur := &p.Series[bs[j-1].idx].Shape, &p.Series[bs[j].idx].Shape
			cur.Value = max(cur.Value, prev.Value)
			cur.Rate = max(cur.Rate, prev.Rate)
			cur.Resolution = 1
		}
		p.Series[bs[0].idx].Shape.Resolution = 1
		inf := p.Series[bs[len(bs)-1].idx].Shape
		// The family key is the _count series' key without its suffix.
		name, labels := splitKey(k)
		if i, ok := index[Series{Name: name + "_count", Labels: labels}.key()]; ok {
			p.Series[i].Shape = inf
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
// distinct values: each new value copies the series of the first value.
func expand(p *Profile, e Expansion) {
	var values []string
	for _, s := range p.Series {
		if !strings.HasPrefix(s.Name, e.Prefix) {
			continue
		}
		if v, ok := labelValue(s.Labels, e.Label); ok && !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	if len(values) == 0 || len(values) >= e.Count {
		return
	}
	slices.SortFunc(values, compareNatural)
	template := values[0]
	var added []Series
	for n := len(values); len(values) < e.Count; n++ {
		nv := newValue(template, values, n)
		if slices.Contains(values, nv) {
			continue // "eth2" is there already: the next number
		}
		values = append(values, nv)
		for _, s := range p.Series {
			if v, ok := labelValue(s.Labels, e.Label); ok && v == template && strings.HasPrefix(s.Name, e.Prefix) {
				c := s
				c.Labels = slices.Clone(s.Labels)
				for i := range c.Labels {
					if c.Labels[i].Name == e.Label {
						c.Labels[i].Value = nv
					}
				}
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
		return ai - bi
	}
	return strings.Compare(a, b)
}
