package remotewrite

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// metadataInterval is how often remote write 1.0 sends the metadata with sendMetadata:
// Prometheus' metadata_config.send_interval default. The first request goes at the start.
const metadataInterval = time.Minute

// familyMetadata is one metric family's metadata as remote write 1.0 sends it.
type familyMetadata struct {
	name, help, unit string
	typ              metricType
}

// families lists the profile's metric families once each (a histogram's, not its _bucket's),
// in name order.
func (m metadata) families() []familyMetadata {
	seen := map[string]bool{}
	var out []familyMetadata
	for _, mm := range m {
		if seen[mm.family] {
			continue
		}
		seen[mm.family] = true
		out = append(out, familyMetadata{name: mm.family, help: mm.help, unit: mm.unit, typ: mm.typ})
	}
	slices.SortFunc(out, func(a, b familyMetadata) int { return cmp.Compare(a.name, b.name) })
	return out
}

// appendMetadataRequest appends a WriteRequest carrying fams and no series; the bytes are
// those prompb's Marshal gives.
//
//	WriteRequest   { repeated MetricMetadata metadata = 3; }
//	MetricMetadata { MetricType type = 1; string metric_family_name = 2; string help = 4; string unit = 5; }
func appendMetadataRequest(b []byte, fams []familyMetadata) []byte {
	for _, f := range fams {
		typ := rw2Type[f.typ] // 1.0's MetricType numbers are 2.0's
		size := len(f.name) + 1 + uvarintLen(uint64(len(f.name)))
		if typ != 0 {
			size += 1 + uvarintLen(typ)
		}
		if f.help != "" {
			size += 1 + uvarintLen(uint64(len(f.help))) + len(f.help)
		}
		if f.unit != "" {
			size += 1 + uvarintLen(uint64(len(f.unit))) + len(f.unit)
		}
		b = append(b, 0x1a)
		b = binary.AppendUvarint(b, uint64(size))
		if typ != 0 {
			b = binary.AppendUvarint(append(b, 0x08), typ)
		}
		b = appendString(b, 0x12, f.name)
		if f.help != "" {
			b = appendString(b, 0x22, f.help)
		}
		if f.unit != "" {
			b = appendString(b, 0x2a, f.unit)
		}
	}
	return b
}

// metadataSender sends one storage's metadata-only requests and counts them apart from the
// samples' requests: they carry no sample.
type metadataSender struct {
	s        *sink
	body     []byte // snappy-compressed, the same every time
	families int

	mu       sync.Mutex // guards requests, bytes
	requests map[string]int64
	bytes    int64
}

// run sends the metadata to every endpoint now and every metadataInterval until done.
func (m *metadataSender) run(ctx context.Context, done <-chan struct{}, userAgent string) {
	tick := time.NewTicker(metadataInterval)
	defer tick.Stop()
	for {
		for _, ep := range m.s.endpoints {
			m.post(ctx, ep, userAgent)
		}
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// post sends the metadata once; a failure is counted, logged the first time, not retried:
// the next interval sends it again, as Prometheus does.
func (m *metadataSender) post(ctx context.Context, ep *endpoint, userAgent string) {
	status := "network_error"
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, ep.url, bytes.NewReader(m.body))
	if err == nil {
		setHeaders(req.Header, m.s.wire, userAgent)
		var resp *http.Response
		if resp, err = ep.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status = strconv.Itoa(resp.StatusCode)
		}
	}
	m.mu.Lock()
	m.requests[status]++
	m.bytes += int64(len(m.body))
	first := m.requests[status] == 1
	m.mu.Unlock()
	switch {
	case !first || ctx.Err() != nil:
	case err != nil:
		m.s.log.Warn("metadata request failed; sent again next interval", "err", redactErr(err, ep.url))
	case status[0] != '2':
		m.s.log.Warn("metadata request refused; sent again next interval", "status", status)
	}
}

// results is the requests' account.
func (m *metadataSender) results() *results.WriteMetadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &results.WriteMetadata{Families: m.families, RequestsByStatus: cloneMap(m.requests), BytesSent: m.bytes}
}

// metadataRequester is an encoder whose protocol has no place for the metadata beside the
// series (remote write 1.0): with sendMetadata, its storages get the profile's metadata in
// requests of their own, which it encodes. 2.0 and OTLP carry it on every series.
type metadataRequester interface {
	metadataRequest(dst []byte, fams []familyMetadata) []byte
}

func (e *encoderV1) metadataRequest(dst []byte, fams []familyMetadata) []byte {
	return appendMetadataRequest(dst, fams)
}

// newMetadataSenders makes a metadata sender for every storage whose protocol sends the
// metadata apart (metadataRequester), when send is set.
func (w *Writer) newMetadataSenders(send bool) map[string]*metadataSender {
	if !send || len(w.meta) == 0 {
		return nil
	}
	fams := w.meta.families()
	out := map[string]*metadataSender{}
	for _, s := range w.sinks {
		if mr, ok := newEncoder(only(s.wire), w.meta, nil, nil).(metadataRequester); ok {
			body := w.compress(nil, mr.metadataRequest(nil, fams))
			out[s.name] = &metadataSender{s: s, body: body, families: len(fams), requests: map[string]int64{}}
		}
	}
	return out
}
