// Package remotewrite writes the workload to every storage over Prometheus remote_write 1.0:
// protobuf encoding, snappy block compression, one independent pipeline per storage with
// bounded queues, retries with backoff, and exact accounting.
//
// Invariant: for every storage, at every moment, generated = acked + dropped{reason} +
// pending, in whole samples; a slow or dead storage never slows the generator or another
// storage — it shows as lag, pending and counted drops.
package remotewrite

import (
	"encoding/binary"
	"math"

	"github.com/tsbench/tsbench/internal/workload"
)

// encoder builds one WriteRequest protobuf (remote-write 1.0) by appending bytes: no
// intermediate structs, no allocation once its buffer has grown.
//
//	WriteRequest { repeated TimeSeries timeseries = 1; }
//	TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
//	Label        { string name = 1; string value = 2; }
//	Sample       { double value = 1; int64 timestamp = 2; }
type encoder struct {
	buf     []byte
	samples int   // samples in buf
	oldest  int64 // smallest timestamp in buf, ms
	invalid int   // samples refused for invalid labels since the last reset
}

func (e *encoder) reset() {
	e.buf, e.samples, e.oldest = e.buf[:0], 0, 0
}

// Append encodes one sample as a TimeSeries, after checking its labels as the spec requires:
// names valid, values non-empty, sorted by name without repeats. An invalid series is not
// encoded and is counted.
func (e *encoder) Append(labels []workload.Label, t int64, v float64) {
	if !validLabels(labels) {
		e.invalid++
		return
	}
	labelsLen := 0
	for _, l := range labels {
		n := labelSize(l)
		labelsLen += 1 + uvarintLen(uint64(n)) + n
	}
	// As proto3 and prompb (the code Prometheus marshals with) do, a field at its default is
	// left out: a value of 0 (-0 too, which then reads as 0, as from Prometheus) or time 0.
	sampleLen := 0
	if v != 0 {
		sampleLen += 1 + 8
	}
	if t != 0 {
		sampleLen += 1 + uvarintLen(uint64(t))
	}
	seriesLen := labelsLen + 1 + uvarintLen(uint64(sampleLen)) + sampleLen

	b := e.buf
	b = append(b, 0x0a) // field 1, length-delimited
	b = binary.AppendUvarint(b, uint64(seriesLen))
	for _, l := range labels {
		b = append(b, 0x0a)
		b = binary.AppendUvarint(b, uint64(labelSize(l)))
		b = append(b, 0x0a)
		b = binary.AppendUvarint(b, uint64(len(l.Name)))
		b = append(b, l.Name...)
		b = append(b, 0x12)
		b = binary.AppendUvarint(b, uint64(len(l.Value)))
		b = append(b, l.Value...)
	}
	b = append(b, 0x12)
	b = binary.AppendUvarint(b, uint64(sampleLen))
	if v != 0 {
		b = append(b, 0x09) // field 1, 64-bit
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	if t != 0 {
		b = append(b, 0x10) // field 2, varint
		b = binary.AppendUvarint(b, uint64(t))
	}
	e.buf = b
	if e.samples == 0 || t < e.oldest {
		e.oldest = t
	}
	e.samples++
}

func labelSize(l workload.Label) int {
	return 1 + uvarintLen(uint64(len(l.Name))) + len(l.Name) + 1 + uvarintLen(uint64(len(l.Value))) + len(l.Value)
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
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
