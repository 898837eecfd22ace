package query

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
)

func TestNativeTwin(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{
			`histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))`,
			`histogram_quantile(0.99, sum(rate(http_request_duration_seconds[5m])))`,
		},
		{
			`histogram_quantile(0.9, sum by (job, le) (rate({__name__="x_bucket", job="a"}[1m]))) > 0.5`,
			`histogram_quantile(0.9, sum by (job) (rate({__name__="x",job="a"}[1m]))) > 0.5`,
		},
		{`histogram_quantile(0.5, rate(x_bucket[5m]))`, `histogram_quantile(0.5, rate(x[5m]))`},
		{`sum(rate(node_cpu_seconds_total[5m]))`, ""},
		{`histogram_quantile(0.5, x)`, ""}, // no classic buckets: nothing to twin
	} {
		got, ok := nativeTwin(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("nativeTwin(%s) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func TestNativeTwinsKeepSchedule(t *testing.T) {
	qs := []Query{
		{Name: "Latency", Kind: KindInstant, Expr: `histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))`, Interval: time.Minute, Group: "g"},
		{Name: "panel", Kind: KindRange, Expr: `histogram_quantile(0.5, sum by (le) (rate(x_bucket[1m])))`, Range: time.Hour, Step: time.Minute},
		{Name: "cpu", Kind: KindInstant, Expr: `up`},
		{Name: "bad", Kind: KindInstant, Expr: `histogram_quantile(`, ParseError: "x"},
	}
	want := []Query{
		{Name: "Latency:native", Kind: KindInstant, Expr: `histogram_quantile(0.99, sum(rate(x[5m])))`, Interval: time.Minute, Group: "g"},
		{Name: "panel:native", Kind: KindRange, Expr: `histogram_quantile(0.5, sum(rate(x[1m])))`, Range: time.Hour, Step: time.Minute},
	}
	if diff := cmp.Diff(want, nativeTwins(qs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestLoadPlanAddsNativeTwins: with native histograms sent, a rule file's histogram_quantile
// rule gets its twin, scheduled as it is; without, it does not.
func TestLoadPlanAddsNativeTwins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yml")
	rules := `groups:
- name: latency
  interval: 30s
  rules:
  - alert: SlowRequests
    expr: histogram_quantile(0.99, sum by (le) (rate(req_seconds_bucket[5m]))) > 1
`
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	for send, want := range map[string][]string{
		config.NativeOff:  {"SlowRequests"},
		config.NativeBoth: {"SlowRequests", "SlowRequests:native"},
	} {
		cfg := config.Default()
		cfg.QueryRules, cfg.RangeQueries, cfg.IndexLookupInterval = path, []config.RangeQuery{}, 0
		cfg.NativeHistograms.Send = send
		p, err := LoadPlan(nil, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, q := range p.Queries {
			got = append(got, q.Name)
			if q.Name == "SlowRequests:native" && (q.Interval != 30*time.Second || q.Expr != `histogram_quantile(0.99, sum(rate(req_seconds[5m]))) > 1`) {
				t.Errorf("twin %+v", q)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("send %s (-want +got):\n%s", send, diff)
		}
	}
}
