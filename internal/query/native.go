package query

import (
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// NativeSuffix names a query's native-histogram twin: the rule's or panel's name and it.
const NativeSuffix = ":native"

// nativeTwins returns, for each instant or range query that takes histogram_quantile of
// classic buckets, its twin over the native histograms sent beside or instead of them
// (nativeHistograms): the same query with every _bucket selector inside histogram_quantile
// renamed to the family and le left out of its groupings, as
// histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m]))) becomes
// histogram_quantile(0.99, sum(rate(x[5m]))).
func nativeTwins(qs []Query) []Query {
	var twins []Query
	for _, q := range qs {
		if (q.Kind != KindInstant && q.Kind != KindRange) || q.ParseError != "" {
			continue
		}
		expr, ok := nativeTwin(q.Expr)
		if !ok {
			continue
		}
		tw := q
		tw.Name, tw.Expr = q.Name+NativeSuffix, expr
		twins = append(twins, tw)
	}
	return twins
}

// nativeTwin rewrites expr's histogram_quantile calls over classic buckets; false when it
// has none.
func nativeTwin(expr string) (string, bool) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return "", false
	}
	changed := false
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		call, ok := n.(*parser.Call)
		if !ok || call.Func.Name != "histogram_quantile" || len(call.Args) != 2 {
			return nil
		}
		parser.Inspect(call.Args[1], func(n parser.Node, _ []parser.Node) error {
			switch n := n.(type) {
			case *parser.VectorSelector:
				for i, m := range n.LabelMatchers {
					if name, ok := strings.CutSuffix(m.Value, "_bucket"); ok && m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
						n.LabelMatchers[i] = labels.MustNewMatcher(m.Type, m.Name, name)
						if n.Name != "" {
							n.Name = name
						}
						changed = true
					}
				}
			case *parser.AggregateExpr:
				n.Grouping = removeLe(n.Grouping)
			case *parser.BinaryExpr:
				if n.VectorMatching != nil {
					n.VectorMatching.MatchingLabels = removeLe(n.VectorMatching.MatchingLabels)
				}
			}
			return nil
		})
		return nil
	})
	if !changed {
		return "", false
	}
	return e.String(), true
}

func removeLe(ls []string) []string {
	out := ls[:0:0]
	for _, l := range ls {
		if l != "le" {
			out = append(out, l)
		}
	}
	return out
}
