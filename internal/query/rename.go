package query

import (
	"github.com/prometheus/prometheus/promql/parser"
)

// Renamed is the plan as a storage that keeps some labels under other names is asked it
// (names: old → new; otlpLabels gives job and instance): every query's PromQL renamed by
// RenameLabels, index lookups' selectors and label names too. Names and everything else stay,
// so that the storage's figures line up query by query with the others'. A query that does not
// parse is left as it is. Nil names: the plan itself.
func (p *Plan) Renamed(names map[string]string) *Plan {
	if len(names) == 0 {
		return p
	}
	out := &Plan{Queries: make([]Query, len(p.Queries)), warnings: p.warnings}
	for i, q := range p.Queries {
		switch {
		case q.Kind == KindInstant || q.Kind == KindRange:
			if e, err := RenameLabels(q.Expr, names); err == nil {
				q.Expr = e
			}
		case q.Expr != "":
			if e, err := renameSelector(q.Expr, names); err == nil {
				q.Expr = e
			}
		}
		if n, ok := names[q.Label]; ok {
			q.Label = n
		}
		out.Queries[i] = q
	}
	return out
}

// RenameRules is rules with their expressions renamed as Renamed does.
func RenameRules(rules []NamedExpr, names map[string]string) []NamedExpr {
	if len(names) == 0 {
		return rules
	}
	out := make([]NamedExpr, len(rules))
	for i, r := range rules {
		out[i] = r
		if e, err := RenameLabels(r.Expr, names); err == nil {
			out[i].Expr = e
		}
	}
	return out
}

// RenameLabels rewrites expr so that every label it names is renamed (old → new in names):
// in selectors' matchers, by and without, on, ignoring, group_left and group_right,
// count_values' output label, and the label arguments of label_replace and label_join. It
// parses and prints with Prometheus' parser, which quotes a name that is not a classic one
// ({"service.name"="x"}, by ("service.name")), as Prometheus 3 reads it.
func RenameLabels(expr string, names map[string]string) (string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return "", err
	}
	rename := func(ls []string) {
		for i, l := range ls {
			if n, ok := names[l]; ok {
				ls[i] = n
			}
		}
	}
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			for _, m := range n.LabelMatchers {
				if to, ok := names[m.Name]; ok {
					m.Name = to
				}
			}
		case *parser.AggregateExpr:
			rename(n.Grouping)
			if s, ok := n.Param.(*parser.StringLiteral); ok && n.Op == parser.COUNT_VALUES {
				renameLiteral(s, names)
			}
		case *parser.BinaryExpr:
			if n.VectorMatching != nil {
				rename(n.VectorMatching.MatchingLabels)
				rename(n.VectorMatching.Include)
			}
		case *parser.Call:
			renameCallLabels(n, names)
		}
		return nil
	})
	return e.String(), nil
}

// renameCallLabels renames the label-name arguments of label_replace(v, dst, repl, src, re),
// label_join(v, dst, sep, src...) and sort_by_label(v, label...).
func renameCallLabels(c *parser.Call, names map[string]string) {
	var at []int
	switch c.Func.Name {
	case "label_replace":
		at = []int{1, 3}
	case "label_join":
		at = []int{1}
		for i := 3; i < len(c.Args); i++ {
			at = append(at, i)
		}
	case "sort_by_label", "sort_by_label_desc":
		for i := 1; i < len(c.Args); i++ {
			at = append(at, i)
		}
	}
	for _, i := range at {
		if i < len(c.Args) {
			if s, ok := c.Args[i].(*parser.StringLiteral); ok {
				renameLiteral(s, names)
			}
		}
	}
}

func renameLiteral(s *parser.StringLiteral, names map[string]string) {
	if n, ok := names[s.Val]; ok {
		s.Val = n
	}
}

// renameSelector renames the labels of a series selector (an index lookup's match[]).
func renameSelector(sel string, names map[string]string) (string, error) {
	ms, err := parser.ParseMetricSelector(sel)
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if n, ok := names[m.Name]; ok {
			m.Name = n
		}
	}
	return (&parser.VectorSelector{LabelMatchers: ms}).String(), nil
}
