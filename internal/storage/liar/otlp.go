package liar

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// otlp lies in an OTLP/HTTP protobuf request (gauges' and sums' number points: the float
// lies; every point: LieAddLabel as a point attribute; exponential histograms:
// LieDropHistograms); n is its samples as the receiver makes them.
func (l *Liar) otlp(body []byte, encoding string) (out []byte, n int64, err error) {
	if encoding != "" {
		return nil, 0, fmt.Errorf("the liar reads OTLP uncompressed only, not %q", encoding)
	}
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		return nil, 0, err
	}
	rms := req.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		sms := rm.ScopeMetrics()
		for j := range sms.Len() {
			// A metric left without points goes too: the receiver refuses an empty one.
			sms.At(j).Metrics().RemoveIf(func(m pmetric.Metric) bool {
				var dps pmetric.NumberDataPointSlice
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				case pmetric.MetricTypeSummary: // quantiles, _sum and _count
					for _, dp := range m.Summary().DataPoints().All() {
						n += int64(dp.QuantileValues().Len()) + 2
						l.otlpLabel(m.Name(), res, dp.Attributes(), dp.Timestamp(), int64(dp.QuantileValues().Len())+2)
					}
					return false
				case pmetric.MetricTypeHistogram: // buckets (+Inf's too), _sum and _count
					for _, dp := range m.Histogram().DataPoints().All() {
						n += int64(dp.BucketCounts().Len()) + 2
						l.otlpLabel(m.Name(), res, dp.Attributes(), dp.Timestamp(), int64(dp.BucketCounts().Len())+2)
					}
					return false
				default: // an exponential histogram: one native histogram sample
					dps := m.ExponentialHistogram().DataPoints()
					n += int64(dps.Len())
					for _, dp := range dps.All() {
						l.otlpLabel(m.Name(), res, dp.Attributes(), dp.Timestamp(), 1)
					}
					if l.lies.Lie == LieDropHistograms && !l.skipName(m.Name()) {
						for _, dp := range dps.All() {
							l.record(m.Name()+" "+attrString(res)+" "+attrString(dp.Attributes()), dp.Timestamp().AsTime().UnixMilli(), 1)
						}
						return true
					}
					return false
				}
				n += int64(dps.Len())
				if l.lies.Skip != "" && strings.HasPrefix(m.Name(), l.lies.Skip) {
					return false
				}
				dps.RemoveIf(func(dp pmetric.NumberDataPoint) bool { return l.otlpPoint(m.Name(), res, dp) })
				return dps.Len() == 0
			})
		}
		if l.lies.Lie == LieRenameJobInstance { // after the points are recorded under the attributes as written
			for _, r := range otlpRenames {
				if v, ok := res.Get(r[0]); ok {
					v.CopyTo(res.PutEmpty(r[1]))
					res.Remove(r[0])
				}
			}
		}
	}
	out, err = req.MarshalProto()
	return out, n, err
}

// otlpLabel adds, for LieAddLabel, the label to a summary's or histogram's point as an
// attribute, and records the n samples it becomes; for LieRenameJobInstance it records them.
func (l *Liar) otlpLabel(name string, res, attrs pcommon.Map, ts pcommon.Timestamp, n int64) {
	if !l.skipName(name) {
		l.saw(instanceOf(res), ts.AsTime().UnixMilli())
	}
	switch {
	case l.skipName(name):
	case l.lies.Lie == LieAddLabel:
		l.record(name+" "+attrString(res)+" "+attrString(attrs), ts.AsTime().UnixMilli(), n)
		attrs.PutStr(l.lies.Label.Name, l.lies.Label.Value)
	case l.lies.Lie == LieRenameJobInstance && renamesResource(res):
		l.record(name+" "+attrString(res)+" "+attrString(attrs), ts.AsTime().UnixMilli(), n)
	}
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

func (l *Liar) skipName(name string) bool {
	return l.lies.Skip != "" && strings.HasPrefix(name, l.lies.Skip)
}

// otlpPoint applies the lie to one point; true drops it. The point's series key is its
// metric name, resource and point attributes, as OTLP has no labels before translation.
func (l *Liar) otlpPoint(name string, res pcommon.Map, dp pmetric.NumberDataPoint) bool {
	key := name + " " + attrString(res) + " " + attrString(dp.Attributes())
	t := dp.Timestamp().AsTime().UnixMilli()
	l.saw(instanceOf(res), t)
	v := dp.DoubleValue()
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		v = float64(dp.IntValue())
	}
	stale := dp.Flags().NoRecordedValue()
	switch l.lies.Lie {
	case LieDropSamples:
		if !stale && !math.IsNaN(v) && l.sampleChosen(key, t) {
			l.record(key, t, 1)
			return true
		}
	case LieDropStale:
		if stale {
			l.record(key, t, 1)
			return true
		}
	case LieULP:
		if !stale && !math.IsNaN(v) && !math.IsInf(v, 0) && l.sampleChosen(key, t) {
			l.record(key, t, 1)
			dp.SetDoubleValue(math.Nextafter(v, math.Inf(1)))
		}
	case LieRound:
		if r := math.Round(v); !stale && !math.IsNaN(v) && r != v {
			l.record(key, t, 1)
			dp.SetDoubleValue(r)
		}
	case LieShiftTimestamps:
		if l.sampleChosen(key, t) {
			l.record(key, t, 1)
			dp.SetTimestamp(pcommon.NewTimestampFromTime(time.UnixMilli(t).Add(l.lies.Shift)))
		}
	case LieAddLabel:
		l.record(key, t, 1)
		dp.Attributes().PutStr(l.lies.Label.Name, l.lies.Label.Value)
	case LieRenameJobInstance:
		if renamesResource(res) {
			l.record(key, t, 1)
		}
	case LiePartial, LieDeleteAfter:
		// The query side hides series by their stored labels, which OTLP's translation
		// makes: recorded there instead (see hidden).
	}
	return false
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
