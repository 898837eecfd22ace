package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tsbench/tsbench/internal/config"
)

// Expansion multiplies a label family of the metrics whose name starts with Prefix until
// Label has Count distinct values: a capture on a 2-CPU machine expands cpu to what a typical
// host has. New values continue a numeric sequence ("2", "3", ...) or number the first value
// ("vda" → "vda2", "eth0" → "eth4", "/" → "/mnt2").
type Expansion struct {
	Prefix string
	Label  string
	Count  int
}

// ParseExpansions parses "prefix:label=count,..." (e.g. "node_cpu_:cpu=16").
func ParseExpansions(s string) ([]Expansion, error) {
	var out []Expansion
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		prefix, rest, ok := strings.Cut(part, ":")
		label, count, ok2 := strings.Cut(rest, "=")
		n, err := strconv.Atoi(count)
		if !ok || !ok2 || err != nil || n < 1 || label == "" {
			return nil, fmt.Errorf("expansion %q: want prefix:label=count, e.g. node_cpu_:cpu=16", part)
		}
		out = append(out, Expansion{Prefix: prefix, Label: label, Count: n})
	}
	return out, nil
}

// MinTickScrapes is the shortest capture whose shapes record how often values change: fewer
// scrapes cannot tell a value that changes every tenth scrape from one that never does.
const MinTickScrapes = 30

// CaptureOptions say how to capture a profile.
type CaptureOptions struct {
	URL      string
	Scrapes  int           // at least 2: shapes are fitted from the differences
	Interval time.Duration // between scrapes
	Expand   []Expansion
}

// observation is one series seen over the scrapes.
type observation struct {
	series Series
	times  []float64 // seconds since the first scrape
	values []float64
}

// Capture scrapes an exporter opts.Scrapes times and fits every series' shape.
func Capture(ctx context.Context, client *http.Client, opts CaptureOptions) (*Profile, error) {
	if opts.Scrapes < 2 {
		return nil, errors.New("capture needs at least 2 scrapes")
	}
	obs := map[string]*observation{}
	var order []string
	// Scrapes are anchored at the first, so a slow scrape does not stretch the ticks.
	first := time.Now()
	for i := range opts.Scrapes {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Until(first.Add(time.Duration(i) * opts.Interval))):
			}
		}
		now := time.Now()
		families, err := scrape(ctx, client, opts.URL)
		if err != nil {
			return nil, err
		}
		at := now.Sub(first).Seconds()
		for _, s := range flatten(families) {
			k := s.series.key()
			o, ok := obs[k]
			if !ok {
				o = &observation{series: s.series}
				obs[k] = o
				order = append(order, k)
			}
			o.times = append(o.times, at)
			o.values = append(o.values, s.value)
		}
	}
	p := &Profile{Source: fmt.Sprintf("captured from %s: %d scrapes %s apart", config.RedactURL(opts.URL), opts.Scrapes, opts.Interval)}
	// Shapes of a capture long enough to see how values move follow the tick model, one tick
	// per scrape; a few scrapes only give rates and ranges.
	tick := 0.0
	if opts.Scrapes >= MinTickScrapes {
		tick = opts.Interval.Seconds()
	}
	sort.Strings(order)
	skipped := 0
	for _, k := range order {
		o := obs[k]
		s := o.series
		s.Shape = fit(s, o.times, o.values, tick)
		if !s.Shape.finite() {
			skipped++ // ±Inf, or a rate beyond float64: no JSON number holds it
			continue
		}
		p.Series = append(p.Series, s)
	}
	if skipped > 0 {
		p.Source += fmt.Sprintf("; %d series left out: values or rates not finite", skipped)
	}
	keepHistogramsCumulative(p)
	if tick > 0 {
		orderQuantiles(p)
		completeCPUModes(p)
	}
	for _, e := range opts.Expand {
		expand(p, e)
		p.Source += fmt.Sprintf("; %s{%s} expanded to %d values", e.Prefix, e.Label, e.Count)
	}
	return p, p.Validate()
}

func scrape(ctx context.Context, client *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", config.RedactURL(url), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: HTTP %d", config.RedactURL(url), resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: parse: %w", config.RedactURL(url), err)
	}
	return families, nil
}

type point struct {
	series Series
	value  float64
}

// flatten turns metric families into single series as a scrape stores them: histograms and
// summaries become their _bucket, _sum, _count (and quantile) series.
func flatten(families map[string]*dto.MetricFamily) []point {
	var out []point
	for name, mf := range families {
		typ := strings.ToLower(mf.GetType().String())
		for _, m := range mf.GetMetric() {
			labels := make([]Label, 0, len(m.GetLabel())+1)
			for _, lp := range m.GetLabel() {
				name := lp.GetName()
				switch {
				case lp.GetValue() == "":
					continue // an empty label is no label, as Prometheus stores it
				case name == labelJob || name == labelInstance || name == labelRevision || name == labelReplica:
					name = "exported_" + name // as a Prometheus scrape without honor_labels does
				}
				labels = append(labels, Label{Name: name, Value: lp.GetValue()})
			}
			add := func(suffix string, extra *Label, v float64) {
				ls := slices.Clone(labels)
				if extra != nil {
					ls = append(ls, *extra)
				}
				slices.SortFunc(ls, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
				out = append(out, point{series: Series{Name: name + suffix, Labels: ls, Type: typ, Help: mf.GetHelp(), Unit: mf.GetUnit()}, value: v})
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add("", nil, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add("", nil, m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add("_bucket", &Label{Name: "le", Value: formatFloat(b.GetUpperBound())}, float64(b.GetCumulativeCount()))
				}
				add("_bucket", &Label{Name: "le", Value: "+Inf"}, float64(h.GetSampleCount()))
				add("_sum", nil, h.GetSampleSum())
				add("_count", nil, float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add("", &Label{Name: "quantile", Value: formatFloat(q.GetQuantile())}, q.GetValue())
				}
				add("_sum", nil, s.GetSampleSum())
				add("_count", nil, float64(s.GetSampleCount()))
			default:
				add("", nil, m.GetUntyped().GetValue())
			}
		}
	}
	return out
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// fit chooses a series' shape from its observed values, one per tick of tick seconds: how
// often it changes, its steps and its digits, which is what a storage's compression sees.
func fit(s Series, times, values []float64, tick float64) Shape {
	allNaN := true
	for _, v := range values {
		allNaN = allNaN && math.IsNaN(v)
	}
	if allNaN {
		return Shape{Kind: NaN}
	}
	// A NaN now and then (a gauge with nothing to measure) says nothing about the shape: fit
	// the numbers around it.
	var ft, fv []float64
	for i, v := range values {
		if !math.IsNaN(v) {
			ft, fv = append(ft, times[i]), append(fv, v)
		}
	}
	times, values = ft, fv
	n := len(values)
	res := resolution(values)
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	// Steps between scrapes, and how many of them changed the value.
	var changed int
	var sumAbs, sum, sumSq float64
	for i := 1; i < n; i++ {
		d := values[i] - values[i-1]
		if d == 0 || math.IsNaN(d) {
			continue
		}
		changed++
		sumAbs += math.Abs(d)
		sum += d
		sumSq += d * d
	}
	changes := 0.0
	if n > 1 {
		changes = float64(changed) / float64(n-1)
	}
	// Histograms are cumulative counters throughout; a summary's _sum and _count are counters.
	counterLike := s.Type == "counter" || s.Type == "histogram" ||
		(s.Type == "summary" && (strings.HasSuffix(s.Name, "_sum") || strings.HasSuffix(s.Name, "_count")))
	monotone := true
	for i := 1; i < n; i++ {
		monotone = monotone && values[i] >= values[i-1]
	}
	if counterLike && monotone && values[0] >= 0 {
		rate := 0.0
		if dt := times[n-1] - times[0]; dt > 0 {
			rate = (values[n-1] - values[0]) / dt
		}
		sh := Shape{Kind: Counter, Value: values[0], Rate: rate, Resolution: res}
		if changed > 0 && tick > 0 {
			// Steps are μ + jitter·μ·(d − d'), d uniform: their spread is 0.408 jitter·μ.
			mean := sum / float64(changed)
			sd := math.Sqrt(max(0, sumSq/float64(changed)-mean*mean))
			sh.TickSeconds, sh.Changes = tick, changes
			sh.Jitter = round3(min(1, sd/mean/0.408))
			sh.Multiple = multiple(values, res)
		}
		return sh
	}
	if lo == hi {
		return Shape{Kind: Constant, Value: values[0]}
	}
	if tick <= 0 {
		// A short capture cannot see a gauge's period: a 10-minute swing over the observed range,
		// with a tenth of the range as noise, keeps the observed range and its step.
		return Shape{Kind: Gauge, Min: lo, Max: hi, PeriodSeconds: 600, Noise: 0.1, Resolution: res}
	}
	return Shape{
		Kind: Gauge, Min: lo, Max: hi, Resolution: res, TickSeconds: tick, Changes: changes,
		Step: sumAbs / float64(changed), Multiple: multiple(values, res),
	}
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// multiple is the greatest common divisor of the values in resolution steps (memory in pages,
// disk bytes in sectors) when the values show one: at least 8 distinct values, all whole
// steps within 2^53; else 0.
func multiple(values []float64, res float64) float64 {
	if res == 0 {
		return 0
	}
	var g int64
	distinct := map[float64]bool{}
	for _, v := range values {
		u := math.Round(v / res)
		if math.IsNaN(u) || math.Abs(u) > 1<<53 {
			return 0
		}
		distinct[v] = true
		g = gcd(g, int64(math.Abs(u)))
	}
	if len(distinct) < 8 || g <= 1 {
		return 0
	}
	return float64(g)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// finite reports whether every number of the shape is finite, as JSON needs.
func (sh Shape) finite() bool {
	for _, v := range []float64{
		sh.Value, sh.Rate, sh.Min, sh.Max, sh.PeriodSeconds, sh.Noise, sh.Resolution,
		sh.TickSeconds, sh.Changes, sh.Jitter, sh.Step, sh.Multiple,
	} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// resolution is the coarsest power of ten from 1 down to 1e-9 every observed value is a whole
// multiple of; 0 when the values have more digits than that (not quantized).
func resolution(values []float64) float64 {
	for e := 0; e >= -9; e-- {
		r := math.Pow10(e)
		ok := true
		for _, v := range values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			q := v / r
			if math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
				ok = false
				break
			}
		}
		if ok {
			return r
		}
	}
	return 0
}
