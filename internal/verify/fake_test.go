package verify

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/workload"
)

// fakeWorkload is a small deterministic workload for unit tests: targets × series, scrape k
// of target i at start + i×7ms + k×interval; even targets get a new revision every churn
// scrapes and leave a staleness marker on each old series; series 1 is NaN.
type fakeWorkload struct {
	targets, series int
	start, interval int64
	churn           int64
	job             string // default "fake"
	// intValues makes values 16-digit integers below 2^53, which rounding to 15 significant
	// digits changes and VictoriaMetrics stores exactly: it keeps a float64 as an int64
	// decimal mantissa and a power-of-ten exponent, exact for such integers but not for every
	// fractional value (docs/verification.md: about 1 % of the default workload's values come back one unit
	// in the last place off).
	intValues bool
}

func (f *fakeWorkload) Targets() int         { return f.targets }
func (f *fakeWorkload) SeriesPerTarget() int { return f.series }
func (f *fakeWorkload) ScrapeTime(i int, k int64) int64 {
	return f.start + int64(i)*7 + k*f.interval
}

func (f *fakeWorkload) Revision(i int, k int64) int64 {
	if i%2 == 1 || f.churn == 0 {
		return 0
	}
	return k / f.churn
}

func (f *fakeWorkload) labels(i, s int, rev int64) []workload.Label {
	name := "fake_counter_total"
	if s == 1 {
		name = "fake_nan"
	}
	return []workload.Label{
		{Name: "__name__", Value: name},
		{Name: "instance", Value: fmt.Sprintf("host-%d", i)},
		{Name: "job", Value: cmp.Or(f.job, "fake")},
		{Name: "revision", Value: strconv.FormatInt(rev, 10)},
		{Name: "s", Value: strconv.Itoa(s)},
	}
}

func (f *fakeWorkload) value(i, s int, t int64) float64 {
	if s == 1 {
		return math.NaN()
	}
	if f.intValues {
		return float64(1_234_567_890_000_000 + (t-f.start)*7 + int64(i*1000+s))
	}
	// Values with 17 significant digits, so that rounding to 15 changes most of them.
	return float64(t-f.start)/3 + float64(i*1000+s)
}

func (f *fakeWorkload) Scrape(app workload.Appender, i int, k int64) (int, int) {
	t := f.ScrapeTime(i, k)
	rev := f.Revision(i, k)
	markers := 0
	if k > 0 {
		if old := f.Revision(i, k-1); old != rev {
			for s := range f.series {
				app.Append(f.labels(i, s, old), t, math.Float64frombits(staleNaNBits))
				markers++
			}
		}
	}
	for s := range f.series {
		app.Append(f.labels(i, s, rev), t, f.value(i, s, t))
	}
	return f.series, markers
}

// fakeSample is one stored sample of the fake storage.
type fakeSample struct {
	t int64
	v float64
}

// fakeProm is a tiny Prometheus HTTP API over stored samples: range and instant selectors
// with Prometheus' semantics (markers dropped from ranges, staleness and 5m lookback in
// instants), query_range of a selector, and the probe expressions.
type fakeProm struct {
	series map[string][]fakeSample // by keyOfLabels
	labels map[string][]label
	// vmLike answers time(), scalar(), sum(time()), vector(0) - metric and avg_over_time as
	// VictoriaMetrics 1.79.5 (Debian's) does, and unlike it keeps a series in range queries
	// after its staleness marker (1.79.5 stops there: TestSeededFaultsRealStorages), which
	// gives the rule comparison a difference to find. It keeps NaN, which 1.79.5 drops.
	vmLike bool
}

func newFakeProm() *fakeProm {
	return &fakeProm{series: map[string][]fakeSample{}, labels: map[string][]label{}}
}

// Append stores a sample; like Prometheus, it ignores a sample identical to the newest one
// of its series (same timestamp, same bits).
func (p *fakeProm) Append(ls []workload.Label, t int64, v float64) {
	lab := toLabels(ls)
	key := keyOf(lab)
	p.labels[key] = lab
	if ss := p.series[key]; len(ss) > 0 && ss[len(ss)-1].t == t && math.Float64bits(ss[len(ss)-1].v) == math.Float64bits(v) {
		return
	}
	p.series[key] = append(p.series[key], fakeSample{t, v})
}

var (
	rangeSel = regexp.MustCompile(`^(\{.*\})\[(\d+)ms\]$`)
	fnSel    = regexp.MustCompile(`^(timestamp|avg_over_time)\((.*)\)$`)
	matcher  = regexp.MustCompile(`([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"`)
)

func parseSel(s string) []label {
	var ls []label
	for _, m := range matcher.FindAllStringSubmatch(s, -1) {
		v, _ := strconv.Unquote(`"` + m[2] + `"`)
		ls = append(ls, label{Name: m[1], Value: v})
	}
	return ls
}

func (p *fakeProm) match(sel []label) []string {
	var keys []string
	for key, ls := range p.labels {
		ok := true
		for _, m := range sel {
			found := false
			for _, l := range ls {
				if l == m {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}

type jsonSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values,omitempty"`
	Value  []any             `json:"value,omitempty"`
}

func metric(ls []label, dropName bool) map[string]string {
	m := map[string]string{}
	for _, l := range ls {
		if !dropName || l.Name != "__name__" {
			m[l.Name] = l.Value
		}
	}
	return m
}

func one(t int64, v float64) []any {
	p := pair(t, v)
	return p[:]
}

func pair(t int64, v float64) [2]any {
	return [2]any{json.Number(query.FormatMillis(t)), strconv.FormatFloat(v, 'f', -1, 64)}
}

func (p *fakeProm) instantAt(key string, ts int64) (fakeSample, bool) {
	var last *fakeSample
	for i, s := range p.series[key] {
		if s.t <= ts {
			last = &p.series[key][i]
		}
	}
	if last == nil || isStale(last.v) || ts-last.t > lookbackMillis {
		return fakeSample{}, false
	}
	return *last, true
}

func (p *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	q := strings.TrimSpace(r.Form.Get("query"))
	reply := func(typ string, result any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": typ, "result": result}})
	}
	if r.URL.Path == "/api/v1/query_range" {
		start, _ := query.ParseMillis(r.Form.Get("start"))
		end, _ := query.ParseMillis(r.Form.Get("end"))
		step, _ := query.ParseMillis(r.Form.Get("step"))
		out := []jsonSeries{}
		for _, key := range p.match(parseSel(q)) {
			js := jsonSeries{Metric: metric(p.labels[key], false)}
			for ts := start; ts <= end; ts += step {
				if s, ok := p.instantAt(key, ts); ok {
					js.Values = append(js.Values, pair(ts, s.v))
				} else if p.vmLike && ts > start {
					// Ignore the marker and repeat the last value (see vmLike).
					if s, ok := p.instantAt(key, ts-step); ok {
						js.Values = append(js.Values, pair(ts, s.v))
					}
				}
			}
			if len(js.Values) > 0 {
				out = append(out, js)
			}
		}
		reply("matrix", out)
		return
	}
	at, _ := query.ParseMillis(r.Form.Get("time"))
	scalarOrVector := func(v float64) {
		if p.vmLike {
			reply("vector", []jsonSeries{{Metric: map[string]string{}, Value: one(at, v)}})
			return
		}
		reply("scalar", pair(at, v))
	}
	switch {
	case q == "time()":
		scalarOrVector(float64(at) / 1000)
	case q == "scalar(vector(1))":
		scalarOrVector(1)
	case q == "sum(time())":
		if p.vmLike {
			reply("vector", []jsonSeries{{Metric: map[string]string{}, Value: one(at, float64(at)/1000)}})
			return
		}
		w.WriteHeader(400)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": "expected type instant vector in aggregation expression, got scalar"})
	case strings.HasPrefix(q, "vector(0) - "):
		out := []jsonSeries{}
		if p.vmLike {
			for _, key := range p.match(parseSel(strings.TrimPrefix(q, "vector(0) - "))) {
				if s, ok := p.instantAt(key, at); ok {
					out = append(out, jsonSeries{Metric: metric(p.labels[key], true), Value: one(at, -s.v)})
				}
			}
		}
		reply("vector", out)
	case rangeSel.MatchString(q):
		m := rangeSel.FindStringSubmatch(q)
		width, _ := strconv.ParseInt(m[2], 10, 64)
		out := []jsonSeries{}
		for _, key := range p.match(parseSel(m[1])) {
			js := jsonSeries{Metric: metric(p.labels[key], false)}
			for _, s := range p.series[key] {
				if s.t > at-width && s.t <= at && !isStale(s.v) {
					js.Values = append(js.Values, pair(s.t, s.v))
				}
			}
			if len(js.Values) > 0 {
				out = append(out, js)
			}
		}
		reply("matrix", out)
	case fnSel.MatchString(q):
		m := fnSel.FindStringSubmatch(q)
		out := []jsonSeries{}
		if m[1] == "timestamp" {
			for _, key := range p.match(parseSel(m[2])) {
				if s, ok := p.instantAt(key, at); ok {
					out = append(out, jsonSeries{Metric: metric(p.labels[key], true), Value: one(at, float64(s.t)/1000)})
				}
			}
		} else {
			rm := rangeSel.FindStringSubmatch(m[2])
			width, _ := strconv.ParseInt(rm[2], 10, 64)
			for _, key := range p.match(parseSel(rm[1])) {
				var sum float64
				n := 0
				for _, s := range p.series[key] {
					if s.t > at-width && s.t <= at && !isStale(s.v) {
						sum += s.v
						n++
					}
				}
				if n > 0 {
					out = append(out, jsonSeries{Metric: metric(p.labels[key], !p.vmLike), Value: one(at, sum/float64(n))})
				}
			}
		}
		reply("vector", out)
	default:
		out := []jsonSeries{}
		for _, key := range p.match(parseSel(q)) {
			if s, ok := p.instantAt(key, at); ok {
				out = append(out, jsonSeries{Metric: metric(p.labels[key], false), Value: one(at, s.v)})
			}
		}
		reply("vector", out)
	}
}
