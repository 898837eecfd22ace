package query

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
)

// TestRenameLabelsRoundTrip checks the rewrite by hand on default rules and on each place a
// label is named, for both mappings that rename: underscore names print bare, dotted names in
// Prometheus 3's quoted form, and each result parses back to itself.
func TestRenameLabelsRoundTrip(t *testing.T) {
	under := otlpStorage(config.OTLPLabelsUnderscore).OTLPRenames()
	dotted := otlpStorage(config.OTLPLabelsAttributes).OTLPRenames()
	for _, c := range []struct {
		expr, under, dotted string
	}{{
		`node_load1{job="node_exporter",instance="host-000001:9100"}`,
		`node_load1{service_instance_id="host-000001:9100",service_name="node_exporter"}`,
		`node_load1{"service.instance.id"="host-000001:9100","service.name"="node_exporter"}`,
	}, {
		`100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{job="node_exporter", mode="idle"}[5m]))) > 90`,
		`100 * (1 - avg by (service_instance_id) (rate(node_cpu_seconds_total{mode="idle",service_name="node_exporter"}[5m]))) > 90`,
		`100 * (1 - avg by ("service.instance.id") (rate(node_cpu_seconds_total{"service.name"="node_exporter",mode="idle"}[5m]))) > 90`,
	}, {
		`node_load15{job="node_exporter"} / on (instance) group_left (job) count without (job) (node_cpu_seconds_total{job="node_exporter"}) > 2`,
		`node_load15{service_name="node_exporter"} / on (service_instance_id) group_left (service_name) count without (service_name) (node_cpu_seconds_total{service_name="node_exporter"}) > 2`,
		`node_load15{"service.name"="node_exporter"} / on ("service.instance.id") group_left ("service.name") count without ("service.name") (node_cpu_seconds_total{"service.name"="node_exporter"}) > 2`,
	}, {
		`a * ignoring (instance) b`,
		`a * ignoring (service_instance_id) b`,
		`a * ignoring ("service.instance.id") b`,
	}, {
		// Names only: the replacement, the regex and the values stay as written.
		`label_join(label_replace(up{job=~"job.*"}, "host", "$1", "instance", "(.*):.*"), "id", ",", "job", "instance")`,
		`label_join(label_replace(up{service_name=~"job.*"}, "host", "$1", "service_instance_id", "(.*):.*"), "id", ",", "service_name", "service_instance_id")`,
		`label_join(label_replace(up{"service.name"=~"job.*"}, "host", "$1", "service.instance.id", "(.*):.*"), "id", ",", "service.name", "service.instance.id")`,
	}, {
		`label_replace(job, "job", "x", "mode", "")`, // a metric named job is not a label
		`label_replace(job, "service_name", "x", "mode", "")`,
		`label_replace(job, "service.name", "x", "mode", "")`,
	}} {
		for _, m := range []struct {
			rename map[string]string
			want   string
		}{{under, c.under}, {dotted, c.dotted}} {
			got, err := RenameLabels(c.expr, m.rename)
			if err != nil {
				t.Fatalf("%s: %v", c.expr, err)
			}
			if got != m.want {
				t.Errorf("%s:\n got %s\nwant %s", c.expr, got, m.want)
			}
			roundTrip(t, got)
		}
	}
}

// roundTrip checks that expr parses back to itself: what the rewrite prints is what a storage
// that speaks Prometheus 3's PromQL reads.
func roundTrip(t *testing.T, expr string) {
	t.Helper()
	e, err := parser.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s does not parse back: %v", expr, err)
		return
	}
	if e.String() != expr {
		t.Errorf("%s parses back as %s", expr, e.String())
	}
}

func otlpStorage(m config.OTLPLabels) config.Storage {
	return config.Storage{Protocol: config.ProtocolOTLP, OTLPLabels: m}
}

func TestOTLPRenamesOnlyForOTLP(t *testing.T) {
	for _, c := range []struct {
		st   config.Storage
		want bool
	}{
		{otlpStorage(config.OTLPLabelsPrometheus), false},
		{otlpStorage(""), false},
		{otlpStorage(config.OTLPLabelsUnderscore), true},
		{otlpStorage(config.OTLPLabelsAttributes), true},
		{config.Storage{Protocol: config.ProtocolRW1, OTLPLabels: config.OTLPLabelsUnderscore}, false},
	} {
		if got := c.st.OTLPRenames() != nil; got != c.want {
			t.Errorf("%s %q: renames %v, want %v", c.st.Protocol, c.st.OTLPLabels, got, c.want)
		}
	}
}

// TestRenamedPlanRoundTrip renames the whole default plan with native-histogram twins and index
// lookups on, for each mapping that renames: every query parses back to itself, every rule
// selects the storage's job label, and the plan the other storages get is left as it was.
func TestRenamedPlanRoundTrip(t *testing.T) {
	cfg := config.Default()
	cfg.IndexLookupInterval = cfg.QueryInterval
	cfg.NativeHistograms.Send = config.NativeBoth
	p, err := LoadPlan(tsbench.Assets, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	before := make([]Query, len(p.Queries))
	copy(before, p.Queries)
	if got := p.Renamed(otlpStorage("").OTLPRenames()); got != p {
		t.Error("a storage with Prometheus' names got another plan")
	}
	for _, m := range []config.OTLPLabels{config.OTLPLabelsUnderscore, config.OTLPLabelsAttributes} {
		job, instance := config.OTLPLabelNames(m)
		got := p.Renamed(otlpStorage(m).OTLPRenames())
		if len(got.Queries) != len(p.Queries) {
			t.Fatalf("%s: %d queries, want %d", m, len(got.Queries), len(p.Queries))
		}
		renamed := 0
		for i, q := range got.Queries {
			if q.Expr == "" {
				continue
			}
			e, err := parser.ParseExpr(q.Expr)
			if err != nil {
				t.Errorf("%s: %s does not parse: %v", m, q.Name, err)
				continue
			}
			if e.String() != q.Expr {
				t.Errorf("%s: %s parses back as %s", m, q.Expr, e.String())
			}
			for _, old := range []string{"job", "instance"} {
				if namesLabel(e, old) {
					t.Errorf("%s: %s still names %s: %s", m, q.Name, old, q.Expr)
				}
			}
			if q.Expr != before[i].Expr {
				renamed++
			}
			if q.Kind == KindInstant && !strings.Contains(q.Expr, quoted(job)+`="node_exporter"`) {
				t.Errorf("%s: rule %s does not select %s: %s", m, q.Name, job, q.Expr)
			}
			if q.Name == "label_values_instance" && q.Label != instance {
				t.Errorf("%s: label_values_instance asks for %s, want %s", m, q.Label, instance)
			}
		}
		if renamed < 40 {
			t.Errorf("%s: %d queries renamed, want the rules and panels (40 or more)", m, renamed)
		}
	}
	for i := range before {
		if p.Queries[i].Expr != before[i].Expr || p.Queries[i].Label != before[i].Label {
			t.Fatalf("the shared plan changed: %s", p.Queries[i].Name)
		}
	}
}

func quoted(name string) string {
	if strings.Contains(name, ".") {
		return `"` + name + `"`
	}
	return name
}

// namesLabel reports whether e names the label in a matcher, a grouping or a vector matching.
func namesLabel(e parser.Expr, name string) bool {
	found := false
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch x := n.(type) {
		case *parser.VectorSelector:
			for _, m := range x.LabelMatchers {
				found = found || m.Name == name
			}
		case *parser.AggregateExpr:
			found = found || slices.Contains(x.Grouping, name)
		case *parser.BinaryExpr:
			if x.VectorMatching != nil {
				found = found || slices.Contains(x.VectorMatching.MatchingLabels, name) || slices.Contains(x.VectorMatching.Include, name)
			}
		}
		return nil
	})
	return found
}
