package remotewrite

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tsbench/tsbench/internal/workload"
)

// Native histograms (issue 23): each encoder takes a workload.Histogram as one sample of its
// own series, named as the family.
//
// Remote write 1.0 and 2.0 carry the same Histogram message (prompb.Histogram,
// writev2.Histogram), integer counts, positive buckets as one span and count deltas, fields
// in number order as prompb's Marshal writes them; a oneof count is written even when 0:
//
//	Histogram  { uint64 count_int = 1; double sum = 3; sint32 schema = 4; double zero_threshold = 5;
//	             uint64 zero_count_int = 6; repeated BucketSpan positive_spans = 11;
//	             repeated sint64 positive_deltas = 12 [packed]; int64 timestamp = 15; }
//	BucketSpan { sint32 offset = 1; uint32 length = 2; }
//	1.0 TimeSeries.histograms = 4; 2.0 TimeSeries.histograms = 3.
//
// OTLP carries an ExponentialHistogram (cumulative), whose bucket index is Prometheus' less
// one (OTLP's bucket i is (base^i, base^(i+1)], Prometheus' (base^(i-1), base^i]):
//
//	Metric.exponential_histogram = 10 { repeated ExponentialHistogramDataPoint data_points = 1; temporality = 2; }
//	ExponentialHistogramDataPoint { repeated KeyValue attributes = 1; fixed64 time_unix_nano = 3;
//	             fixed64 count = 4; double sum = 5; sint32 scale = 6; fixed64 zero_count = 7;
//	             Buckets positive = 8 { sint32 offset = 1; repeated uint64 bucket_counts = 2 [packed]; };
//	             uint32 flags = 10; double zero_threshold = 14; }
//
// A staleness marker (Sum StaleNaN) is sent as such over remote write and as a point with
// the no-recorded-value flag over OTLP.

// kindExponential is the OTLP encoder's metric kind of a native histogram.
const kindExponential metricType = 100

// histogramSize is the size of h's Histogram message at t.
func histogramSize(h *workload.Histogram, t int64) int {
	n := 1 + uvarintLen(h.Count) + 1 + uvarintLen(h.ZeroCount)
	if h.Sum != 0 {
		n += 1 + 8
	}
	if h.Schema != 0 {
		n += 1 + uvarintLen(protowire.EncodeZigZag(int64(h.Schema)))
	}
	if h.ZeroThreshold != 0 {
		n += 1 + 8
	}
	if len(h.Buckets) > 0 {
		span := spanSize(h)
		deltas := deltasSize(h)
		n += 1 + uvarintLen(uint64(span)) + span + 1 + uvarintLen(uint64(deltas)) + deltas
	}
	if t != 0 {
		n += 1 + uvarintLen(uint64(t))
	}
	return n
}

func spanSize(h *workload.Histogram) int {
	n := 1 + uvarintLen(uint64(len(h.Buckets)))
	if h.Offset != 0 {
		n += 1 + uvarintLen(protowire.EncodeZigZag(int64(h.Offset)))
	}
	return n
}

func deltasSize(h *workload.Histogram) int {
	n, prev := 0, int64(0)
	for _, c := range h.Buckets {
		n += uvarintLen(protowire.EncodeZigZag(int64(c) - prev))
		prev = int64(c)
	}
	return n
}

// appendHistogram appends h's Histogram message at t, of histogramSize(h, t) bytes.
func appendHistogram(b []byte, h *workload.Histogram, t int64) []byte {
	b = binary.AppendUvarint(append(b, 0x08), h.Count) // count_int
	if h.Sum != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, 0x19), math.Float64bits(h.Sum))
	}
	if h.Schema != 0 {
		b = binary.AppendUvarint(append(b, 0x20), protowire.EncodeZigZag(int64(h.Schema)))
	}
	if h.ZeroThreshold != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, 0x29), math.Float64bits(h.ZeroThreshold))
	}
	b = binary.AppendUvarint(append(b, 0x30), h.ZeroCount) // zero_count_int
	if len(h.Buckets) > 0 {
		b = binary.AppendUvarint(append(b, 0x5a), uint64(spanSize(h))) // positive_spans
		if h.Offset != 0 {
			b = binary.AppendUvarint(append(b, 0x08), protowire.EncodeZigZag(int64(h.Offset)))
		}
		b = binary.AppendUvarint(append(b, 0x10), uint64(len(h.Buckets)))
		b = binary.AppendUvarint(append(b, 0x62), uint64(deltasSize(h))) // positive_deltas
		prev := int64(0)
		for _, c := range h.Buckets {
			b = binary.AppendUvarint(b, protowire.EncodeZigZag(int64(c)-prev))
			prev = int64(c)
		}
	}
	if t != 0 {
		b = binary.AppendUvarint(append(b, 0x78), uint64(t))
	}
	return b
}

// AppendHistogram encodes h as a 1.0 TimeSeries of its own, after the labels' checks.
func (e *encoderV1) AppendHistogram(labels []workload.Label, t int64, h *workload.Histogram) {
	ex, ok := e.take(labels)
	if !ok {
		return
	}
	hl := histogramSize(h, t)
	seriesLen := labelsSize(labels) + 1 + uvarintLen(uint64(hl)) + hl + exemplarFieldSize(ex)
	b := appendExemplar(appendSeriesHead(e.buf, labels, seriesLen), ex) // exemplars = 3
	b = binary.AppendUvarint(append(b, 0x22), uint64(hl))               // histograms = 4
	e.buf = appendHistogram(b, h, t)
	e.added(t)
}

// familyMeta is the metadata of a native histogram's family: its _count's (a histogram's),
// or the family's own (a summary's quantile series carry the family name).
func familyMeta(meta metadata, name string) metricMeta {
	if m, ok := meta[name+"_count"]; ok {
		return m
	}
	return meta[name]
}

// AppendHistogram encodes h as a 2.0 TimeSeries of its own with the family's help and unit,
// typed histogram.
func (e *encoderV2) AppendHistogram(labels []workload.Label, t int64, h *workload.Histogram) {
	if !validLabels(labels) {
		e.invalid++
		e.ex = nil
		return
	}
	helpRef, unitRef := e.refsOf(labels, familyMeta(e.meta, metricName(labels)))
	typ := rw2Type[typeHistogram]
	refsLen := e.refsLen()
	metaLen := metaSize(typ, helpRef, unitRef)
	ex := e.exemplarV2Of()
	st := e.startOf(typ)
	hl := histogramSize(h, t) + histogramStartSize(st)
	seriesLen := 1 + uvarintLen(uint64(refsLen)) + refsLen + 1 + uvarintLen(uint64(hl)) + hl + ex.size() + 1 + uvarintLen(uint64(metaLen)) + metaLen
	b := binary.AppendUvarint(append(e.series, 0x2a), uint64(seriesLen))
	b = e.appendRefs(b, refsLen)
	b = binary.AppendUvarint(append(b, 0x1a), uint64(hl)) // histograms = 3
	b = ex.appendTo(appendHistogramStart(appendHistogram(b, h, t), st))
	e.series = appendMeta(b, metaLen, typ, helpRef, unitRef)
	e.added(t)
}

// AppendHistogram adds h as a point of an exponential histogram metric named as the family.
func (e *encoderOTLP) AppendHistogram(labels []workload.Label, t int64, h *workload.Histogram) {
	ex := e.ex
	e.ex = nil
	if !validLabels(labels) {
		e.invalid++
		return
	}
	name, job, instance := resourceLabels(labels)
	e.attrs = e.attrs[:0]
	for _, l := range labels {
		if l.Name != "__name__" && l.Name != "job" && l.Name != "instance" {
			e.attrs = appendKeyValue(e.attrs, 0x0a, l.Name, l.Value) // attributes = 1
		}
	}
	e.openResource(job, instance)
	if !e.metOpen || string(e.metName) != name || e.metKind != kindExponential {
		e.openMetric(name, kindExponential, familyMeta(e.meta, name)) // its metadata looked up only then
	}
	e.counted(t)
	e.points++
	stale := h.Stale()
	n := len(e.attrs) + 9 + 9 + 1 + uvarintLen(protowire.EncodeZigZag(int64(h.Schema))) + 9 + 9 + otlpExemplarSize(ex) + otlpStartSize(e.created)
	if !stale {
		n += 9
	} else {
		n += 2
	}
	pos := 0
	if len(h.Buckets) > 0 {
		pos = otlpBucketsSize(h)
		n += 1 + uvarintLen(uint64(pos)) + pos
	}
	b := binary.AppendUvarint(append(e.pts, 0x0a), uint64(n)) // data_points = 1
	b = appendOTLPStart(append(b, e.attrs...), e.created)
	b = binary.LittleEndian.AppendUint64(append(b, 0x19), uint64(t)*1e6) // time_unix_nano
	b = binary.LittleEndian.AppendUint64(append(b, 0x21), h.Count)       // count
	if !stale {
		b = binary.LittleEndian.AppendUint64(append(b, 0x29), math.Float64bits(h.Sum)) // sum
	}
	b = binary.AppendUvarint(append(b, 0x30), protowire.EncodeZigZag(int64(h.Schema))) // scale
	b = binary.LittleEndian.AppendUint64(append(b, 0x39), h.ZeroCount)                 // zero_count
	if len(h.Buckets) > 0 {
		b = binary.AppendUvarint(append(b, 0x42), uint64(pos)) // positive
		if h.Offset != 1 {
			b = binary.AppendUvarint(append(b, 0x08), protowire.EncodeZigZag(int64(h.Offset)-1))
		}
		b = binary.AppendUvarint(append(b, 0x12), uint64(otlpCountsSize(h)))
		for _, c := range h.Buckets {
			b = binary.AppendUvarint(b, c)
		}
	}
	if stale {
		b = append(b, 0x50, 1) // flags: FLAG_NO_RECORDED_VALUE
	}
	b = appendOTLPExemplar(b, 0x5a, ex)                                                          // exemplars = 11
	e.pts = binary.LittleEndian.AppendUint64(append(b, 0x71), math.Float64bits(h.ZeroThreshold)) // zero_threshold
}

// otlpBucketsSize is the size of h's positive Buckets message.
func otlpBucketsSize(h *workload.Histogram) int {
	counts := otlpCountsSize(h)
	n := 1 + uvarintLen(uint64(counts)) + counts
	if h.Offset != 1 {
		n += 1 + uvarintLen(protowire.EncodeZigZag(int64(h.Offset)-1))
	}
	return n
}

func otlpCountsSize(h *workload.Histogram) int {
	n := 0
	for _, c := range h.Buckets {
		n += uvarintLen(c)
	}
	return n
}
