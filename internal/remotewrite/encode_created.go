package remotewrite

import "encoding/binary"

// Created timestamps (issue 23): the generator gives each target's simulated process start
// (workload.Generator.ProcessStart) before its samples, and the protocols that carry it send
// it on every counter, histogram and summary sample:
//
//	2.0 Sample.start_timestamp = 3, Histogram.start_timestamp = 17 (ms)
//	OTLP NumberDataPoint (sums), SummaryDataPoint, HistogramDataPoint and
//	     ExponentialHistogramDataPoint start_time_unix_nano = 2 (fixed64, ns)
//
// Remote write 1.0 has no field for it. Gauges and untyped series have no start.

// SetCreated takes the current target's process start.
func (e *encoderV2) SetCreated(ms int64) { e.created = ms }

// SetCreated takes the current target's process start.
func (e *encoderOTLP) SetCreated(ms int64) { e.created = ms }

// startOf is the start timestamp of a sample of 2.0 metric type typ: the process start for
// a counter, histogram or summary, else 0 (none).
func (e *encoderV2) startOf(typ uint64) int64 {
	switch typ {
	case rw2Type[typeCounter], rw2Type[typeHistogram], rw2Type[typeSummary]:
		return e.created
	}
	return 0
}

// startSize is the size of Sample.start_timestamp; 0 for none.
func startSize(st int64) int {
	if st == 0 {
		return 0
	}
	return 1 + uvarintLen(uint64(st))
}

// histogramStartSize is the size of Histogram.start_timestamp (a two-byte tag); 0 for none.
func histogramStartSize(st int64) int {
	if st == 0 {
		return 0
	}
	return 2 + uvarintLen(uint64(st))
}

// appendHistogramStart appends Histogram.start_timestamp, the message's last field.
func appendHistogramStart(b []byte, st int64) []byte {
	if st == 0 {
		return b
	}
	return binary.AppendUvarint(append(b, 0x88, 0x01), uint64(st)) // field 17, varint
}

// otlpStartSize is the size of a data point's start_time_unix_nano; 0 for none.
func otlpStartSize(st int64) int {
	if st == 0 {
		return 0
	}
	return 1 + 8
}

// appendOTLPStart appends start_time_unix_nano = 2; nothing for none.
func appendOTLPStart(b []byte, st int64) []byte {
	if st == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(append(b, 0x11), uint64(st)*1e6)
}
