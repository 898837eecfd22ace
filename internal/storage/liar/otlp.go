package liar

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// otlp lies in an OTLP/HTTP protobuf request; n is its samples as the receiver makes them.
// Gauges' and sums' number points are float points; a summary's or classic histogram's point
// is a group (only a label lie touches it: LieAddLabel labels it, as every point, with a
// point attribute); an exponential histogram's point is a histogram point. A metric left
// without points goes too: the receiver refuses an empty one.
func (l *Liar) otlp(rq *request, body []byte, encoding string) (out []byte, n int64, err error) {
	if encoding != "" {
		return nil, 0, fmt.Errorf("the liar reads OTLP uncompressed only, not %q", encoding)
	}
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		return nil, 0, err
	}
	rms := req.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		res := rms.At(i).Resource().Attributes()
		for _, sm := range rms.At(i).ScopeMetrics().All() {
			sm.Metrics().RemoveIf(func(m pmetric.Metric) bool {
				kept, received := l.otlpMetric(rq, m, res)
				n += received
				return !kept
			})
		}
		if l.lies.Lie == LieRenameJobInstance { // after the points are told under the attributes as written
			for _, r := range otlpRenames {
				if v, ok := res.Get(r[0]); ok {
					v.CopyTo(res.PutEmpty(r[1]))
					res.Remove(r[0])
				}
			}
		}
	}
	if l.hides() {
		l.otlpStored(rq, req.Metrics())
	}
	out, err = req.MarshalProto()
	return out, n, err
}

// otlpMetric tells the lie on one metric's points; kept is false when none is left, n is the
// samples the receiver makes of them.
func (l *Liar) otlpMetric(rq *request, m pmetric.Metric, res pcommon.Map) (kept bool, n int64) {
	skip := l.skipName(m.Name())
	switch m.Type() {
	case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
		var dps pmetric.NumberDataPointSlice
		if m.Type() == pmetric.MetricTypeGauge {
			dps = m.Gauge().DataPoints()
		} else {
			dps = m.Sum().DataPoints()
		}
		n = int64(dps.Len())
		if skip {
			return true, n
		}
		dps.RemoveIf(func(dp pmetric.NumberDataPoint) bool { return !l.otlpNumber(rq, m.Name(), res, dp) })
		return dps.Len() > 0, n
	case pmetric.MetricTypeSummary: // quantiles, _sum and _count
		for _, dp := range m.Summary().DataPoints().All() {
			k := int64(dp.QuantileValues().Len()) + 2
			n += k
			if !skip {
				l.otlpGroup(rq, m.Name(), res, dp.Attributes(), dp.Timestamp(), k)
			}
		}
		return true, n
	case pmetric.MetricTypeHistogram: // buckets (+Inf's too), _sum and _count
		for _, dp := range m.Histogram().DataPoints().All() {
			k := int64(dp.BucketCounts().Len()) + 2
			n += k
			if !skip {
				l.otlpGroup(rq, m.Name(), res, dp.Attributes(), dp.Timestamp(), k)
			}
		}
		return true, n
	}
	// An exponential histogram: one native histogram sample a point.
	dps := m.ExponentialHistogram().DataPoints()
	n = int64(dps.Len())
	if !skip {
		dps.RemoveIf(func(dp pmetric.ExponentialHistogramDataPoint) bool {
			p := l.otlpPoint(m.Name(), res, dp.Attributes(), dp.Timestamp())
			p.kind = kindHistogram
			_, keep := l.tell(rq, p)
			return !keep
		})
	}
	return n == 0 || dps.Len() > 0, n
}

// otlpPoint is the point of a data point of metric name: its series' key the metric name,
// resource and point attributes as written, as OTLP has no labels before translation. Under
// LieAddLabel it adds the label to the point's attributes.
func (l *Liar) otlpPoint(name string, res, attrs pcommon.Map, ts pcommon.Timestamp) point {
	p := point{
		series: name + " " + attrString(res) + " " + attrString(attrs), target: instanceOf(res),
		t: ts.AsTime().UnixMilli(), n: 1, moved: l.otlpMoves(res),
	}
	if p.moved && l.lies.Lie == LieAddLabel {
		attrs.PutStr(l.lies.Label.Name, l.lies.Label.Value)
	}
	return p
}

// otlpGroup tells the lie on a summary's or classic histogram's point, n samples.
func (l *Liar) otlpGroup(rq *request, name string, res, attrs pcommon.Map, ts pcommon.Timestamp, n int64) {
	p := l.otlpPoint(name, res, attrs, ts)
	p.kind, p.n = kindGroup, n
	l.tell(rq, p)
}

// otlpNumber tells the lie on a gauge's or sum's point; false drops it.
func (l *Liar) otlpNumber(rq *request, name string, res pcommon.Map, dp pmetric.NumberDataPoint) bool {
	p := l.otlpPoint(name, res, dp.Attributes(), dp.Timestamp())
	p.v, p.stale = dp.DoubleValue(), dp.Flags().NoRecordedValue()
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		p.v = float64(dp.IntValue())
	}
	if l.hides() { // told on the series as stored (otlpStored)
		rq.saw(p.target, p.t)
		return true
	}
	out, keep := l.tell(rq, p)
	if !keep {
		return false
	}
	if out.v != p.v {
		dp.SetDoubleValue(out.v)
	}
	if out.t != p.t {
		dp.SetTimestamp(pcommon.NewTimestampFromTime(time.UnixMilli(out.t)))
	}
	return true
}

// otlpMoves reports whether a label lie changes where the points of res are stored:
// LieAddLabel every point's (otlpPoint adds the label as a point attribute), and
// LieRenameJobInstance those of a resource with the service attributes it renames.
func (l *Liar) otlpMoves(res pcommon.Map) bool {
	switch l.lies.Lie {
	case LieAddLabel:
		return true
	case LieRenameJobInstance:
		return renamesResource(res)
	}
	return false
}

// otlpRenames are LieRenameJobInstance's renames of resource attributes.
var otlpRenames = [][2]string{{"service.name", "exported_job"}, {"service.instance.id", "exported_instance"}}

// renamesResource reports whether LieRenameJobInstance renames an attribute of res.
func renamesResource(res pcommon.Map) bool {
	for _, r := range otlpRenames {
		if _, ok := res.Get(r[0]); ok {
			return true
		}
	}
	return false
}

// instanceOf is the target a resource is: its service.instance.id.
func instanceOf(res pcommon.Map) string {
	if v, ok := res.Get("service.instance.id"); ok {
		return v.AsString()
	}
	return ""
}

func attrString(m pcommon.Map) string {
	var kv []string
	m.Range(func(k string, v pcommon.Value) bool {
		kv = append(kv, k+"="+v.AsString())
		return true
	})
	slices.Sort(kv)
	return strings.Join(kv, ",")
}
