package remotewrite

import (
	"encoding/binary"
	"encoding/hex"
	"math"

	"github.com/tsbench/tsbench/internal/workload"
)

// Exemplars (issue 23): the generator sets one just before the sample that carries it, and
// the encoder writes it into that sample's series (remote write) or data point (OTLP):
//
//	1.0 TimeSeries.exemplars = 3 { repeated Label labels = 1; double value = 2; int64 timestamp = 3; }
//	2.0 TimeSeries.exemplars = 4 { repeated uint32 labels_refs = 1 [packed]; double value = 2; int64 timestamp = 3; }
//	OTLP NumberDataPoint.exemplars = 5, ExponentialHistogramDataPoint.exemplars = 11
//	     { fixed64 time_unix_nano = 2; double as_double = 3; bytes trace_id = 5; }
//
// The trace id is the label trace_id over remote write, 16 bytes over OTLP (which
// Prometheus' translation turns into the label trace_id, in hex).

// SetExemplar takes the exemplar of the next sample.
func (e *encoderV1) SetExemplar(ex *workload.Exemplar) { e.ex = ex }

// SetExemplar takes the exemplar of the next sample.
func (e *encoderV2) SetExemplar(ex *workload.Exemplar) { e.ex = ex }

// SetExemplar takes the exemplar of the next sample.
func (e *encoderOTLP) SetExemplar(ex *workload.Exemplar) { e.ex = ex }

// exemplarSize is the size of a 1.0 Exemplar message; 0 for none.
func exemplarSize(ex *workload.Exemplar) int {
	if ex == nil {
		return 0
	}
	l := labelSize(workload.ExemplarLabel, ex.TraceID)
	n := 1 + uvarintLen(uint64(l)) + l
	if ex.Value != 0 {
		n += 1 + 8
	}
	if ex.T != 0 {
		n += 1 + uvarintLen(uint64(ex.T))
	}
	return n
}

// exemplarFieldSize is exemplarSize with the field's tag and length.
func exemplarFieldSize(ex *workload.Exemplar) int {
	if ex == nil {
		return 0
	}
	n := exemplarSize(ex)
	return 1 + uvarintLen(uint64(n)) + n
}

// appendExemplar appends ex as field 3 of a 1.0 TimeSeries; nothing for none.
func appendExemplar(b []byte, ex *workload.Exemplar) []byte {
	if ex == nil {
		return b
	}
	b = binary.AppendUvarint(append(b, 0x1a), uint64(exemplarSize(ex)))
	b = appendLabel(b, workload.ExemplarLabel, ex.TraceID)
	if ex.Value != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, 0x11), math.Float64bits(ex.Value))
	}
	if ex.T != 0 {
		b = binary.AppendUvarint(append(b, 0x18), uint64(ex.T))
	}
	return b
}

// exemplarV2 is a 2.0 Exemplar's label refs, resolved once per exemplar.
type exemplarV2 struct {
	name, value uint32
	ex          *workload.Exemplar
}

// exemplarV2Of interns the pending exemplar's label; none when there is none.
func (e *encoderV2) exemplarV2Of() exemplarV2 {
	if e.ex == nil {
		return exemplarV2{}
	}
	x := exemplarV2{name: e.ref(workload.ExemplarLabel), value: e.ref(e.ex.TraceID), ex: e.ex}
	e.ex = nil
	return x
}

func (x exemplarV2) size() int {
	if x.ex == nil {
		return 0
	}
	n := x.bodySize()
	return 1 + uvarintLen(uint64(n)) + n
}

// bodySize is the size of the Exemplar message; a zero value or timestamp is left out, as
// writev2's Marshal leaves it out.
func (x exemplarV2) bodySize() int {
	refs := uvarintLen(uint64(x.name)) + uvarintLen(uint64(x.value))
	n := 1 + uvarintLen(uint64(refs)) + refs
	if x.ex.Value != 0 {
		n += 1 + 8
	}
	if x.ex.T != 0 {
		n += 1 + uvarintLen(uint64(x.ex.T))
	}
	return n
}

// appendTo appends the exemplar as field 4 of a 2.0 TimeSeries; nothing for none.
func (x exemplarV2) appendTo(b []byte) []byte {
	if x.ex == nil {
		return b
	}
	refs := uvarintLen(uint64(x.name)) + uvarintLen(uint64(x.value))
	b = binary.AppendUvarint(append(b, 0x22), uint64(x.bodySize()))
	b = binary.AppendUvarint(append(b, 0x0a), uint64(refs))
	b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(x.name)), uint64(x.value))
	if x.ex.Value != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, 0x11), math.Float64bits(x.ex.Value))
	}
	if x.ex.T != 0 {
		b = binary.AppendUvarint(append(b, 0x18), uint64(x.ex.T))
	}
	return b
}

// otlpExemplarSize is the size of an OTLP exemplar field (tag included); 0 for none.
func otlpExemplarSize(ex *workload.Exemplar) int {
	if ex == nil {
		return 0
	}
	return 1 + 1 + 9 + 9 + 2 + 16
}

// appendOTLPExemplar appends ex as field tag of a data point; nothing for none. A trace id
// that is not 32 hex digits is sent as 16 zero bytes.
func appendOTLPExemplar(b []byte, tag byte, ex *workload.Exemplar) []byte {
	if ex == nil {
		return b
	}
	var id [16]byte
	if len(ex.TraceID) == 32 {
		_, _ = hex.Decode(id[:], []byte(ex.TraceID))
	}
	b = append(b, tag, 9+9+2+16)
	b = binary.LittleEndian.AppendUint64(append(b, 0x11), uint64(ex.T)*1e6) // time_unix_nano
	b = binary.LittleEndian.AppendUint64(append(b, 0x19), math.Float64bits(ex.Value))
	b = append(b, 0x2a, 16) // trace_id
	return append(b, id[:]...)
}
