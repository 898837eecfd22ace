package remotewrite

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/tsbench/tsbench/internal/workload"
)

// encoderV2 builds one remote-write 2.0 request (io.prometheus.write.v2.Request, spec
// https://prometheus.io/docs/specs/prw/remote_write_spec_2_0/) by appending bytes, as
// encoder does for 1.0: every string once in the symbols table, each series' labels as
// references to it, and the profile's metadata (type, help, unit) on every series. The
// profile records no created (start) timestamps, so start_timestamp is never sent.
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
	samples int   // samples in the request
	oldest  int64 // smallest timestamp, ms
	invalid int   // samples refused for invalid labels since the last reset
}

func newEncoderV2(meta metadata) *encoderV2 {
	e := &encoderV2{meta: meta, refs: map[string]uint32{}}
	e.reset()
	return e
}

func (e *encoderV2) reset() {
	clear(e.refs) // before the arena is reused: no key may point at overwritten bytes
	e.series, e.symbols, e.arena = e.series[:0], e.symbols[:0], e.arena[:0]
	e.samples, e.oldest = 0, 0
	e.ref("")
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
		return
	}
	m := e.meta[metricName(labels)]
	e.lrefs = e.lrefs[:0]
	refsLen := 0
	for _, l := range labels {
		n, v := e.ref(l.Name), e.ref(l.Value)
		e.lrefs = append(e.lrefs, n, v)
		refsLen += uvarintLen(uint64(n)) + uvarintLen(uint64(v))
	}
	var helpRef, unitRef uint32
	if m.help != "" {
		helpRef = e.ref(m.help)
	}
	if m.unit != "" {
		unitRef = e.ref(m.unit)
	}
	typ := rw2Type[m.typ]
	metaLen := 0
	if typ != 0 {
		metaLen += 1 + uvarintLen(typ)
	}
	if helpRef != 0 {
		metaLen += 1 + uvarintLen(uint64(helpRef))
	}
	if unitRef != 0 {
		metaLen += 1 + uvarintLen(uint64(unitRef))
	}
	sampleLen := 1 + 8 + 1 + uvarintLen(uint64(t))
	seriesLen := 1 + uvarintLen(uint64(refsLen)) + refsLen + 1 + uvarintLen(uint64(sampleLen)) + sampleLen
	if metaLen > 0 {
		seriesLen += 1 + uvarintLen(uint64(metaLen)) + metaLen
	}

	b := e.series
	b = append(b, 0x2a) // field 5, length-delimited
	b = binary.AppendUvarint(b, uint64(seriesLen))
	b = append(b, 0x0a) // labels_refs, packed
	b = binary.AppendUvarint(b, uint64(refsLen))
	for _, r := range e.lrefs {
		b = binary.AppendUvarint(b, uint64(r))
	}
	b = append(b, 0x12) // samples
	b = binary.AppendUvarint(b, uint64(sampleLen))
	b = append(b, 0x09) // value, 64-bit
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	b = append(b, 0x10) // timestamp, varint
	b = binary.AppendUvarint(b, uint64(t))
	if metaLen > 0 {
		b = append(b, 0x2a) // metadata
		b = binary.AppendUvarint(b, uint64(metaLen))
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
	}
	e.series = b
	if e.samples == 0 || t < e.oldest {
		e.oldest = t
	}
	e.samples++
}

// body is the encoded request, valid until the next reset.
func (e *encoderV2) body() []byte {
	e.out = append(append(e.out[:0], e.symbols...), e.series...)
	return e.out
}
