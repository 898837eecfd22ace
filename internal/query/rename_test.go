package query

import (
	"slices"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
)

var otlpNames = map[string]string{"job": "service.name", "instance": "service.instance.id"}

func TestRenameLabels(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`up{job="node"}`, `up{"service.name"="node"}`},
		{`sum by (job, instance) (rate(x{instance=~"h.*"}[5m]))`, `sum by ("service.name", "service.instance.id") (rate(x{"service.instance.id"=~"h.*"}[5m]))`},
		{`sum without (instance) (x)`, `sum without ("service.instance.id") (x)`},
		{`a / on (instance) group_left (job) b`, `a / on ("service.instance.id") group_left ("service.name") b`},
		{`a * ignoring (job) b`, `a * ignoring ("service.name") b`},
		{`label_replace(x, "host", "$1", "instance", "(.*):.*")`, `label_replace(x, "host", "$1", "service.instance.id", "(.*):.*")`},
		{`label_join(x, "job", ",", "instance", "device")`, `label_join(x, "service.name", ",", "service.instance.id", "device")`},
		{`count_values("job", x)`, `count_values("service.name", x)`},
		{`max_over_time(x{job="a"}[1h:5m])`, `max_over_time(x{"service.name"="a"}[1h:5m])`},
		{`x{device="sda"} > 0`, `x{device="sda"} > 0`},
	} {
		got, err := RenameLabels(c.in, otlpNames)
		if err != nil || got != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.in, got, err, c.want)
			continue
		}
		if _, err := parser.ParseExpr(got); err != nil {
			t.Errorf("%s does not parse back: %v", got, err)
		}
	}
	if _, err := RenameLabels("sum(", otlpNames); err == nil {
		t.Error("an expression that does not parse: want its error")
	}
}

// TestRenamedDefaultPlan renames every query of the default plan: each parses back, names no
// job or instance label any more, and keeps its name, kind and schedule; without names the
// plan is the same.
func TestRenamedDefaultPlan(t *testing.T) {
	cfg := config.Default()
	p, err := LoadPlan(tsbench.Assets, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Renamed(nil) != p {
		t.Error("no names: want the plan itself")
	}
	got := p.Renamed(otlpNames)
	changed := 0
	for i, q := range got.Queries {
		old := p.Queries[i]
		if q.Name != old.Name || q.Kind != old.Kind || q.Interval != old.Interval {
			t.Errorf("query %d: %s %s became %s %s", i, old.Kind, old.Name, q.Kind, q.Name)
		}
		if q.Expr != old.Expr {
			changed++
		}
		if q.Label == "job" || q.Label == "instance" {
			t.Errorf("%s: label_values of %q, want it renamed", q.Name, q.Label)
		}
		if left := oldLabels(t, q); len(left) > 0 {
			t.Errorf("%s: %s still names %q", q.Name, q.Expr, left)
		}
	}
	if changed < len(p.Queries)/2 {
		t.Errorf("%d of %d queries changed: the default rules select and group by job and instance", changed, len(p.Queries))
	}
	t.Logf("%d of %d queries renamed", changed, len(p.Queries))
}

// oldLabels are the job and instance labels a query still names in matchers and groupings.
func oldLabels(t *testing.T, q Query) []string {
	t.Helper()
	var left []string
	old := func(n string) {
		if n == "job" || n == "instance" {
			left = append(left, n)
		}
	}
	if q.Kind != KindInstant && q.Kind != KindRange {
		if q.Expr == "" {
			return nil
		}
		ms, err := parser.ParseMetricSelector(q.Expr)
		if err != nil {
			t.Fatalf("%s: %v", q.Expr, err)
		}
		for _, m := range ms {
			old(m.Name)
		}
		return left
	}
	e, err := parser.ParseExpr(q.Expr)
	if err != nil {
		t.Fatalf("%s does not parse back: %v", q.Expr, err)
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			for _, m := range n.LabelMatchers {
				old(m.Name)
			}
		case *parser.AggregateExpr:
			for _, l := range n.Grouping {
				old(l)
			}
		case *parser.BinaryExpr:
			if n.VectorMatching != nil {
				for _, l := range slices.Concat(n.VectorMatching.MatchingLabels, n.VectorMatching.Include) {
					old(l)
				}
			}
		}
		return nil
	})
	return left
}
