package query

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
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
