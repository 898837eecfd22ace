package workload

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// Names follow Prometheus' legacy scheme, the one remote write to Prometheus 2.x accepts.
func TestProfileNames(t *testing.T) {
	for _, tc := range []struct {
		metric, label string
		ok            bool
	}{
		{"node_cpu_seconds_total", "cpu", true},
		{"job:rate5m", "_x", true},
		{"a", "A9", true},
		{"1up", "cpu", false},
		{"a-b", "cpu", false},
		{"node_cpu", "9", false},
		{"node_cpu", "a:b", false},
		{"node_cpu", "__reserved", false},
		{"nœud", "cpu", false},
		{"node", "cœur", false},
	} {
		p := &Profile{Series: []Series{{Name: tc.metric, Labels: []Label{{tc.label, "1"}}, Shape: Shape{Kind: Constant}}}}
		if err := p.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s{%s}: error %v, want ok %v", tc.metric, tc.label, err, tc.ok)
		}
	}
}

// FuzzParseExpansions: "prefix:label=count,..." parses to counts >= 1 and non-empty labels, or
// fails with an error.
func FuzzParseExpansions(f *testing.F) {
	for _, s := range []string{"node_cpu_:cpu=16", "node_cpu_:cpu=16, node_network_:device=4", "", ",", "x:y=0", "x:=3", ":y=2", "a:b=c=3", "a:b=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseExpansions(s)
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Count < 1 || e.Label == "" {
				t.Fatalf("ParseExpansions(%q) gave %+v", s, e)
			}
		}
	})
}

// FuzzExpand: expanding a label family whose values are the comma-separated list gives a
// profile that still validates, with exactly max(count, values) distinct values of the label.
func FuzzExpand(f *testing.F) {
	f.Add("0,1", 16)
	f.Add("0,2", 4)
	f.Add("eth0,eth2", 3)
	f.Add("vda,vda2", 3)
	f.Add("/,/mnt2", 3)
	f.Add("lo", 1)
	f.Add("10,x1", 5)
	f.Fuzz(func(t *testing.T, list string, count int) {
		if count < 1 || count > 200 {
			return
		}
		p := &Profile{}
		seen := map[string]bool{}
		for v := range strings.SplitSeq(list, ",") {
			if v == "" || seen[v] {
				continue
			}
			seen[v] = true
			p.Series = append(p.Series,
				Series{Name: "node_cpu_seconds_total", Labels: []Label{{"cpu", v}, {"mode", "idle"}}, Shape: Shape{Kind: Counter, Rate: 1}},
				Series{Name: "node_load1", Labels: []Label{{"cpu", v}}, Shape: Shape{Kind: Constant}})
		}
		if len(p.Series) == 0 {
			return
		}
		slices.SortFunc(p.Series, func(a, b Series) int { return strings.Compare(a.key(), b.key()) })
		expand(p, Expansion{Prefix: "node_cpu_", Label: "cpu", Count: count})
		if err := p.Validate(); err != nil {
			t.Fatalf("expanding %q to %d: %v", list, count, err)
		}
		values := map[string]bool{}
		for _, s := range p.Series {
			if v, ok := labelValue(s.Labels, "cpu"); ok && strings.HasPrefix(s.Name, "node_cpu_") {
				values[v] = true
			}
		}
		if want := max(count, len(seen)); len(values) != want {
			t.Fatalf("expanding %q to %d: %d values, want %d", list, count, len(values), want)
		}
	})
}

// FuzzParseProfile: a profile file either fails to load, or loads and generates samples whose
// labels remote write accepts: legacy names, non-empty values, sorted, no name twice.
func FuzzParseProfile(f *testing.F) {
	f.Add([]byte(`{"source":"t","series":[{"name":"up","type":"gauge","shape":{"kind":"constant","value":1}}]}`))
	f.Add([]byte(`{"series":[{"name":"c_total","labels":[{"name":"cpu","value":"0"}],"type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":0.01}},` +
		`{"name":"g","labels":[{"name":"a","value":"x"},{"name":"b","value":"y"}],"type":"gauge","shape":{"kind":"gauge","min":1,"max":5,"periodSeconds":60,"noise":0.1}},` +
		`{"name":"n","type":"summary","shape":{"kind":"nan"}}]}`))
	f.Add([]byte(`{"series":[{"name":"up","labels":[{"name":"job","value":"x"}],"shape":{"kind":"constant"}}]}`))
	f.Add([]byte(`{"series":[{"name":"g","shape":{"kind":"gauge","min":-1e308,"max":1e308,"periodSeconds":1e-300,"resolution":1e300}}]}`))
	f.Add([]byte(`{"series":[]}`))
	// The tick model (issue 14): a CPU whose busiest mode is the remainder, shared events.
	f.Add([]byte(`{"series":[{"name":"cpu","labels":[{"name":"mode","value":"idle"}],"type":"counter","shape":{"kind":"counter","value":5,"rate":0.1,"resolution":0.01,"tickSeconds":1,"changes":0.4,"jitter":0.5,"sum":"c"}},` +
		`{"name":"cpu","labels":[{"name":"mode","value":"user"}],"type":"counter","shape":{"kind":"remainder","value":9,"rate":1,"resolution":0.01,"tickSeconds":1,"sum":"c"}},` +
		`{"name":"g","type":"gauge","shape":{"kind":"gauge","min":0,"max":1e6,"resolution":1,"multiple":4096,"tickSeconds":1,"changes":0.9,"step":8192,"events":"e"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseProfile("p.json", b)
		if err != nil {
			return
		}
		g, err := New(p, Options{Seed: 1, Start: time.UnixMilli(1_700_000_000_000), Hosts: 2, Replicas: 2, ScrapeInterval: 10 * time.Second, ChurnPercent: 50, ChurnInterval: time.Minute})
		if err != nil {
			return
		}
		app := &labelChecker{t: t}
		for k := range int64(3) {
			g.Scrape(app, 1, k*7)
		}
		if app.n == 0 {
			t.Fatal("a loaded profile generated no sample")
		}
	})
}

// labelChecker fails the test on a sample remote write would refuse.
type labelChecker struct {
	t *testing.T
	n int
}

func (c *labelChecker) Append(labels []Label, _ int64, _ float64) {
	c.n++
	hasName := false
	for i, l := range labels {
		if l.Value == "" || !model.LegacyValidation.IsValidLabelName(l.Name) || (i > 0 && labels[i-1].Name >= l.Name) {
			c.t.Fatalf("labels %v: remote write refuses them (at %q)", labels, l.Name)
		}
		if l.Name == model.MetricNameLabel {
			hasName = model.LegacyValidation.IsValidMetricName(l.Value)
		}
	}
	if !hasName {
		c.t.Fatalf("labels %v: no valid __name__", labels)
	}
}

// pages serves a fixed sequence of exposition pages from memory, one per scrape.
type pages struct{ texts []string }

func (ps *pages) RoundTrip(*http.Request) (*http.Response, error) {
	text := ps.texts[0]
	if len(ps.texts) > 1 {
		ps.texts = ps.texts[1:]
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(text)), Header: http.Header{}}, nil
}

// FuzzCapture: whatever two scrapes of an exporter serve, a capture fails with an error or
// gives a profile that validates and that tsbench can write and load again.
func FuzzCapture(f *testing.F) {
	f.Add("# TYPE c_total counter\nc_total{cpu=\"0\"} 1\n# TYPE g gauge\ng 5\n", "# TYPE c_total counter\nc_total{cpu=\"0\"} 3\n# TYPE g gauge\ng 7\n")
	f.Add("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n", "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 4\nh_sum 5\nh_count 4\n")
	f.Add("# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 1\ns_count 1\nup{job=\"x\",instance=\"y\"} 1\n", "up{job=\"x\",instance=\"y\"} NaN\n")
	f.Add("x +Inf\ny -Inf\n", "x 1e308\ny -1e308\n")
	f.Add("{\"utf8.name\"} 1\n", "{\"utf8.name\"} 2\n")
	f.Fuzz(func(t *testing.T, page1, page2 string) {
		client := &http.Client{Transport: &pages{texts: []string{page1, page2}}}
		p, err := Capture(context.Background(), client, CaptureOptions{URL: "http://exporter.invalid/metrics", Scrapes: 2, Interval: time.Millisecond})
		if err != nil {
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("captured profile does not encode: %v", err)
		}
		if _, err := parseProfile("captured.json", b); err != nil {
			t.Fatalf("captured profile does not load again: %v", err)
		}
	})
}
