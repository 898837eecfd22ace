package storagetest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"time"
)

// heldWrite is a write LieDelay acknowledged and forwards at due.
type heldWrite struct {
	path   string
	header http.Header
	body   []byte
	due    time.Time
}

// forward hands LieDelay's writes to the receiver, each at its due time, one after another
// (so a series' samples reach it in the order they came), until Close.
func (l *Liar) forward() {
	defer close(l.forwarded)
	for h := range l.held {
		time.Sleep(time.Until(h.due))
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
		l.delays = append(l.delays, time.Since(h.due.Add(-l.lies.Delay)))
		l.mu.Unlock()
	}
}

// Delays are, for LieDelay, the times from each held write's ack to the receiver's answer to
// it as the forwarder passed it on: Delay, plus what the queue of held writes and the
// receiver took on a busy machine. A sample shows within its write's.
func (l *Liar) Delays() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.delays)
}
