package observe

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/remotewrite"
)

// TestDashboardMetricsExist parses every query of the Grafana dashboard — each panel's expr
// and each query variable's definition — and checks that each metric it names is one
// tsbench exports, so a renamed metric cannot leave an empty panel or an empty $storage list.
func TestDashboardMetricsExist(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana/tsbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("deploy/grafana/tsbench.json: %v", err)
	}
	exprs := collectExprs(dash, nil)
	if len(exprs) < 15 {
		t.Fatalf("%d exprs in the dashboard, want every panel's", len(exprs))
	}
	vars := variableQueries(t, dash)
	if len(vars) < 2 { // $storage's definition and query
		t.Fatalf("variable queries %v, want $storage's", vars)
	}
	exported := exportedNames(t)
	for _, e := range append(exprs, vars...) {
		if missing := unexported(t, e, exported); len(missing) > 0 {
			t.Errorf("%s: metrics nobody exports: %v", e, missing)
		}
	}
}

// TestDashboardCheckCatchesUnknownNames makes sure the check above can fail.
func TestDashboardCheckCatchesUnknownNames(t *testing.T) {
	exported := exportedNames(t)
	for expr, want := range map[string][]string{
		`rate(tsbench_remotewrite_acked_samples_total[1m])`:                                       nil,
		`histogram_quantile(0.99, sum by (le) (rate(tsbench_query_duration_seconds_bucket[1m])))`: nil,
		`rate(tsbench_remotewrite_acked_samples_typo_total[1m])`:                                  {"tsbench_remotewrite_acked_samples_typo_total"},
		`tsbench_storage_cpu_cores_bucket`:                                                        {"tsbench_storage_cpu_cores_bucket"}, // not a histogram
		`{__name__="tsbench_nothing"}`:                                                            {"tsbench_nothing"},
	} {
		if got := unexported(t, expr, exported); !slices.Equal(got, want) {
			t.Errorf("%s: unexported %v, want %v", expr, got, want)
		}
	}
}

// TestDashboardCheckCatchesStaleVariable: a $storage variable over a metric tsbench no longer
// exports is caught, in its definition and in its query.
func TestDashboardCheckCatchesStaleVariable(t *testing.T) {
	var dash any
	if err := json.Unmarshal([]byte(`{"templating": {"list": [
		{"name": "datasource", "type": "datasource", "query": "prometheus"},
		{"name": "storage", "type": "query",
		 "definition": "label_values(tsbench_remotewrite_generated_total, storage)",
		 "query": {"query": "label_values(tsbench_remotewrite_generated_total{storage!=\"\"}, storage)"}},
		{"name": "job", "type": "query", "query": "label_values(job)"},
		{"name": "res", "type": "query", "query": "query_result(tsbench_storage_disk_bytes)"}
	]}}`), &dash); err != nil {
		t.Fatal(err)
	}
	exported := exportedNames(t)
	var missing []string
	for _, q := range variableQueries(t, dash) {
		missing = append(missing, unexported(t, q, exported)...)
	}
	want := []string{"tsbench_remotewrite_generated_total", "tsbench_remotewrite_generated_total"}
	if !slices.Equal(missing, want) {
		t.Errorf("unexported %v, want %v", missing, want)
	}
}

// collectExprs returns the value of every "expr" key, at any depth.
func collectExprs(v any, out []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "expr" {
				out = append(out, s)
				continue
			}
			out = collectExprs(x, out)
		}
	case []any:
		for _, x := range v {
			out = collectExprs(x, out)
		}
	}
	return out
}

// Grafana's Prometheus variable functions whose argument is a PromQL expression.
var (
	labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.+?)\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)
	labelOnly   = regexp.MustCompile(`^\s*label_values\(\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)
	queryResult = regexp.MustCompile(`^\s*query_result\((.+)\)\s*$`)
)

// variableQueries returns the PromQL expression in the definition and query of every query
// variable of the dashboard's templating: label_values(EXPR, label) and query_result(EXPR)
// give EXPR; label_values(label) names no metric. Any other form is an error: the check
// cannot read it.
func variableQueries(t *testing.T, dash any) []string {
	t.Helper()
	var out []string
	tmpl, _ := dash.(map[string]any)["templating"].(map[string]any)
	list, _ := tmpl["list"].([]any)
	for _, v := range list {
		v, _ := v.(map[string]any)
		if v["type"] != "query" {
			continue
		}
		queries := []any{v["definition"], v["query"]}
		if q, ok := v["query"].(map[string]any); ok {
			queries[1] = q["query"]
		}
		for _, q := range queries {
			q, _ := q.(string)
			switch m := labelValues.FindStringSubmatch(q); {
			case q == "" || labelOnly.MatchString(q):
			case m != nil:
				out = append(out, m[1])
			case queryResult.MatchString(q):
				out = append(out, queryResult.FindStringSubmatch(q)[1])
			default:
				t.Errorf("variable %v: query %q is not label_values(...) or query_result(...)", v["name"], q)
			}
		}
	}
	return out
}

// grafanaIntervals are the interval variables Grafana fills in before a query is sent.
var grafanaIntervals = regexp.MustCompile(`\$__(rate_)?interval|\$__range`)

// unexported parses expr and returns the metric names in it that are not in exported, in
// order. A _bucket, _sum or _count suffix is dropped only when the rest is a histogram or
// summary.
func unexported(t *testing.T, expr string, exported map[string]bool) []string {
	t.Helper()
	node, err := parser.ParseExpr(grafanaIntervals.ReplaceAllString(expr, "1m"))
	if err != nil {
		t.Errorf("%s: %v", expr, err)
		return nil
	}
	var missing []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == "__name__" {
				name = m.Value
			}
		}
		if name == "" || exported[name] {
			return nil
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && exported[base+" histogram"] {
				return nil
			}
		}
		missing = append(missing, name)
		return nil
	})
	return missing
}

// exportedNames registers every metric tsbench exports on a recorder: name → true, and
// "name histogram" → true for histograms and summaries.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	rec := &recorder{names: map[string]bool{}}
	remotewrite.NewMetrics(rec)
	query.NewMetrics(rec)
	newMetrics(rec)
	return rec.names
}

// recorder is a prometheus.Registerer that keeps the names of what is registered. Desc has
// no name getter, and an empty vec is absent from Gather, so the name is read from
// Desc.String (`Desc{fqName: "…", …}`).
type recorder struct{ names map[string]bool }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	for d := range ch {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		r.names[m[1]] = true
		switch c.(type) {
		case *prometheus.HistogramVec, prometheus.Histogram, *prometheus.SummaryVec, prometheus.Summary:
			r.names[m[1]+" histogram"] = true
		}
	}
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *recorder) Unregister(prometheus.Collector) bool { return true }
