package query

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
)

func TestDefaultPlan(t *testing.T) {
	cfg := config.Default()
	p, err := LoadPlan(tsbench.Assets, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Warnings(); len(w) != 0 {
		t.Errorf("default rules and panels must all parse, warnings: %q", w)
	}
	kinds := map[string]int{}
	names := map[string]bool{}
	for _, q := range p.Queries {
		kinds[q.Kind]++
		if names[q.Name] {
			t.Errorf("duplicate query name %q", q.Name)
		}
		names[q.Name] = true
		if q.Kind == KindInstant && !strings.Contains(q.Expr, `job="node_exporter"`) {
			t.Errorf("rule %s does not select job=\"node_exporter\": %s", q.Name, q.Expr)
		}
	}
	if kinds[KindInstant] < 30 {
		t.Errorf("%d default rules, want at least 30", kinds[KindInstant])
	}
	if kinds[KindRange] < 10 {
		t.Errorf("%d default panels, want at least 10", kinds[KindRange])
	}
	for _, k := range []string{KindSeries, KindLabels, KindLabelValues} {
		if kinds[k] == 0 {
			t.Errorf("no %s lookups", k)
		}
	}
	if got := len(p.RuleExprs()); got != kinds[KindInstant] {
		t.Errorf("RuleExprs() has %d rules, want %d", got, kinds[KindInstant])
	}
	// The heavy rules: windows of hours.
	var heavy int
	for _, r := range p.RuleExprs() {
		if strings.Contains(r.Expr, "[6h") || strings.Contains(r.Expr, "[3h") || strings.Contains(r.Expr, "[2h]") {
			heavy++
		}
	}
	if heavy < 4 {
		t.Errorf("%d rules with windows of hours, want at least 4", heavy)
	}
}

func TestLoadPlanReplacements(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "r.yml")
	if err := os.WriteFile(rules, []byte(`groups:
  - name: a
    rules:
      - alert: Up
        expr: up == 0
      - record: job:up:sum
        expr: sum by (job) (up)
  - name: b
    rules:
      - alert: Up
        expr: up{job="x"} == 0
      - alert: Up
        expr: up{job="y"} == 0
      - alert: Broken
        expr: rate(up[5m]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.QueryRules = rules
	cfg.RangeQueries = []config.RangeQuery{{Name: "p", Expr: "up", Range: time.Hour, Step: time.Minute, Interval: 30 * time.Second}}
	p, err := LoadPlan(fstest.MapFS{}, &cfg) // nothing embedded is needed
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Name, Kind, Expr string }
	var got []row
	for _, q := range p.Queries {
		if q.Kind == KindInstant || q.Kind == KindRange {
			got = append(got, row{q.Name, q.Kind, q.Expr})
		}
	}
	want := []row{
		{"Up", KindInstant, "up == 0"},
		{"job:up:sum", KindInstant, "sum by (job) (up)"},
		{"Up:b", KindInstant, `up{job="x"} == 0`},
		{"Up:b:2", KindInstant, `up{job="y"} == 0`},
		{"Broken", KindInstant, "rate(up[5m]"},
		{"p", KindRange, "up"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	w := p.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], `group "b"`) || !strings.Contains(w[0], `"Broken"`) {
		t.Errorf("warnings = %q, want one naming group b and rule Broken", w)
	}
	if p.Queries[4].ParseError == "" {
		t.Error("Broken has no ParseError")
	}
}

// A bad rule file is an error naming the file, the group and the rule, each problem once.
func TestLoadPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name, rules, want string
	}{
		{"alert and record", "groups:\n  - name: g1\n    rules:\n      - alert: A\n        record: a:b\n        expr: up\n", `group "g1", rule 1, "A"`},
		{"missing expr", "groups:\n  - name: g2\n    rules:\n      - alert: NoExpr\n", `group "g2", rule 1, "NoExpr": field 'expr' must be set`},
		{
			"unknown key", "groups:\n  - name: g3\n    rules:\n      - alert: Fine\n        expr: up\n      - alert: A\n        exp: up\n",
			`line 7: group "g3", rule 2, "A": field exp not found in type rulefmt.Rule`,
		},
		{
			"for: banana", "groups:\n  - name: g4\n    rules:\n      - alert: Fine\n        expr: up\n      - alert: Banana\n        expr: up\n        for: banana\n",
			`line 6: group "g4", rule 2, "Banana": not a valid duration string: "banana"`,
		},
		{
			"record with a bad duration", "groups:\n  - name: g5\n    rules:\n      - record: a:b\n        expr: up\n        keep_firing_for: 5 apples\n",
			`line 4: group "g5", rule 1, "a:b": unknown unit " apples" in duration "5 apples"`,
		},
		{"group interval", "groups:\n  - name: g6\n    interval: banana\n    rules:\n      - alert: A\n        expr: up\n", `line 2: group "g6": not a valid duration string: "banana"`},
		{"unknown group key", "groups:\n  - name: g7\n    intervall: 1m\n    rules:\n      - alert: A\n        expr: up\n", `line 3: group "g7": field intervall not found`},
		{"wrong type", "groups:\n  - name: g8\n    rules:\n      - alert: A\n        expr: [up]\n", `line 5: group "g8", rule 1, "A": cannot unmarshal`},
		{"yaml syntax", "groups: [\n", "yaml"},
		{"empty", "groups: []\n", "no rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			fsys := fstest.MapFS{
				DefaultRulesPath:     {Data: []byte(tc.rules)},
				DefaultDashboardPath: {Data: []byte("panels: [{name: a, expr: up, range: 1h, step: 1m, interval: 1m}]\n")},
			}
			_, err := LoadPlan(fsys, &cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "queryRules "+DefaultRulesPath+": ") {
				t.Errorf("err = %v, want it to name the key and the file", err)
			}
			if n := strings.Count(err.Error(), "\n"); n != 0 {
				t.Errorf("err = %v: %d lines, want one problem once", err, n+1)
			}
		})
	}
}

// rangeQueries: [] runs no range queries and indexLookupInterval: 0 no index lookups; without
// the keys, the default dashboard and lookups run.
func TestLoadPlanTurnsPartsOff(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       map[string]int
	}{
		{"defaults", "", map[string]int{KindInstant: 1, KindRange: 1, KindSeries: 6, KindLabels: 2, KindLabelValues: 4}},
		{"no range queries", "rangeQueries: []\n", map[string]int{KindInstant: 1, KindSeries: 6, KindLabels: 2, KindLabelValues: 4}},
		{"null range queries", "rangeQueries:\n", map[string]int{KindInstant: 1, KindRange: 1, KindSeries: 6, KindLabels: 2, KindLabelValues: 4}},
		{"no index lookups", "indexLookupInterval: 0s\n", map[string]int{KindInstant: 1, KindRange: 1}},
		{"rules only", "rangeQueries: []\nindexLookupInterval: 0s\n", map[string]int{KindInstant: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			fsys := fstest.MapFS{
				DefaultRulesPath:     {Data: []byte("groups: [{name: g, rules: [{alert: A, expr: up}]}]\n")},
				DefaultDashboardPath: {Data: []byte("panels: [{name: a, expr: up, range: 1h, step: 1m, interval: 1m}]\n")},
			}
			p, err := LoadPlan(fsys, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, q := range p.Queries {
				got[q.Kind]++
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("queries by kind (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDashboardErrors(t *testing.T) {
	cfg := config.Default()
	fsys := fstest.MapFS{
		DefaultRulesPath:     {Data: []byte("groups: [{name: g, rules: [{alert: A, expr: up}]}]\n")},
		DefaultDashboardPath: {Data: []byte("panels: [{name: a, expr: up, range: 1h, step: 0s, interval: 1m}]\n")},
	}
	_, err := LoadPlan(fsys, &cfg)
	if err == nil || !strings.Contains(err.Error(), `rangeQueries: default dashboard rules/dashboard.yml: panels[0] "a": step: must be > 0`) {
		t.Fatalf("err = %v, want the key, the file, the panel and its key named", err)
	}
}

func TestOffsetStableAndInRange(t *testing.T) {
	for _, name := range []string{"NodeHighCPUUsage", "a", ""} {
		o := offset(name, 10*time.Second)
		if o < 0 || o >= 10*time.Second || o != offset(name, 10*time.Second) {
			t.Errorf("offset(%q) = %v", name, o)
		}
	}
}
