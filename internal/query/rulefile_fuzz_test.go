package query

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzParseRules: a rule file either fails with an error, or gives at least one query, each
// with a name, an expression and the interval asked for, and with its group's headers only
// names and values that net/http sends as they are and that tsbench or the storage do not set
// themselves, and params that are not tsbench's own. Seeds: the shipped rule file, the
// vmalert file with every key and small files in Prometheus' and vmalert's shapes.
func FuzzParseRules(f *testing.F) {
	b, err := os.ReadFile("../../rules/node_exporter.rules.yml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	if b, err = os.ReadFile("testdata/vmalert-all-keys.rules.yml"); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, s := range []string{
		"groups:\n- name: g\n  headers: [\"X-A: 1\", \"\", \"b:\"]\n  params: {nocache: [\"1\"]}\n  rules: [{alert: A, expr: up}]\n",
		"groups:\n- name: g\n  query_offset: 1m\n  eval_delay: 1s\n  rules: [{record: r, expr: up}]\n",
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
			if q.Name == "" || q.Expr == "" || q.Kind != KindInstant || q.Interval <= 0 || q.TimeOffset < 0 {
				t.Fatalf("rule parsed to %+v", q)
			}
			for name, vs := range q.Header {
				if name != http.CanonicalHeaderKey(name) || strings.Trim(name, tokenChars) != "" || ownHeaders[name] != "" {
					t.Errorf("header name %q", name)
				}
				for _, v := range vs {
					if strings.ContainsAny(v, "\r\n\x00") {
						t.Errorf("header %s: value %q", name, v)
					}
				}
			}
			for name := range q.Params {
				if _, own := ownParams[name]; own || name == "" {
					t.Errorf("param %q", name)
				}
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
