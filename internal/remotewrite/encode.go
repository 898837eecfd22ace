package remotewrite

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/tsbench/tsbench/internal/workload"
)

// encoderV1 builds one WriteRequest protobuf (remote-write 1.0) by appending bytes: no
// intermediate structs, no allocation once its buffer has grown. The bytes are those
// prompb's Marshal gives for the same request, zero fields left out as proto3 does.
//
//	WriteRequest { repeated TimeSeries timeseries = 1; }
//	TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
//	Label        { string name = 1; string value = 2; }
//	Sample       { double value = 1; int64 timestamp = 2; }
//
// It takes samples two ways: Append, with every label of the sample, checked and encoded
// each time; or, from a workload that names its series, StartTarget once per target and
// AppendSeries per sample, which copies bytes prepared in advance (see templates).
type encoderV1 struct {
	buf []byte
	tally
	ex *workload.Exemplar // the next sample's, nil for none (encode_exemplar.go)

	tpl *templates // nil when the workload does not name its series
	// target is the current target's labels encoded (each a whole Label field), targetEnd
	// the end of each in it; targetOK is false when one of its values is empty.
	target    []byte
	targetEnd []int
	targetOK  bool
	// tsTail is the Sample's timestamp field for time tsFor, empty for time 0 (left out).
	tsTail []byte
	tsFor  int64
}

// tally is what an encoder counts of the request it builds.
type tally struct {
	samples int   // samples in the request (OTLP: the open summary or histogram point's included)
	oldest  int64 // smallest timestamp, ms
	invalid int   // samples refused for invalid labels since the last reset
}

// open says a request may end after any sample; OTLP's encoder has its own.
func (t *tally) open() (samples int, oldest int64, whole bool) {
	return t.samples, t.oldest, true
}

// moveInvalid adds the samples refused for invalid labels to the count of each of ws, and
// counts from zero again.
func (t *tally) moveInvalid(n *[wires]int64, ws ...wire) {
	for _, w := range ws {
		n[w] += int64(t.invalid)
	}
	t.invalid = 0
}

func (e *encoderV1) reset() {
	e.buf, e.samples, e.oldest = e.buf[:0], 0, 0
}

func (e *encoderV1) takeInvalid(n *[wires]int64) { e.moveInvalid(n, wireRW1) }

func (e *encoderV1) flush(out *[wires]request) {
	out[wireRW1] = request{body: e.buf, points: int64(e.samples)}
	e.reset()
}

// Append encodes one sample as a TimeSeries, after checking its labels as the spec requires:
// names valid, values non-empty, sorted by name without repeats. An invalid series is not
// encoded and is counted.
func (e *encoderV1) Append(labels []workload.Label, t int64, v float64) {
	ex, ok := e.take(labels)
	if !ok {
		return
	}
	sampleLen := sampleSize(t, v)
	seriesLen := labelsSize(labels) + 1 + uvarintLen(uint64(sampleLen)) + sampleLen + exemplarFieldSize(ex)
	b := appendSeriesHead(e.buf, labels, seriesLen)
	e.buf = appendExemplar(appendSample(b, sampleLen, t, v), ex)
	e.added(t)
}

// take returns the pending exemplar, now taken, and whether labels pass the checks; a series
// that does not is counted.
func (e *encoderV1) take(labels []workload.Label) (*workload.Exemplar, bool) {
	ex := e.ex
	e.ex = nil
	if !validLabels(labels) {
		e.invalid++
		return nil, false
	}
	return ex, true
}

// appendSeriesHead appends a TimeSeries field of seriesLen bytes and its labels.
func appendSeriesHead(b []byte, labels []workload.Label, seriesLen int) []byte {
	b = append(b, 0x0a) // field 1, length-delimited
	b = binary.AppendUvarint(b, uint64(seriesLen))
	for _, l := range labels {
		b = appendLabel(b, l.Name, l.Value)
	}
	return b
}

// StartTarget encodes the target's label values, in the order of templates' names, for the
// AppendSeries calls that follow.
func (e *encoderV1) StartTarget(values []string) {
	e.target, e.targetEnd, e.targetOK = e.target[:0], e.targetEnd[:0], len(values) == len(e.tpl.names)
	for i, v := range values {
		if v == "" {
			e.targetOK = false
		}
		if i < len(e.tpl.names) {
			e.target = appendLabel(e.target, e.tpl.names[i], v)
			e.targetEnd = append(e.targetEnd, len(e.target))
		}
	}
}

// AppendSeries encodes a sample of series s of the current target: the series' prepared
// label bytes with the target's in their places, then the sample. A series or target with
// invalid labels is counted, as in Append.
func (e *encoderV1) AppendSeries(s int, t int64, v float64) {
	st := &e.tpl.series[s]
	ex := e.ex
	e.ex = nil
	if !st.valid || !e.targetOK {
		e.invalid++
		return
	}
	if t != e.tsFor || e.tsTail == nil { // a scrape's samples share their time: encode it once
		e.tsFor, e.tsTail = t, e.tsTail[:0]
		if t != 0 {
			e.tsTail = binary.AppendUvarint(append(e.tsTail, 0x10), uint64(t)) // field 2, varint
		}
	}
	sampleLen := len(e.tsTail)
	if v != 0 {
		sampleLen += 1 + 8
	}
	seriesLen := len(st.fixed) + len(e.target) + 1 + uvarintLen(uint64(sampleLen)) + sampleLen + exemplarFieldSize(ex)

	b := slices.Grow(e.buf, 1+binary.MaxVarintLen64+seriesLen)
	b = append(b, 0x0a)
	b = binary.AppendUvarint(b, uint64(seriesLen))
	prev := 0
	for _, r := range st.runs {
		b = append(b, st.fixed[prev:r.at]...)
		from := 0
		if r.from > 0 {
			from = e.targetEnd[r.from-1]
		}
		b = append(b, e.target[from:e.targetEnd[r.to-1]]...)
		prev = r.at
	}
	b = append(b, st.fixed[prev:]...)
	b = append(b, 0x12, byte(sampleLen)) // field 2; a Sample is at most 20 bytes: one varint byte
	if v != 0 {
		b = append(b, 0x09) // field 1, 64-bit
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	e.buf = appendExemplar(append(b, e.tsTail...), ex)
	e.added(t)
}

func (e *encoderV1) added(t int64) {
	if e.samples == 0 || t < e.oldest {
		e.oldest = t
	}
	e.samples++
}

// templates are a workload's series prepared for AppendSeries, built and checked once and
// shared read-only by every encoder.
type templates struct {
	names  []string // the target labels, sorted
	series []seriesTemplate
}

// seriesTemplate is one series' own labels encoded, each a whole Label field, with the
// places of the target labels in it: target labels with no own label between them are one
// run, copied at once (for node_exporter's series, instance and job mostly are).
type seriesTemplate struct {
	fixed []byte
	runs  []targetRun
	valid bool // the labels pass validLabels whatever the target's (non-empty) values
}

// targetRun puts target labels [from, to) (indexes into templates.names) at offset at of fixed.
type targetRun struct{ at, from, to int }

// namedSeries is what a workload tells of its series for templates: *workload.Generator.
type namedSeries interface {
	SeriesPerTarget() int
	TargetLabelNames() []string
	SeriesLabels(s int) []workload.Label
}

// newTemplates merges each series' labels with the target label names by name, encodes the
// series' own labels and checks the whole set once, with a placeholder for each target value.
func newTemplates(w namedSeries) *templates {
	tp := &templates{names: w.TargetLabelNames()}
	for s := range w.SeriesPerTarget() {
		var st seriesTemplate
		st.valid = mergeTargetLabels(w.SeriesLabels(s), tp.names, func(l workload.Label) {
			st.fixed = appendLabel(st.fixed, l.Name, l.Value)
		}, func(j int, _ string) {
			if n := len(st.runs); n > 0 && st.runs[n-1].at == len(st.fixed) {
				st.runs[n-1].to++
			} else {
				st.runs = append(st.runs, targetRun{at: len(st.fixed), from: j, to: j + 1})
			}
		})
		tp.series = append(tp.series, st)
	}
	return tp
}

// mergeTargetLabels walks a series' own labels (sorted) and the target label names (sorted)
// together in name order, calling own for each of the series' labels and target for the j-th
// target label, and reports whether the whole set passes validLabels (a target's value taken
// as "x": each is checked where the targets are made). Remote write 1.0's and 2.0's templates
// are made by it.
func mergeTargetLabels(own []workload.Label, names []string, ownLabel func(workload.Label), target func(j int, name string)) bool {
	merged := make([]workload.Label, 0, len(own)+len(names))
	i := 0
	for j, name := range names {
		for ; i < len(own) && own[i].Name < name; i++ {
			ownLabel(own[i])
			merged = append(merged, own[i])
		}
		target(j, name)
		merged = append(merged, workload.Label{Name: name, Value: "x"})
	}
	for ; i < len(own); i++ {
		ownLabel(own[i])
		merged = append(merged, own[i])
	}
	return validLabels(merged)
}

// appendLabel appends one Label as field 1 of a TimeSeries.
func appendLabel(b []byte, name, value string) []byte {
	b = append(b, 0x0a)
	b = binary.AppendUvarint(b, uint64(labelSize(name, value)))
	b = append(b, 0x0a)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = append(b, 0x12)
	b = binary.AppendUvarint(b, uint64(len(value)))
	return append(b, value...)
}

// labelsSize is the size of labels as Label fields of a TimeSeries.
func labelsSize(labels []workload.Label) int {
	size := 0
	for _, l := range labels {
		n := labelSize(l.Name, l.Value)
		size += 1 + uvarintLen(uint64(n)) + n
	}
	return size
}

func labelSize(name, value string) int {
	return 1 + uvarintLen(uint64(len(name))) + len(name) + 1 + uvarintLen(uint64(len(value))) + len(value)
}

// sampleSize is the size of a Sample message; as proto3 does, a zero value (0 or -0, as
// prompb compares it) or a zero timestamp is left out.
func sampleSize(t int64, v float64) int {
	n := 0
	if v != 0 {
		n += 1 + 8
	}
	if t != 0 {
		n += 1 + uvarintLen(uint64(t))
	}
	return n
}

// appendSample appends a Sample as field 2 of a TimeSeries.
func appendSample(b []byte, size int, t int64, v float64) []byte {
	b = append(b, 0x12)
	b = binary.AppendUvarint(b, uint64(size))
	if v != 0 {
		b = append(b, 0x09) // field 1, 64-bit
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	if t != 0 {
		b = append(b, 0x10) // field 2, varint
		b = binary.AppendUvarint(b, uint64(t))
	}
	return b
}

func uvarintLen(x uint64) int {
	return (bits.Len64(x|1) + 6) / 7
}

// validLabels checks a series' labels: a __name__ matching [a-zA-Z_:][a-zA-Z0-9_:]*, names
// matching [a-zA-Z_][a-zA-Z0-9_]*, no empty value, names sorted and unique.
func validLabels(labels []workload.Label) bool {
	hasName := false
	for i, l := range labels {
		if l.Value == "" || (i > 0 && labels[i-1].Name >= l.Name) {
			return false
		}
		if l.Name == "__name__" {
			hasName = true
			if !validName(l.Value, true) {
				return false
			}
		} else if !validName(l.Name, false) {
			return false
		}
	}
	return hasName
}

func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (colon && c == ':') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}
