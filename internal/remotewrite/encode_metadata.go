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
// samples' requests: they carry no sample. Each send (one per URL and interval) is retried
// as a batch of samples is (deliver) and ends accepted (a 2xx), dropped (dropped, by reason)
// or, when the run's drain deadline interrupts its retries, pending.
type metadataSender struct {
	s        *sink
	body     []byte // snappy-compressed, the same every time
	families int

	mu       sync.Mutex // guards everything below
	requests map[string]int64
	bytes    int64
	retries  int64
	dropped  map[string]int64
	pending  int64
}

// run sends the metadata to every endpoint now and every metadataInterval until done, each
// endpoint on its own: one retrying does not hold back another's.
func (m *metadataSender) run(ctx context.Context, done <-chan struct{}, cfg senderConfig) {
	var wg sync.WaitGroup
	for _, ep := range m.s.endpoints {
		wg.Go(func() {
			tick := time.NewTicker(metadataInterval)
			defer tick.Stop()
			for {
				m.send(ctx, ep, cfg)
				select {
				case <-ctx.Done():
					return
				case <-done:
					return
				case <-tick.C: // a send that retried past the interval is followed at once
				}
			}
		})
	}
	wg.Wait()
}

// send delivers the metadata to ep once, retrying network errors, 5xx and 429 with the
// samples' backoff and give-up rule (issue 37: it was sent once, and a refused one waited a
// minute for the next interval), and counts how the send ended.
func (m *metadataSender) send(ctx context.Context, ep *endpoint, cfg senderConfig) {
	m.mu.Lock()
	m.pending++
	m.mu.Unlock()
	ans, how := cfg.deliver(ctx, func(timeout time.Duration) (answer, error) {
		return m.post(ctx, ep, cfg.userAgent, timeout)
	}, func() {
		m.mu.Lock()
		m.retries++
		m.mu.Unlock()
	})
	var reason string
	switch {
	case how == canceled:
		return // the run ended with it: still pending
	case how == gaveUp:
		reason = reasonRetryTimeout
	case ans.status/100 != 2:
		reason = "http_" + strconv.Itoa(ans.status)
	}
	m.mu.Lock()
	m.pending--
	first := false
	if reason != "" {
		m.dropped[reason]++
		first = m.dropped[reason] == 1
	}
	m.mu.Unlock()
	if first && reason == reasonRetryTimeout {
		m.s.log.Warn("metadata request given up after maxRetryDuration; sent again next interval", "reason", reason)
	}
}

// post sends the metadata once within timeout and counts the request by status; the first
// of each status is logged.
func (m *metadataSender) post(ctx context.Context, ep *endpoint, userAgent string, timeout time.Duration) (answer, error) {
	ans := answer{written: -1}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, ep.url, bytes.NewReader(m.body))
	if err != nil {
		return ans, err
	}
	setHeaders(req.Header, m.s.wire, userAgent)
	status := "network_error"
	resp, err := ep.client.Do(req)
	switch {
	case err == nil:
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ans.status, ans.retryAfter = resp.StatusCode, retryAfter(resp)
		status = strconv.Itoa(resp.StatusCode)
	case ctx.Err() != nil:
		return ans, err // the run's end, not the storage's answer: not counted
	}
	m.mu.Lock()
	m.requests[status]++
	m.bytes += int64(len(m.body))
	first := m.requests[status] == 1
	m.mu.Unlock()
	switch {
	case !first:
	case err != nil:
		m.s.log.Warn("metadata request failed; retrying until maxRetryDuration", "err", redactErr(err, ep.url))
	case retryable(ans.status):
		m.s.log.Warn("metadata request refused; retrying with backoff until maxRetryDuration", "status", status)
	case ans.status/100 != 2:
		m.s.log.Warn("metadata request rejected; not retried, sent again next interval", "status", status, "reason", "http_"+status)
	}
	return ans, err
}

// results is the requests' account.
func (m *metadataSender) results() *results.WriteMetadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &results.WriteMetadata{
		Families: m.families, RequestsByStatus: cloneMap(m.requests), BytesSent: m.bytes,
		Retries: m.retries, Dropped: cloneMap(m.dropped), Pending: m.pending,
	}
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
			out[s.name] = &metadataSender{s: s, body: body, families: len(fams), requests: map[string]int64{}, dropped: map[string]int64{}}
		}
	}
	return out
}
