package remotewrite

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/tsbench/tsbench/internal/workload"
)

// encoderOTLP builds one OTLP/HTTP metrics request (opentelemetry.proto.collector.metrics.v1
// .ExportMetricsServiceRequest, protobuf) by appending bytes, from the same samples the
// remote-write encoders take:
//
//   - one ResourceMetrics per run of samples of one target, with job and instance as the
//     resource attributes service.name and service.instance.id, which receivers map back to
//     job and instance (Prometheus' OTLP receiver does; a service.namespace would prefix job);
//   - one Metric per run of samples of one name: counters as cumulative monotonic sums,
//     gauges and untyped series as gauges, with the profile's help and unit;
//   - a summary's _count, _sum and {quantile} samples of one scrape as one SummaryDataPoint, a
//     histogram's _bucket{le}, _count and _sum as one HistogramDataPoint (explicit bounds,
//     per-bucket counts: the cumulative buckets' differences);
//   - every other label as a data point attribute; a staleness marker as a data point with
//     the no-recorded-value flag, which receivers store as a staleness marker.
//
// Times are the samples' milliseconds in nanoseconds; sums, summaries and histograms start at
// their target's process start (start_time_unix_nano, encode_created.go). samples counts what the receiver stores: one per
// number point, and a summary or histogram point counts the samples it was made of.
//
//	ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
//	ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
//	Resource        { repeated KeyValue attributes = 1; }
//	ScopeMetrics    { InstrumentationScope scope = 1; repeated Metric metrics = 2; }
//	Metric          { string name = 1; string description = 2; string unit = 3; Gauge gauge = 5;
//	                  Sum sum = 7; Histogram histogram = 9; Summary summary = 11; }
//	Gauge, Summary  { repeated …DataPoint data_points = 1; }
//	Sum             { repeated NumberDataPoint data_points = 1; temporality = 2; bool is_monotonic = 3; }
//	Histogram       { repeated HistogramDataPoint data_points = 1; temporality = 2; }
//	NumberDataPoint { repeated KeyValue attributes = 7; fixed64 time_unix_nano = 3; double as_double = 4; uint32 flags = 8; }
//	SummaryDataPoint{ attributes = 7; time_unix_nano = 3; fixed64 count = 4; double sum = 5;
//	                  repeated ValueAtQuantile quantile_values = 6 { double quantile = 1; double value = 2; }; flags = 8; }
//	HistogramDataPoint { attributes = 9; time_unix_nano = 3; fixed64 count = 4; double sum = 5;
//	                  repeated fixed64 bucket_counts = 6; repeated double explicit_bounds = 7; flags = 10; }
//	KeyValue        { string key = 1; AnyValue value = 2 { string string_value = 1; }; }
type encoderOTLP struct {
	meta metadata

	buf []byte // closed ResourceMetrics
	res []byte // the open resource's closed Metrics
	pts []byte // the open metric's closed data points

	resOpen     bool
	resJob      []byte // the open resource's job and instance, copied
	resInstance []byte

	metOpen bool
	metName []byte // copied: the generator's strings are valid during its call only
	metMeta metricMeta
	metKind metricType // typeCounter (sum), typeGauge (gauge), typeSummary, typeHistogram

	attrs []byte // the current sample's attributes, encoded

	fam famPoint // the open summary or histogram point

	tally
	points  int                // data points in the request
	ex      *workload.Exemplar // the next sample's, nil for none (encode_exemplar.go)
	created int64              // the current target's process start, ms; 0: unknown (encode_created.go)
}

// famPoint gathers one summary or histogram data point from its samples.
type famPoint struct {
	open       bool
	t          int64
	attrs      []byte
	count, sum float64
	start      int64 // the target's process start when the point opened, ms
	stale      bool
	parts      []part // quantiles or buckets
}

// part is a quantile and its value, or a bucket's upper bound and its cumulative count.
type part struct{ at, v float64 }

func newEncoderOTLP(meta metadata) *encoderOTLP { return &encoderOTLP{meta: meta} }

func (e *encoderOTLP) reset() {
	e.buf, e.res, e.pts = e.buf[:0], e.res[:0], e.pts[:0]
	e.resOpen, e.metOpen, e.fam.open = false, false, false
	e.samples, e.points, e.oldest = 0, 0, 0
}

// Append adds one sample, after the same label checks as remote write.
func (e *encoderOTLP) Append(labels []workload.Label, t int64, v float64) {
	if !validLabels(labels) {
		e.invalid++
		e.ex = nil
		return
	}
	name, job, instance := resourceLabels(labels)
	e.openResource(job, instance)
	m, ok := e.meta[name]
	kind := m.typ
	if !ok || m.role == roleValue && (kind == typeSummary || kind == typeHistogram) || kind == typeUnknown {
		kind = typeGauge // OTLP has no untyped: a gauge, as the collector's Prometheus receiver makes it
	}
	metric := name
	if kind == typeSummary || kind == typeHistogram {
		metric = m.family
	}
	e.openMetric(metric, kind, m)
	attrTag := byte(0x3a) // attributes = 7
	if kind == typeHistogram {
		attrTag = 0x4a // attributes = 9
	}
	e.attrs = e.attrs[:0]
	for _, l := range labels {
		switch {
		case l.Name == "__name__" || l.Name == "job" || l.Name == "instance",
			l.Name == "quantile" && m.role == roleQuantile, l.Name == "le" && m.role == roleBucket:
			continue
		}
		e.attrs = appendKeyValue(e.attrs, attrTag, l.Name, l.Value)
	}
	e.counted(t)
	if kind != typeSummary && kind != typeHistogram {
		e.appendNumberPoint(t, v)
		return
	}
	e.ex = nil // a summary's or classic histogram's sample carries none
	f := &e.fam
	if f.open && (f.t != t || string(f.attrs) != string(e.attrs)) {
		e.closeFamily()
	}
	if !f.open {
		f.open, f.t, f.count, f.sum, f.stale, f.start = true, t, 0, 0, false, e.created
		f.attrs = append(f.attrs[:0], e.attrs...)
		f.parts = f.parts[:0]
	}
	if math.Float64bits(v) == math.Float64bits(workload.StaleNaN()) {
		f.stale = true
	}
	switch m.role {
	case roleCount:
		f.count = v
	case roleSum:
		f.sum = v
	case roleQuantile, roleBucket:
		at := math.Inf(1)
		for _, l := range labels {
			if l.Name == "quantile" || l.Name == "le" {
				at = parseBound(l.Value)
			}
		}
		f.parts = append(f.parts, part{at, v})
	}
}

func parseBound(s string) float64 {
	f, err := strconv.ParseFloat(s, 64) // "+Inf" included
	if err != nil {
		return math.NaN()
	}
	return f
}

// resourceLabels is the metric name, and the job and instance that make the resource.
func resourceLabels(labels []workload.Label) (name, job, instance string) {
	for _, l := range labels {
		switch l.Name {
		case "__name__":
			name = l.Value
		case "job":
			job = l.Value
		case "instance":
			instance = l.Value
		}
	}
	return name, job, instance
}

// openMetric makes metric, of kind with metadata m, the open metric, closing another.
func (e *encoderOTLP) openMetric(metric string, kind metricType, m metricMeta) {
	if !e.metOpen || string(e.metName) != metric || e.metKind != kind {
		e.closeMetric()
		e.metOpen, e.metMeta, e.metKind = true, m, kind
		e.metName = append(e.metName[:0], metric...)
	}
}

// counted counts one more sample, at t, in the request.
func (e *encoderOTLP) counted(t int64) {
	if e.samples == 0 || t < e.oldest {
		e.oldest = t
	}
	e.samples++
}

// openResource makes job and instance's resource the open one, closing another.
func (e *encoderOTLP) openResource(job, instance string) {
	if !e.resOpen || string(e.resJob) != job || string(e.resInstance) != instance {
		e.closeResource()
		e.resOpen = true
		e.resJob = append(e.resJob[:0], job...)
		e.resInstance = append(e.resInstance[:0], instance...)
	}
}

// appendNumberPoint appends a NumberDataPoint with the current attributes to the open metric.
func (e *encoderOTLP) appendNumberPoint(t int64, v float64) {
	stale := math.Float64bits(v) == math.Float64bits(workload.StaleNaN())
	st := int64(0)
	if e.metKind == typeCounter {
		st = e.created
	}
	n := len(e.attrs) + 1 + 8 + otlpExemplarSize(e.ex) + otlpStartSize(st)
	if stale {
		n += 2
	} else {
		n += 1 + 8
	}
	b := append(e.pts, 0x0a) // data_points = 1
	b = binary.AppendUvarint(b, uint64(n))
	b = appendOTLPStart(append(b, e.attrs...), st)
	b = append(b, 0x19) // time_unix_nano = 3, fixed64
	b = binary.LittleEndian.AppendUint64(b, uint64(t)*1e6)
	if stale {
		b = append(b, 0x40, 1) // flags = 8: FLAG_NO_RECORDED_VALUE
	} else {
		b = append(b, 0x21) // as_double = 4
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	e.pts = appendOTLPExemplar(b, 0x2a, e.ex) // exemplars = 5
	e.ex = nil
	e.points++
}

// closeFamily appends the open summary or histogram point to the open metric.
func (e *encoderOTLP) closeFamily() {
	f := &e.fam
	if !f.open {
		return
	}
	f.open = false
	e.points++
	b := append(e.pts, 0x0a)
	if e.metKind == typeSummary {
		b = f.appendHead(b, len(f.parts)*(2+18))
		for _, p := range f.parts {
			b = append(b, 0x32, 18) // quantile_values = 6
			b = append(b, 0x09)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.at))
			b = append(b, 0x11)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.v))
		}
		if f.stale {
			b = append(b, 0x40, 1)
		}
		e.pts = b
		return
	}
	// Histogram: buckets in bound order; +Inf is the last bucket, not a bound.
	sortParts(f.parts)
	bounds := len(f.parts)
	if bounds > 0 && math.IsInf(f.parts[bounds-1].at, 1) {
		bounds--
	}
	buckets := bounds + 1
	countsLen, boundsLen := 8*buckets, 8*bounds
	rest := 1 + uvarintLen(uint64(countsLen)) + countsLen
	if bounds > 0 {
		rest += 1 + uvarintLen(uint64(boundsLen)) + boundsLen
	}
	b = f.appendHead(b, rest)
	b = append(b, 0x32) // bucket_counts = 6, packed fixed64
	b = binary.AppendUvarint(b, uint64(countsLen))
	prev := 0.0
	for i := range bounds {
		b = binary.LittleEndian.AppendUint64(b, count(f.parts[i].v-prev))
		prev = f.parts[i].v
	}
	total := f.count // the +Inf bucket holds every observation
	if bounds < len(f.parts) {
		total = f.parts[bounds].v
	}
	b = binary.LittleEndian.AppendUint64(b, count(total-prev))
	if bounds > 0 {
		b = append(b, 0x3a) // explicit_bounds = 7, packed double
		b = binary.AppendUvarint(b, uint64(boundsLen))
		for i := range bounds {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.parts[i].at))
		}
	}
	if f.stale {
		b = append(b, 0x50, 1) // flags = 10
	}
	e.pts = b
}

// appendHead appends the point's length, then its attributes, start, time, count and sum,
// the fields a summary and a histogram point share; rest is the length of the fields after
// them, the flags of a stale point left out.
func (f *famPoint) appendHead(b []byte, rest int) []byte {
	n := len(f.attrs) + 9 + 9 + 9 + otlpStartSize(f.start) + rest
	if f.stale {
		n += 2
	}
	b = binary.AppendUvarint(b, uint64(n))
	b = appendOTLPStart(append(b, f.attrs...), f.start)
	b = append(b, 0x19) // time_unix_nano = 3, fixed64
	b = binary.LittleEndian.AppendUint64(b, uint64(f.t)*1e6)
	b = append(b, 0x21) // count = 4, fixed64
	b = binary.LittleEndian.AppendUint64(b, count(f.count))
	b = append(b, 0x29) // sum = 5, double
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f.sum))
}

// count is an observation count as OTLP's unsigned integer: negative and NaN (a staleness
// marker) are 0, fractions are cut.
func count(v float64) uint64 {
	if !(v > 0) {
		return 0
	}
	return uint64(v)
}

// sortParts sorts by bound: the profile's order is the labels', "+Inf" < "0.1" < "10" < "2.5".
func sortParts(p []part) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j].at < p[j-1].at; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

// closeMetric appends the open metric to the open resource.
func (e *encoderOTLP) closeMetric() {
	if !e.metOpen {
		return
	}
	name := e.metName
	e.closeFamily()
	e.metOpen = false
	if len(e.pts) == 0 {
		return
	}
	var dataTag byte
	dataLen := len(e.pts)
	switch e.metKind {
	case typeCounter:
		dataTag, dataLen = 0x3a, dataLen+4 // sum = 7; temporality and is_monotonic
	case typeHistogram:
		dataTag, dataLen = 0x4a, dataLen+2 // histogram = 9; temporality
	case typeSummary:
		dataTag = 0x5a // summary = 11
	case kindExponential:
		dataTag, dataLen = 0x52, dataLen+2 // exponential_histogram = 10; temporality
	default:
		dataTag = 0x2a // gauge = 5
	}
	n := 1 + uvarintLen(uint64(len(name))) + len(name) + 1 + uvarintLen(uint64(dataLen)) + dataLen
	if h := e.metMeta.help; h != "" {
		n += 1 + uvarintLen(uint64(len(h))) + len(h)
	}
	if u := e.metMeta.unit; u != "" {
		n += 1 + uvarintLen(uint64(len(u))) + len(u)
	}
	b := append(e.res, 0x12) // ScopeMetrics.metrics = 2
	b = binary.AppendUvarint(b, uint64(n))
	b = appendString(b, 0x0a, name)
	if h := e.metMeta.help; h != "" {
		b = appendString(b, 0x12, h)
	}
	if u := e.metMeta.unit; u != "" {
		b = appendString(b, 0x1a, u)
	}
	b = append(b, dataTag)
	b = binary.AppendUvarint(b, uint64(dataLen))
	b = append(b, e.pts...)
	switch e.metKind {
	case typeCounter:
		b = append(b, 0x10, 2, 0x18, 1) // AGGREGATION_TEMPORALITY_CUMULATIVE, monotonic
	case typeHistogram, kindExponential:
		b = append(b, 0x10, 2)
	}
	e.res, e.pts = b, e.pts[:0]
}

// scopeName names tsbench as the instrumentation scope.
const scopeName = "tsbench"

// closeResource appends the open resource, with its metrics, to the request.
func (e *encoderOTLP) closeResource() {
	e.closeMetric()
	if !e.resOpen {
		return
	}
	e.resOpen = false
	if len(e.res) == 0 {
		return
	}
	attrsLen := 0
	if len(e.resJob) > 0 {
		attrsLen += keyValueSize(len("service.name"), len(e.resJob))
	}
	if len(e.resInstance) > 0 {
		attrsLen += keyValueSize(len("service.instance.id"), len(e.resInstance))
	}
	scopeLen := 1 + uvarintLen(uint64(len(scopeName))) + len(scopeName)
	scopeMetricsLen := 1 + uvarintLen(uint64(scopeLen)) + scopeLen + len(e.res)
	n := 1 + uvarintLen(uint64(attrsLen)) + attrsLen + 1 + uvarintLen(uint64(scopeMetricsLen)) + scopeMetricsLen
	b := append(e.buf, 0x0a) // resource_metrics = 1
	b = binary.AppendUvarint(b, uint64(n))
	b = append(b, 0x0a) // resource = 1
	b = binary.AppendUvarint(b, uint64(attrsLen))
	if len(e.resJob) > 0 {
		b = appendKeyValue(b, 0x0a, "service.name", e.resJob)
	}
	if len(e.resInstance) > 0 {
		b = appendKeyValue(b, 0x0a, "service.instance.id", e.resInstance)
	}
	b = append(b, 0x12) // scope_metrics = 2
	b = binary.AppendUvarint(b, uint64(scopeMetricsLen))
	b = append(b, 0x0a) // scope = 1
	b = binary.AppendUvarint(b, uint64(scopeLen))
	b = appendString(b, 0x0a, scopeName)
	b = append(b, e.res...)
	e.buf, e.res = b, e.res[:0]
}

// body closes what is open and returns the encoded request, valid until the next reset.
func (e *encoderOTLP) body() []byte {
	e.closeResource()
	return e.buf
}

// open says a request may not end while a summary or histogram point is open: it ends after
// the point, never within it.
func (e *encoderOTLP) open() (samples int, oldest int64, whole bool) {
	return e.samples, e.oldest, !e.fam.open
}

// takeInvalid counts for both OTLP wires: gzipped and not, the requests are the same.
func (e *encoderOTLP) takeInvalid(n *[wires]int64) { e.moveInvalid(n, wireOTLP, wireOTLPGzip) }

func (e *encoderOTLP) flush(out *[wires]request) {
	r := request{body: e.body(), points: int64(e.points)}
	out[wireOTLP], out[wireOTLPGzip] = r, r
	e.reset()
}

func appendString[S string | []byte](b []byte, tag byte, s S) []byte {
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// keyValueSize is the size of a KeyValue field with a string value, tag included.
func keyValueSize(key, value int) int {
	av := 1 + uvarintLen(uint64(value)) + value
	kv := 1 + uvarintLen(uint64(key)) + key + 1 + uvarintLen(uint64(av)) + av
	return 1 + uvarintLen(uint64(kv)) + kv
}

// appendKeyValue appends a KeyValue with a string value as field tag.
func appendKeyValue[S string | []byte](b []byte, tag byte, key string, value S) []byte {
	av := 1 + uvarintLen(uint64(len(value))) + len(value)
	kv := 1 + uvarintLen(uint64(len(key))) + len(key) + 1 + uvarintLen(uint64(av)) + av
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(kv))
	b = appendString(b, 0x0a, key)
	b = append(b, 0x12)
	b = binary.AppendUvarint(b, uint64(av))
	return appendString(b, 0x0a, value)
}
