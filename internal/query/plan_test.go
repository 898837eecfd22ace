package query

import (
	"fmt"
	"net/http"
	"net/url"
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
			`line 7: group "g3", rule 2, "A": field exp not found in a rule`,
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
		o := offset("s", name, 10*time.Second)
		if o < 0 || o >= 10*time.Second || o != offset("s", name, 10*time.Second) {
			t.Errorf("offset(%q) = %v", name, o)
		}
	}
}

// TestOffsetPerStorage: two storages get each query at phases of their own, neither first
// for every query: with one phase for all, the runner that started first sent each query a
// moment before the other, and on a busy machine an A/A run ranked it faster.
func TestOffsetPerStorage(t *testing.T) {
	aFirst := 0
	const n = 40
	for i := range n {
		name := fmt.Sprintf("rule_%d", i)
		if offset("a", name, 10*time.Second) < offset("b", name, 10*time.Second) {
			aFirst++
		}
	}
	if aFirst < n/4 || aFirst > 3*n/4 {
		t.Errorf("a's phase before b's for %d of %d queries: want each storage first for about half", aFirst, n)
	}
}

// TestVMAlertRuleFile loads a vmalert-format file with every group and rule key: the group's
// interval is its rules' interval (queryInterval where it has none), and its concurrency,
// params, headers and query_offset or eval_delay go with them; every other group key set is
// named once in a warning with its groups.
func TestVMAlertRuleFile(t *testing.T) {
	cfg := config.Default()
	cfg.QueryRules = "testdata/vmalert-all-keys.rules.yml"
	cfg.RangeQueries = []config.RangeQuery{}
	cfg.IndexLookupInterval = 0
	p, err := LoadPlan(fstest.MapFS{}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Group      string
		Interval         time.Duration
		GroupConcurrency int
		Params           url.Values
		Header           http.Header
		TimeOffset       time.Duration
	}
	var got []row
	for _, q := range p.Queries {
		got = append(got, row{q.Name, q.Group, q.Interval, q.GroupConcurrency, q.Params, q.Header, q.TimeOffset})
	}
	hostParams := url.Values{"nocache": {"1"}, "extra_label": {"env=bench"}}
	hostHeader := http.Header{"X-Scope-Orgid": {"bench"}}
	want := []row{
		{"HostLoadHigh", "host", 30 * time.Second, 2, hostParams, hostHeader, 5 * time.Second},
		{"instance:node_memory_available:ratio", "host", 30 * time.Second, 2, hostParams, hostHeader, 5 * time.Second},
		{"HostDiskAlmostFull", "disk", cfg.QueryInterval, 0, nil, nil, time.Minute},
		{"HostCPUBusy", "cpu", time.Minute, 0, nil, nil, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
	const tail = " not applied: of a group's keys tsbench applies interval, concurrency, params, headers, query_offset and eval_delay"
	var wantWarnings []string
	for _, key := range []string{"debug", "eval_alignment"} {
		wantWarnings = append(wantWarnings, "queryRules testdata/vmalert-all-keys.rules.yml: group key "+key+` (group "host")`+tail)
	}
	wantWarnings = append(wantWarnings, `queryRules testdata/vmalert-all-keys.rules.yml: group key eval_offset (group "cpu")`+tail)
	for _, key := range []string{"extra_filter_labels", "labels", "limit", "notifier_headers", "tenant", "type"} {
		wantWarnings = append(wantWarnings, "queryRules testdata/vmalert-all-keys.rules.yml: group key "+key+` (group "host")`+tail)
	}
	if diff := cmp.Diff(wantWarnings, p.Warnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// A group's params and headers never replace what tsbench or the storage sets on a query:
// each attempt is an error naming the group and key, and no error quotes a header's value.
func TestGroupRequestErrors(t *testing.T) {
	const secret = "s3cr3t-tenant-token"
	group := func(keys string) string {
		return "groups:\n  - name: g\n" + keys + "    rules:\n      - alert: A\n        expr: up\n"
	}
	for _, tc := range []struct{ name, rules, want string }{
		{"params: query", group("    params:\n      query: [\"up\"]\n"), `line 3: group "g": params: query is tsbench's own parameter, the rule's expr; a group cannot set it`},
		{"params: time", group("    params: {time: [\"0\"], nocache: [\"1\"]}\n"), `line 3: group "g": params: time is tsbench's own parameter, the evaluation time`},
		{
			"headers: Authorization", group("    headers:\n      - \"X-Ok: 1\"\n      - \"authorization: Bearer " + secret + "\"\n"),
			`line 5: group "g": headers: item 2: Authorization is set by the storage's auth (readBearerToken, basicAuth or readHeaders of the storage in remoteStorages); a group cannot set it`,
		},
		{"headers: Content-Type", group("    headers: [\"Content-Type: application/json\"]\n"), `group "g": headers: item 1: Content-Type is set by tsbench's HTTP client`},
		{"headers: no colon", group("    headers: [\"" + secret + "\"]\n"), `group "g": headers: item 1: not "Name: value"`},
		{"headers: bad name", group("    headers: [\"X Bad: " + secret + "\"]\n"), `group "g": headers: item 1: the name is not a token`},
		{"headers: twice", group("    headers: [\"X-Scope-OrgID: a\", \"x-scope-orgid: " + secret + "\"]\n"), `group "g": headers: item 2: X-Scope-Orgid is set twice`},
		{"headers: line break", group("    headers: [\"X-A: " + secret + "\\nX-B: 1\"]\n"), `group "g": headers: item 1: the value of X-A has a line break or NUL`},
		{"query_offset and eval_delay", group("    query_offset: 1m\n    eval_delay: 30s\n"), `line 4: group "g": eval_delay: set with query_offset`},
		{"eval_offset and eval_delay", group("    interval: 1m\n    eval_offset: 10s\n    eval_delay: 30s\n"), `line 5: group "g": eval_delay: set with eval_offset, which vmalert refuses`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseRules([]byte(tc.rules), time.Minute)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error quotes a header's value: %v", err)
			}
		})
	}
	// An empty item is skipped, as vmalert does; an empty value is a value.
	qs, _, err := parseRules([]byte(group("    headers: [\"\", \"X-Empty:\"]\n")), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(http.Header{"X-Empty": {""}}, qs[0].Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
}

// A group header that a storage's readHeaders set too is an error naming group, storage and
// key, whichever its case: the storage's value would replace the group's unsaid.
func TestGroupHeaderAgainstStorageHeaders(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.yml")
	b := "groups:\n  - name: tenant-a\n    headers: [\"x-scope-orgid: a\", \"X-Team: perf\"]\n    rules: [{alert: A, expr: up}]\n" +
		"  - name: plain\n    rules: [{alert: B, expr: up}]\n"
	if err := os.WriteFile(rules, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.QueryRules = rules
	cfg.RangeQueries = []config.RangeQuery{}
	cfg.RemoteStorages = map[string]config.Storage{
		"mimir": {ReadURL: "http://127.0.0.1:9009/prometheus", ReadHeaders: config.Headers{"X-Scope-OrgID": "secret-tenant"}},
		"vm":    {ReadURL: "http://127.0.0.1:8428/"},
	}
	_, err := LoadPlan(fstest.MapFS{}, &cfg)
	want := `queryRules ` + rules + `: group "tenant-a": headers: X-Scope-Orgid is set for storage mimir by remoteStorages.mimir.readHeaders; a group cannot replace it`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	delete(cfg.RemoteStorages, "mimir")
	if _, err := LoadPlan(fstest.MapFS{}, &cfg); err != nil {
		t.Errorf("without that storage: %v", err)
	}
}

// A vmalert key with a wrong type, a negative concurrency and a key neither ruler has are
// errors naming the group (and rule); a key set in many groups is named once.
func TestVMAlertRuleFileErrors(t *testing.T) {
	for _, tc := range []struct{ name, rules, want string }{
		{"concurrency not a number", "groups:\n  - name: g\n    concurrency: four\n    rules:\n      - alert: A\n        expr: up\n", `line 3: group "g": cannot unmarshal !!str into int`},
		{"negative concurrency", "groups:\n  - name: g\n    concurrency: -1\n    rules:\n      - alert: A\n        expr: up\n", `line 2: group "g": concurrency: must be >= 0`},
		{"params not a map of lists", "groups:\n  - name: g\n    params: {nocache: 1}\n    rules:\n      - alert: A\n        expr: up\n", `line 3: group "g": cannot unmarshal !!int into []string`},
		{"eval_delay not a duration", "groups:\n  - name: g\n    eval_delay: soon\n    rules:\n      - alert: A\n        expr: up\n", `line 2: group "g": not a valid duration string: "soon"`},
		{"rule debug not a bool", "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        debug: maybe\n", `line 6: group "g", rule 1, "A": cannot unmarshal !!str into bool`},
		{"unknown group key", "groups:\n  - name: g\n    concurency: 2\n    rules:\n      - alert: A\n        expr: up\n", `line 3: group "g": field concurency not found in a rule group`},
		{"unknown top key", "groups: []\nrule_files: []\n", `field rule_files not found at the top of a rule file (only groups)`},
		{"repeated group", "groups:\n  - name: g\n    rules: [{alert: A, expr: up}]\n  - name: g\n    rules: [{alert: B, expr: up}]\n", `line 4: group "g": the name is repeated`},
		{"no group name", "groups:\n  - rules: [{alert: A, expr: up}]\n", `line 2: group 1: name must be set`},
		{"empty group item", "groups:\n  -\n  - name: g\n    rules: [{alert: A, expr: up}]\n", `line 2: group 1: empty or not a mapping`},
		{"empty rule item", "groups:\n  - name: g\n    rules:\n      -\n      - {alert: A, expr: up}\n", `line 4: group "g", rule 1: empty or not a mapping`},
		{"aliased group", "groups:\n  - &g {name: g, rules: [{alert: A, expr: up}]}\n  - *g\n", `line 2: group "g": the name is repeated`},
		{"two documents", "groups: [{name: a, rules: [{alert: A, expr: up}]}]\n---\ngroups: [{name: b, rules: [{alert: B, expr: up}]}]\n", `more than one YAML document (---)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseRules([]byte(tc.rules), time.Minute)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, _, err := parseRules([]byte("---\ngroups: [{name: a, rules: [{alert: A, expr: up}]}]\n---\n"), time.Minute); err != nil {
		t.Errorf("a file with an empty document after its one document: %v", err)
	}
	_, w, err := parseRules([]byte("groups:\n  - {name: a, limit: 1, rules: [{alert: A, expr: up}]}\n  - {name: b, limit: 1, rules: [{alert: B, expr: up}]}\n"+
		"  - {name: c, limit: 1, rules: [{alert: C, expr: up}]}\n  - {name: d, limit: 1, rules: [{alert: D, expr: up}]}\n  - {name: e, limit: 1, rules: [{alert: E, expr: up}]}\n"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 1 || !strings.Contains(w[0], `group key limit (groups "a", "b", "c", 2 more) not applied`) {
		t.Errorf("warnings = %q, want limit named once with its groups", w)
	}
}
