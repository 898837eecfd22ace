package query

import (
	"os"
	"testing"
	"time"
)

// FuzzParseRules: a rule file either fails with an error, or gives at least one query, each
// with a name, an expression and the interval asked for. Seeds: the shipped rule file and
// small files in Prometheus' and vmalert's shapes.
func FuzzParseRules(f *testing.F) {
	b, err := os.ReadFile("../../rules/node_exporter.rules.yml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, s := range []string{
		"groups:\n- name: g\n  rules:\n  - record: r\n    expr: up\n",
		"groups:\n- name: g\n  interval: 30s\n  concurrency: 2\n  rules:\n  - alert: A\n    expr: up == 0\n    for: 5m\n",
		"groups:\n- name: g\n  rules:\n  - alert: A\n    expr: sum(\n",
		"groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: banana\n",
		"groups: []\n", "", "groups:\n- {}\n", "{",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		qs, _, err := parseRules(b, 15*time.Second)
		if err != nil {
			return
		}
		if len(qs) == 0 {
			t.Fatal("no error and no rules")
		}
		for _, q := range qs {
			if q.Name == "" || q.Expr == "" || q.Kind != KindInstant || q.Interval <= 0 {
				t.Fatalf("rule parsed to %+v", q)
			}
		}
	})
}

// FuzzParseDashboard: the dashboard file either fails with an error or gives named panels with
// positive range, step and interval.
func FuzzParseDashboard(f *testing.F) {
	b, err := os.ReadFile("../../rules/dashboard.yml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("panels:\n- {name: p, expr: up, range: 1h, step: 15s, interval: 30s}\n"))
	f.Add([]byte("panels:\n- {name: p, expr: up, range: 0s, step: -1s}\n"))
	f.Add([]byte("panels: []\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		panels, err := parseDashboard(b)
		if err != nil {
			return
		}
		if len(panels) == 0 {
			t.Fatal("no error and no panels")
		}
		for _, p := range panels {
			if p.Name == "" || p.Expr == "" || p.Range <= 0 || p.Step <= 0 || p.Interval <= 0 {
				t.Fatalf("panel parsed to %+v", p)
			}
		}
	})
}
