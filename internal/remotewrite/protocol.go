package remotewrite

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"github.com/klauspost/compress/gzip"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tsbench/tsbench/internal/config"
)

// reasonPartialWrite drops the samples of a batch its 2xx answer did not confirm as written:
// fewer than sent in X-Prometheus-Remote-Write-Samples-Written (2.0), or an OTLP partial
// success's rejected points.
const reasonPartialWrite = "partial_write"

// wire is one encoding of the workload on the wire: a protocol and, for OTLP, its
// compression. A batch is made once per wire in use and pushed to every storage that takes it.
type wire uint8

const (
	wireRW1      wire = iota // remote write 1.0, snappy
	wireRW2                  // remote write 2.0, snappy
	wireOTLPGzip             // OTLP protobuf, gzip
	wireOTLP                 // OTLP protobuf, uncompressed
	wires
)

func wireOf(st config.Storage) wire {
	switch st.WriteProtocol() {
	case config.ProtocolRW2:
		return wireRW2
	case config.ProtocolOTLP:
		if st.OTLPGzipped() {
			return wireOTLPGzip
		}
		return wireOTLP
	}
	return wireRW1
}

// only is the set of wires in use of a storage alone.
func only(w wire) [wires]bool {
	var use [wires]bool
	use[w] = true
	return use
}

// Remote write 2.0's content type (spec, "Protocol") and the headers of its answer.
const (
	contentTypeRW2        = "application/x-protobuf;proto=io.prometheus.write.v2.Request"
	headerSamplesWritten  = "X-Prometheus-Remote-Write-Samples-Written"
	headerHistogramsWrite = "X-Prometheus-Remote-Write-Histograms-Written"
	headerExemplarsWrite  = "X-Prometheus-Remote-Write-Exemplars-Written"
)

// setHeaders sets the protocol's request headers.
func setHeaders(h http.Header, w wire, userAgent string) {
	h.Set("User-Agent", userAgent)
	switch w {
	case wireRW1:
		h.Set("Content-Encoding", "snappy")
		h.Set("Content-Type", "application/x-protobuf")
		h.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	case wireRW2:
		h.Set("Content-Encoding", "snappy")
		h.Set("Content-Type", contentTypeRW2)
		h.Set("X-Prometheus-Remote-Write-Version", "2.0.0")
	case wireOTLPGzip:
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Type", "application/x-protobuf")
	case wireOTLP:
		h.Set("Content-Type", "application/x-protobuf")
	}
}

// writtenRW2 reads a 2.0 answer's confirmation: the samples and histograms it says it wrote
// (a native histogram is one sample in the account; exemplars are not samples), or
// -1 when it has none of the three headers, as a 1.0-only receiver answers. A header that is
// not a count is no confirmation either.
func writtenRW2(h http.Header) int64 {
	if h.Get(headerSamplesWritten) == "" && h.Get(headerHistogramsWrite) == "" && h.Get(headerExemplarsWrite) == "" {
		return -1
	}
	var n int64
	for _, k := range []string{headerSamplesWritten, headerHistogramsWrite} {
		if v := h.Get(k); v != "" {
			c, err := strconv.ParseInt(v, 10, 64)
			if err != nil || c < 0 {
				return -1
			}
			n += c
		}
	}
	return n
}

// partialSuccess reads an OTLP ExportMetricsServiceResponse: the points its partial_success
// says were rejected, and its message. An empty body rejects nothing; so does a body that is
// not such a message (what it did decode is kept). Fields repeat as protobuf merges them: a
// later value wins.
//
//	ExportMetricsServiceResponse { ExportMetricsPartialSuccess partial_success = 1; }
//	ExportMetricsPartialSuccess  { int64 rejected_data_points = 1; string error_message = 2; }
func partialSuccess(body []byte) (rejected int64, msg string) {
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 {
			return rejected, msg
		}
		body = body[n:]
		if num != 1 || typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, body); n < 0 {
				return rejected, msg
			}
			body = body[n:]
			continue
		}
		ps, n := protowire.ConsumeBytes(body)
		if n < 0 {
			return rejected, msg
		}
		body = body[n:]
		for len(ps) > 0 {
			num, typ, n := protowire.ConsumeTag(ps)
			if n < 0 {
				return rejected, msg
			}
			ps = ps[n:]
			switch {
			case num == 1 && typ == protowire.VarintType:
				v, n := protowire.ConsumeVarint(ps)
				if n < 0 {
					return rejected, msg
				}
				rejected, ps = int64(v), ps[n:]
			case num == 2 && typ == protowire.BytesType:
				b, n := protowire.ConsumeBytes(ps)
				if n < 0 {
					return rejected, msg
				}
				msg, ps = string(b), ps[n:]
			default:
				if n = protowire.ConsumeFieldValue(num, typ, ps); n < 0 {
					return rejected, msg
				}
				ps = ps[n:]
			}
		}
	}
	return rejected, msg
}

// rejectedSamples turns an OTLP answer's rejected points into samples of the batch. A point
// of a number metric is one sample; a summary or histogram point is several, and the answer
// does not say which points it rejected: then the batch's mean samples per point, rounded up.
func rejectedSamples(rejected, points, samples int64) int64 {
	switch {
	case rejected <= 0:
		return 0
	case rejected >= points:
		return samples
	case points == samples:
		return rejected
	}
	return min(samples, (rejected*samples+points-1)/points)
}

// gzipper compresses OTLP bodies with one reused writer.
type gzipper struct {
	buf bytes.Buffer
	zw  *gzip.Writer
}

// compress returns b gzipped, valid until the next call. The writer's errors are its
// destination's, and a bytes.Buffer returns none.
func (g *gzipper) compress(b []byte) []byte {
	g.buf.Reset()
	if g.zw == nil {
		g.zw = gzip.NewWriter(&g.buf)
	} else {
		g.zw.Reset(&g.buf)
	}
	_, _ = g.zw.Write(b)
	_ = g.zw.Close()
	return g.buf.Bytes()
}

// notesLocked says what the storage's answers mean for its account, for results and summary.
func (s *sink) notesLocked() []string {
	var notes []string
	if s.unconfirmed > 0 {
		notes = append(notes, fmt.Sprintf("receiver did not confirm RW 2.0 writes: %d samples acked by a 2xx without %s "+
			"(as a 1.0-only receiver answers); they are counted as acked, but the storage did not say it stored them",
			s.unconfirmed, headerSamplesWritten))
	}
	if n := s.dropped["http_415"]; n > 0 && s.wire == wireRW2 {
		notes = append(notes, fmt.Sprintf("does not take remote write 2.0: 415 Unsupported Media Type, %d samples dropped (http_415); "+
			"set protocol: prometheus-rw1 for it", n))
	}
	if n := s.dropped[reasonPartialWrite]; n > 0 {
		what := "the receiver confirmed fewer samples than sent (" + headerSamplesWritten + ")"
		if s.wire == wireOTLP || s.wire == wireOTLPGzip {
			what = "OTLP partial success: the receiver rejected data points"
		}
		notes = append(notes, fmt.Sprintf("%s: %d samples dropped (partial_write)", what, n))
	}
	return notes
}
