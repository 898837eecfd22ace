package liar

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"time"
)

// heldWrite is a write LieDelay acknowledged at arrival and forwards at due.
type heldWrite struct {
	path         string
	header       http.Header
	body         []byte
	arrived, due time.Time
}

// Held is one write LieDelay held, timed from its arrival: Sent is when the forwarder handed
// it to the receiver (Delay, or later behind a queue of held writes on a busy machine),
// Answered when the receiver answered. Its samples became visible to queries between the two.
type Held struct{ Sent, Answered time.Duration }

// hold acknowledges a write at once, as the receiver would have (with headers, the counts a
// 2.0 answer claims), and queues body, the write as lied, for forward to send Delay later.
func (l *Liar) hold(w http.ResponseWriter, r *http.Request, body []byte, headers map[string]string, now time.Time) {
	header := r.Header.Clone()
	header.Del("Content-Length")
	l.held <- heldWrite{path: r.URL.Path, header: header, body: body, arrived: now, due: now.Add(l.lies.Delay)}
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	if r.URL.Path == OTLPPath { // an empty ExportMetricsServiceResponse: all taken
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// forward hands LieDelay's writes to the receiver, each at its due time, one after another
// (so a series' samples reach it in the order they came), until Close.
func (l *Liar) forward() {
	defer close(l.forwarded)
	for h := range l.held {
		time.Sleep(time.Until(h.due))
		sent := time.Since(h.arrived)
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, l.target+h.path, bytes.NewReader(h.body))
		if err != nil {
			continue
		}
		req.Header = h.header
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		l.mu.Lock()
		l.delays = append(l.delays, Held{Sent: sent, Answered: time.Since(h.arrived)})
		l.mu.Unlock()
	}
}

// Delays are, for LieDelay, the writes held so far, in the order they were forwarded.
func (l *Liar) Delays() []Held {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.delays)
}
