package remotewrite

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/tsbench/tsbench/internal/workload"
)

// describeOTLP decodes body with the upstream OTLP types and describes it line by line.
func describeOTLP(t *testing.T, body []byte) []string {
	t.Helper()
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	var out []string
	attrs := func(m pcommon.Map) string {
		raw := m.AsRaw()
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(raw)) {
			kv = append(kv, fmt.Sprintf("%s=%v", k, raw[k]))
		}
		return "{" + strings.Join(kv, ",") + "}"
	}
	rms := req.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		out = append(out, "resource "+attrs(rm.Resource().Attributes()))
		for j := range rm.ScopeMetrics().Len() {
			sm := rm.ScopeMetrics().At(j)
			out = append(out, "scope "+sm.Scope().Name())
			for k := range sm.Metrics().Len() {
				m := sm.Metrics().At(k)
				head := fmt.Sprintf("%s %s help=%q unit=%q", m.Type(), m.Name(), m.Description(), m.Unit())
				switch m.Type() {
				case pmetric.MetricTypeSum:
					out = append(out, fmt.Sprintf("%s %s monotonic=%v", head, m.Sum().AggregationTemporality(), m.Sum().IsMonotonic()))
					for _, p := range m.Sum().DataPoints().All() {
						out = append(out, fmt.Sprintf("  %s t=%d start=%d v=%v flags=%d", attrs(p.Attributes()), p.Timestamp(), p.StartTimestamp(), p.DoubleValue(), p.Flags()))
					}
				case pmetric.MetricTypeGauge:
					out = append(out, head)
					for _, p := range m.Gauge().DataPoints().All() {
						out = append(out, fmt.Sprintf("  %s t=%d v=%v flags=%d", attrs(p.Attributes()), p.Timestamp(), p.DoubleValue(), p.Flags()))
					}
				case pmetric.MetricTypeSummary:
					out = append(out, head)
					for _, p := range m.Summary().DataPoints().All() {
						var qs []string
						for _, q := range p.QuantileValues().All() {
							qs = append(qs, fmt.Sprintf("%v:%v", q.Quantile(), q.Value()))
						}
						out = append(out, fmt.Sprintf("  %s t=%d count=%d sum=%v q=%v flags=%d", attrs(p.Attributes()), p.Timestamp(), p.Count(), p.Sum(), qs, p.Flags()))
					}
				case pmetric.MetricTypeHistogram:
					out = append(out, fmt.Sprintf("%s %s", head, m.Histogram().AggregationTemporality()))
					for _, p := range m.Histogram().DataPoints().All() {
						out = append(out, fmt.Sprintf("  %s t=%d count=%d sum=%v bounds=%v counts=%v flags=%d", attrs(p.Attributes()), p.Timestamp(),
							p.Count(), p.Sum(), p.ExplicitBounds().AsRaw(), p.BucketCounts().AsRaw(), p.Flags()))
					}
				default:
					out = append(out, "unexpected "+head)
				}
			}
		}
	}
	return out
}

func TestEncodeOTLPDecodesWithPmetricotlp(t *testing.T) {
	e := newEncoderOTLP(testMetadata())
	host := func(n int, name string, extra ...workload.Label) []workload.Label {
		return sortedLabels(append(append([]workload.Label{{Name: "__name__", Value: name}}, extra...),
			workload.Label{Name: "instance", Value: fmt.Sprintf("host-%d:9100", n)}, workload.Label{Name: "job", Value: "node_exporter"},
			workload.Label{Name: "revision", Value: "0"}))
	}
	cpu := func(c string) workload.Label { return workload.Label{Name: "cpu", Value: c} }
	le := func(b string) workload.Label { return workload.Label{Name: "le", Value: b} }
	const ms = 1_700_000_000_123
	in := []testSample{
		{host(1, "node_cpu_seconds_total", cpu("0")), ms, 12345.67},
		{host(1, "node_cpu_seconds_total", cpu("1")), ms, 0.25},
		{host(1, "node_load1"), ms, 0.5},
		{host(1, "go_gc_duration_seconds_count"), ms, 7},
		{host(1, "go_gc_duration_seconds_sum"), ms, 0.125},
		{host(1, "go_gc_duration_seconds", workload.Label{Name: "quantile", Value: "0.5"}), ms, math.NaN()},
		{host(1, "req_seconds_bucket", le("+Inf")), ms, 10}, // the profile's order is the labels'
		{host(1, "req_seconds_bucket", le("0.1")), ms, 3},
		{host(1, "req_seconds_bucket", le("1")), ms, 8},
		{host(1, "req_seconds_count"), ms, 10},
		{host(1, "req_seconds_sum"), ms, 4.5},
		{host(1, "some_untyped"), ms, 1},
		{host(2, "node_load1"), ms + 1, workload.StaleNaN()},
		{host(2, "go_gc_duration_seconds_count"), ms + 1, workload.StaleNaN()},
		{host(2, "go_gc_duration_seconds_sum"), ms + 1, workload.StaleNaN()},
	}
	want := []string{
		`resource {service.instance.id=host-1:9100,service.name=node_exporter}`,
		`scope tsbench`,
		`Sum node_cpu_seconds_total help="Seconds the CPUs spent in each mode." unit="seconds" Cumulative monotonic=true`,
		`  {cpu=0,revision=0} t=1700000000123000000 start=0 v=12345.67 flags=0`,
		`  {cpu=1,revision=0} t=1700000000123000000 start=0 v=0.25 flags=0`,
		`Gauge node_load1 help="1m load average." unit=""`,
		`  {revision=0} t=1700000000123000000 v=0.5 flags=0`,
		`Summary go_gc_duration_seconds help="" unit=""`,
		`  {revision=0} t=1700000000123000000 count=7 sum=0.125 q=[0.5:NaN] flags=0`,
		`Histogram req_seconds help="" unit="" Cumulative`,
		`  {revision=0} t=1700000000123000000 count=10 sum=4.5 bounds=[0.1 1] counts=[3 5 2] flags=0`,
		`Gauge some_untyped help="" unit=""`,
		`  {revision=0} t=1700000000123000000 v=1 flags=0`,
		`resource {service.instance.id=host-2:9100,service.name=node_exporter}`,
		`scope tsbench`,
		`Gauge node_load1 help="1m load average." unit=""`,
		`  {revision=0} t=1700000000124000000 v=0 flags=1`,
		`Summary go_gc_duration_seconds help="" unit=""`,
		`  {revision=0} t=1700000000124000000 count=0 sum=NaN q=[] flags=1`,
	}
	for round := range 2 { // the second over reset buffers
		for _, s := range in {
			e.Append(s.labels, s.t, s.v)
		}
		if diff := cmp.Diff(want, describeOTLP(t, e.body())); diff != "" {
			t.Errorf("round %d decoded (-want +got):\n%s", round, diff)
		}
		if e.samples != len(in) || e.points != 8 || e.oldest != ms {
			t.Errorf("round %d: %d samples, %d points, oldest %d; want %d, 8, %d", round, e.samples, e.points, e.oldest, len(in), ms)
		}
		e.reset()
	}
}

func TestEncodeOTLPDoesNotAllocate(t *testing.T) {
	e := newEncoderOTLP(testMetadata())
	series := [][]workload.Label{
		{{Name: "__name__", Value: "node_cpu_seconds_total"}, {Name: "cpu", Value: "0"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}},
		{{Name: "__name__", Value: "go_gc_duration_seconds"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}, {Name: "quantile", Value: "0.5"}},
		{{Name: "__name__", Value: "go_gc_duration_seconds_count"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}},
		{{Name: "__name__", Value: "node_load1"}, {Name: "instance", Value: "host-000002:9100"}, {Name: "job", Value: "node_exporter"}},
	}
	add := func() {
		for _, ls := range series {
			e.Append(ls, 1_700_000_000_000, 0.42)
		}
	}
	for range 300 {
		add()
	}
	e.body()
	e.reset()
	allocs := testing.AllocsPerRun(1000, func() {
		if e.samples > 500 {
			e.body()
			e.reset()
		}
		add()
	})
	if allocs > 0 {
		t.Errorf("Append allocates %.2f times per sample", allocs/float64(len(series)))
	}
}
