package query

import (
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/config"
)

// LabelRenames maps the workload's job and instance to the names a storage written in protocol
// p stores them under when it keeps OTLP resource attributes as m (otlpLabels); nil when they
// keep their names, as with Prometheus' translation or any other protocol.
func LabelRenames(p config.Protocol, m config.OTLPLabels) map[string]string {
	if p != config.ProtocolOTLP {
		return nil
	}
	job, instance := config.OTLPLabelNames(m)
	if job == "job" && instance == "instance" {
		return nil
	}
	return map[string]string{"job": job, "instance": instance}
}

// RenameLabels returns expr with every label it names that rename maps under the new name:
// in matchers, by and without, on and ignoring, group_left and group_right, and the label
// arguments of label_replace, label_join and sort_by_label. It rewrites the parsed expression,
// never the text, so a metric name or a value that happens to read "job" stays as it is; a
// name with a dot prints in Prometheus 3's quoted form ({"service.name"="x"}).
func RenameLabels(expr string, rename map[string]string) (string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return "", err
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		renameIn(n, rename)
		return nil
	})
	return e.String(), nil
}

// renameIn renames the labels node n names itself; Inspect reaches its children.
func renameIn(n parser.Node, rename map[string]string) {
	names := func(ss []string) {
		for i, s := range ss {
			if to, ok := rename[s]; ok {
				ss[i] = to
			}
		}
	}
	switch e := n.(type) {
	case *parser.VectorSelector:
		for _, m := range e.LabelMatchers {
			if to, ok := rename[m.Name]; ok {
				m.Name = to
			}
		}
	case *parser.AggregateExpr:
		names(e.Grouping)
	case *parser.BinaryExpr:
		if e.VectorMatching != nil {
			names(e.VectorMatching.MatchingLabels)
			names(e.VectorMatching.Include)
		}
	case *parser.Call:
		for _, i := range labelArgs(e) {
			if s, ok := e.Args[i].(*parser.StringLiteral); ok {
				if to, ok := rename[s.Val]; ok {
					s.Val = to
				}
			}
		}
	}
}

// labelArgs are the positions of call's arguments that name labels: label_replace's
// destination and source, label_join's destination and sources, sort_by_label's labels.
func labelArgs(call *parser.Call) []int {
	var at []int
	switch call.Func.Name {
	case "label_replace":
		at = []int{1, 3}
	case "label_join":
		at = []int{1}
		for i := 3; i < len(call.Args); i++ {
			at = append(at, i)
		}
	case "sort_by_label", "sort_by_label_desc":
		for i := 1; i < len(call.Args); i++ {
			at = append(at, i)
		}
	}
	return at // the parser checked the count: label_replace has 5
}

// For returns the plan as storage st is queried: every query's job and instance under the
// names st stores them under (LabelRenames), so that a storage that keeps OTLP resource
// attributes as service_name or service.name is asked for its own series; p itself when st
// needs no renaming. A query that does not parse is sent as written.
func (p *Plan) For(st config.Storage) *Plan {
	rename := LabelRenames(st.WriteProtocol(), st.OTLPLabelMapping())
	if rename == nil {
		return p
	}
	out := &Plan{Queries: make([]Query, len(p.Queries)), warnings: p.warnings}
	for i, q := range p.Queries {
		if q.Expr != "" && q.ParseError == "" {
			if e, err := RenameLabels(q.Expr, rename); err == nil {
				q.Expr = e
			}
		}
		if to, ok := rename[q.Label]; ok {
			q.Label = to
		}
		out.Queries[i] = q
	}
	return out
}
