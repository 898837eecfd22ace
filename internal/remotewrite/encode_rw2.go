package remotewrite

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/tsbench/tsbench/internal/workload"
)

// encoderV2 builds one remote-write 2.0 request (io.prometheus.write.v2.Request, spec
// https://prometheus.io/docs/specs/prw/remote_write_spec_2_0/) by appending bytes, as
// encoderV1 does for 1.0: every string once in the symbols table, each series' labels as
// references to it, and the profile's metadata (type, help, unit) on every series. Counters,
// histograms and summaries carry their target's process start as start_timestamp
// (encode_created.go).
//
//	Request    { repeated string symbols = 4; repeated TimeSeries timeseries = 5; }
//	TimeSeries { repeated uint32 labels_refs = 1 [packed]; repeated Sample samples = 2; Metadata metadata = 5; }
//	Sample     { double value = 1; int64 timestamp = 2; int64 start_timestamp = 3; }
//	Metadata   { MetricType type = 1; uint32 help_ref = 3; uint32 unit_ref = 4; }
//
// No allocation per sample once its buffers and map have grown: a new symbol's bytes go to
// an arena the map's keys point into, so a generator's reused label strings are never kept.
type encoderV2 struct {
	meta    metadata
	series  []byte // the timeseries fields
	symbols []byte // the symbols fields, "" first as the spec requires
	refs    map[string]uint32
	arena   []byte // the bytes of the symbols, the keys of refs point into it
	out     []byte // symbols then series, what body returns
	lrefs   []uint32
	tally
	ex      *workload.Exemplar // the next sample's, nil for none (encode_exemplar.go)
	created int64              // the current target's process start, ms; 0: unknown (encode_created.go)

	// The fast path (StartTarget, AppendSeries), when the workload names its series.
	tpl        *v2Templates
	epoch      uint32   // the request's number: refOf[id] holds when epochOf[id] == epoch
	refOf      []uint32 // by string id of tpl
	epochOf    []uint32
	target     []string // the current target's label values, valid until the next StartTarget
	targetOK   bool
	targetRefs []uint32 // their refs in this request, when targetFresh
	fresh      bool
}

// newEncoderV2 makes an encoder; tpl, when not nil, enables the fast path.
func newEncoderV2(meta metadata, tpl *v2Templates) *encoderV2 {
	e := &encoderV2{meta: meta, refs: map[string]uint32{}, tpl: tpl}
	if tpl != nil {
		e.refOf, e.epochOf = make([]uint32, len(tpl.strs)), make([]uint32, len(tpl.strs))
	}
	e.reset()
	return e
}

func (e *encoderV2) reset() {
	clear(e.refs) // before the arena is reused: no key may point at overwritten bytes
	e.series, e.symbols, e.arena = e.series[:0], e.symbols[:0], e.arena[:0]
	e.samples, e.oldest = 0, 0
	e.ref("")
	if e.epoch++; e.epoch == 0 { // wrapped: no stale epoch may match
		clear(e.epochOf)
		e.epoch = 1
	}
	e.fresh = false
}

// ref is the symbol's index, added to the table on first use.
func (e *encoderV2) ref(s string) uint32 {
	if r, ok := e.refs[s]; ok {
		return r
	}
	r := uint32(len(e.refs))
	start := len(e.arena)
	e.arena = append(e.arena, s...)
	// The key is the arena's copy. When the arena grows, keys keep the old array alive and
	// unchanged; reset clears the map before it writes over the arena.
	e.refs[unsafe.String(unsafe.SliceData(e.arena[start:]), len(s))] = r
	e.symbols = append(e.symbols, 0x22) // field 4, length-delimited
	e.symbols = binary.AppendUvarint(e.symbols, uint64(len(s)))
	e.symbols = append(e.symbols, s...)
	return r
}

// rw2Type is the spec's Metadata.MetricType of a profile type.
var rw2Type = [...]uint64{typeUnknown: 0, typeCounter: 1, typeGauge: 2, typeHistogram: 3, typeSummary: 5}

// Append encodes one sample as a TimeSeries, after the same label checks as 1.0.
func (e *encoderV2) Append(labels []workload.Label, t int64, v float64) {
	if !validLabels(labels) {
		e.invalid++
		e.ex = nil
		return
	}
	m := e.meta[metricName(labels)]
	helpRef, unitRef := e.refsOf(labels, m)
	e.write(rw2Type[m.typ], helpRef, unitRef, t, v)
}

// refsOf puts the labels' refs in lrefs and returns those of m's help and unit (0: none).
func (e *encoderV2) refsOf(labels []workload.Label, m metricMeta) (helpRef, unitRef uint32) {
	e.lrefs = e.lrefs[:0]
	for _, l := range labels {
		e.lrefs = append(e.lrefs, e.ref(l.Name), e.ref(l.Value))
	}
	if m.help != "" {
		helpRef = e.ref(m.help)
	}
	if m.unit != "" {
		unitRef = e.ref(m.unit)
	}
	return helpRef, unitRef
}

// write encodes a TimeSeries of the labels in lrefs, the metadata and one sample.
func (e *encoderV2) write(typ uint64, helpRef, unitRef uint32, t int64, v float64) {
	refsLen := e.refsLen()
	metaLen := metaSize(typ, helpRef, unitRef)
	ex := e.exemplarV2Of()
	st := e.startOf(typ)
	sampleLen := 1 + 8 + 1 + uvarintLen(uint64(t)) + startSize(st)
	seriesLen := 1 + uvarintLen(uint64(refsLen)) + refsLen + 1 + uvarintLen(uint64(sampleLen)) + sampleLen + ex.size()
	if metaLen > 0 {
		seriesLen += 1 + uvarintLen(uint64(metaLen)) + metaLen
	}

	b := e.series
	b = append(b, 0x2a) // field 5, length-delimited
	b = binary.AppendUvarint(b, uint64(seriesLen))
	b = e.appendRefs(b, refsLen)
	b = append(b, 0x12) // samples
	b = binary.AppendUvarint(b, uint64(sampleLen))
	b = append(b, 0x09) // value, 64-bit
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	b = append(b, 0x10) // timestamp, varint
	b = binary.AppendUvarint(b, uint64(t))
	if st != 0 {
		b = binary.AppendUvarint(append(b, 0x18), uint64(st)) // start_timestamp
	}
	e.series = appendMeta(ex.appendTo(b), metaLen, typ, helpRef, unitRef)
	e.added(t)
}

// refsLen is the size of the packed labels_refs of lrefs.
func (e *encoderV2) refsLen() int {
	n := 0
	for _, r := range e.lrefs {
		n += uvarintLen(uint64(r))
	}
	return n
}

// appendRefs appends lrefs as the packed labels_refs field, of size n.
func (e *encoderV2) appendRefs(b []byte, n int) []byte {
	b = append(b, 0x0a) // labels_refs, packed
	b = binary.AppendUvarint(b, uint64(n))
	for _, r := range e.lrefs {
		b = binary.AppendUvarint(b, uint64(r))
	}
	return b
}

func (e *encoderV2) added(t int64) {
	if e.samples == 0 || t < e.oldest {
		e.oldest = t
	}
	e.samples++
}

// metaSize is the size of a Metadata message; 0 when every field is left out.
func metaSize(typ uint64, helpRef, unitRef uint32) int {
	n := 0
	if typ != 0 {
		n += 1 + uvarintLen(typ)
	}
	if helpRef != 0 {
		n += 1 + uvarintLen(uint64(helpRef))
	}
	if unitRef != 0 {
		n += 1 + uvarintLen(uint64(unitRef))
	}
	return n
}

// appendMeta appends the metadata field of size n, when n > 0.
func appendMeta(b []byte, n int, typ uint64, helpRef, unitRef uint32) []byte {
	if n == 0 {
		return b
	}
	b = append(b, 0x2a) // metadata
	b = binary.AppendUvarint(b, uint64(n))
	if typ != 0 {
		b = append(b, 0x08)
		b = binary.AppendUvarint(b, typ)
	}
	if helpRef != 0 {
		b = append(b, 0x18)
		b = binary.AppendUvarint(b, uint64(helpRef))
	}
	if unitRef != 0 {
		b = append(b, 0x20)
		b = binary.AppendUvarint(b, uint64(unitRef))
	}
	return b
}

// StartTarget takes the target's label values (in the order of the templates' names) for
// the AppendSeries calls that follow.
func (e *encoderV2) StartTarget(values []string) {
	e.target, e.targetOK, e.fresh = values, len(values) == len(e.tpl.names), false
	for _, v := range values {
		if v == "" {
			e.targetOK = false
		}
	}
}

// AppendSeries encodes a sample of series s of the current target, from labels checked and
// interned once: per label a slice lookup while the string is already in this request's
// table, the map only for a string's first use in a request.
func (e *encoderV2) AppendSeries(s int, t int64, v float64) {
	st := &e.tpl.series[s]
	if !st.valid || !e.targetOK {
		e.invalid++
		e.ex = nil
		return
	}
	if !e.fresh { // the target's values, once per target and request
		e.targetRefs = e.targetRefs[:0]
		for _, tv := range e.target {
			e.targetRefs = append(e.targetRefs, e.ref(tv))
		}
		e.fresh = true
	}
	e.lrefs = e.lrefs[:0]
	for _, id := range st.labels {
		if id < 0 {
			e.lrefs = append(e.lrefs, e.targetRefs[-1-int(id)])
		} else {
			e.lrefs = append(e.lrefs, e.idRef(id))
		}
	}
	var helpRef, unitRef uint32
	if st.help >= 0 {
		helpRef = e.idRef(st.help)
	}
	if st.unit >= 0 {
		unitRef = e.idRef(st.unit)
	}
	e.write(st.typ, helpRef, unitRef, t, v)
}

// idRef is the ref of the templates' string id in this request.
func (e *encoderV2) idRef(id int32) uint32 {
	if e.epochOf[id] == e.epoch {
		return e.refOf[id]
	}
	r := e.ref(e.tpl.strs[id])
	e.refOf[id], e.epochOf[id] = r, e.epoch
	return r
}

// v2Templates are a workload's series prepared for encoderV2.AppendSeries, built once and
// shared read-only: every string a series carries interned, with the target labels' places.
type v2Templates struct {
	names  []string // the target labels, sorted
	strs   []string // by id
	series []v2Series
}

// v2Series is one series: its labels in order as name id, value id pairs (a value id -1-j is
// the target's j-th value), its metadata, and whether its labels pass validLabels.
type v2Series struct {
	labels     []int32
	typ        uint64
	help, unit int32 // string ids, -1 for none
	valid      bool
}

func newV2Templates(w namedSeries, meta metadata) *v2Templates {
	tp := &v2Templates{names: w.TargetLabelNames()}
	ids := map[string]int32{}
	intern := func(s string) int32 {
		id, ok := ids[s]
		if !ok {
			id = int32(len(tp.strs))
			ids[s] = id
			tp.strs = append(tp.strs, s)
		}
		return id
	}
	for s := range w.SeriesPerTarget() {
		own := w.SeriesLabels(s)
		var st v2Series
		st.valid = mergeTargetLabels(own, tp.names, func(l workload.Label) {
			st.labels = append(st.labels, intern(l.Name), intern(l.Value))
		}, func(j int, name string) {
			st.labels = append(st.labels, intern(name), int32(-1-j))
		})
		m := meta[metricName(own)]
		st.typ, st.help, st.unit = rw2Type[m.typ], -1, -1
		if m.help != "" {
			st.help = intern(m.help)
		}
		if m.unit != "" {
			st.unit = intern(m.unit)
		}
		tp.series = append(tp.series, st)
	}
	return tp
}

// body is the encoded request, valid until the next reset.
func (e *encoderV2) body() []byte {
	e.out = append(append(e.out[:0], e.symbols...), e.series...)
	return e.out
}

func (e *encoderV2) takeInvalid(n *[wires]int64) { e.moveInvalid(n, wireRW2) }

func (e *encoderV2) flush(out *[wires]request) {
	out[wireRW2] = request{body: e.body(), points: int64(e.samples)}
	e.reset()
}
