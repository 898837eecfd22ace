package remotewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
)

// batch is one compressed request in one wire encoding, shared read-only by every pipeline
// of a storage that takes that encoding. Its buffer is
// reused: each holder (the generator until it pushed it, each endpoint until it settled or
// dropped it, each request body until the transport closed it) has a reference, and the last
// release returns the batch to its pool. A batch never settled (the run ended with it in
// flight) is left to the garbage collector.
type batch struct {
	data    []byte // the compressed body
	samples int64
	points  int64 // OTLP data points (a summary or histogram point is several samples)
	oldest  int64 // smallest sample timestamp, ms
	// from and to are its samples' smallest and largest timestamps, ms (oldest is, for a
	// held batch, when it was due): what a drop records as not acked.
	from, to int64
	history  bool  // made while its lane was catching up (Config.History)
	held     uint8 // heldNone, or the held kind of every sample in it (series.go)
	refs     atomic.Int32
	pool     *sync.Pool
}

func (b *batch) release() {
	if b.refs.Add(-1) == 0 {
		b.pool.Put(b)
	}
}

// body is a request body over a batch, holding a reference until the transport closes it:
// http.Transport may still be writing a body after Do returned (the server answered early).
type body struct {
	bytes.Reader
	b    *batch
	once sync.Once
}

func newBody(b *batch) *body {
	b.refs.Add(1)
	r := &body{b: b}
	r.Reset(b.data)
	return r
}

func (r *body) Close() error {
	r.once.Do(r.b.release)
	return nil
}

// Drop reasons; a 3xx or 4xx answer is dropped as "http_" and its status (http_400, http_413).
const (
	reasonRetryTimeout  = "retry_timeout"
	reasonQueueFull     = "queue_full"
	reasonInvalidLabels = "invalid_labels"
)

// sink is one storage: its endpoints (URL × url_replica copy), queues and account.
type sink struct {
	name       string
	wire       wire            // the storage's protocol and compression
	proto      config.Protocol // the protocol's name, for results
	maxPending int64
	log        *slog.Logger
	m          *Metrics
	// The storage's metric children, looked up once: per batch and per request, only Add.
	generatedC, ackedC, retriesC, sentBytesC prometheus.Counter

	mu        sync.Mutex // guards everything below and every endpoint's queues and inflight
	endpoints []*endpoint
	notAcked  notAcked // the sample times of the batches not acked in full
	generated int64
	acked     int64
	pending   int64
	retries   int64
	bytesSent int64
	dropped   map[string]int64
	requests  map[string]int64
	maxLag    float64
	// unconfirmed counts samples acked by a remote write 2.0 2xx that did not say how many it
	// wrote (in acked too).
	unconfirmed int64
	lastAck     int64                         // unix ms of the newest ack, 0 before the first
	seen        map[string]bool               // statuses already logged
	droppedC    map[string]prometheus.Counter // by reason
	requestsC   map[string]prometheus.Counter // by status

	// The catch-up of a run with history (history.go); settled is signalled on every settle.
	settled                               *sync.Cond
	catchingUp                            bool  // a history batch may still come: push waits, never drops
	histGenerated, histAcked, histSettled int64 // of the batches marked history
	histDone                              int64 // unix ms when the last history batch settled, 0 before
	onHistoryDone                         func(at int64)

	held [heldKinds]heldAccount // the held samples' own account (series.go)

	limits limitLog // the storage's limits its refusals named (limits.go)
}

// endpoint is one URL a storage's data goes to, with a queue and a sender per shard.
type endpoint struct {
	url      string
	client   *storage.Client
	queues   [][]*batch // per shard
	inflight []*batch   // per shard
	notify   []chan struct{}
}

func newSink(name string, w wire, maxPending int64, logger *slog.Logger, m *Metrics) *sink {
	s := &sink{
		name: name, wire: w, maxPending: maxPending, log: logger, m: m,
		generatedC: m.generated.WithLabelValues(name), ackedC: m.acked.WithLabelValues(name),
		retriesC: m.retries.WithLabelValues(name), sentBytesC: m.sentBytes.WithLabelValues(name),
		dropped: map[string]int64{}, requests: map[string]int64{}, seen: map[string]bool{},
		droppedC: map[string]prometheus.Counter{}, requestsC: map[string]prometheus.Counter{},
	}
	s.settled = sync.NewCond(&s.mu)
	return s
}

func (s *sink) addEndpoint(rawURL string, client *storage.Client, shards int) {
	ep := &endpoint{url: rawURL, client: client, queues: make([][]*batch, shards), inflight: make([]*batch, shards)}
	for range shards {
		ep.notify = append(ep.notify, make(chan struct{}, 1))
	}
	s.endpoints = append(s.endpoints, ep)
}

// push queues b on every endpoint's shard queue, dropping the oldest queued batches while
// the storage has more than maxPending samples pending.
func (s *sink) push(shard int, b *batch) {
	s.mu.Lock()
	for _, ep := range s.endpoints {
		s.generated += b.samples
		s.pending += b.samples
		if b.history {
			s.histGenerated += b.samples
		}
		if b.held != heldNone {
			s.held[b.held].push(b.samples)
		}
		b.refs.Add(1) // the endpoint's, until settled or dropped
		ep.queues[shard] = append(ep.queues[shard], b)
		for s.pending > s.maxPending && s.liveLocked() { // catching up, the generator waits instead
			if !s.dropOldestLocked() {
				break
			}
		}
	}
	s.mu.Unlock()
	s.generatedC.Add(float64(b.samples) * float64(len(s.endpoints)))
	for _, ep := range s.endpoints {
		select {
		case ep.notify[shard] <- struct{}{}:
		default:
		}
	}
}

// dropOldestLocked drops the queued batch with the oldest samples; false when none is queued.
func (s *sink) dropOldestLocked() bool {
	var q *[]*batch
	for _, ep := range s.endpoints {
		for i := range ep.queues {
			if len(ep.queues[i]) > 0 && (q == nil || ep.queues[i][0].oldest < (*q)[0].oldest) {
				q = &ep.queues[i]
			}
		}
	}
	if q == nil {
		return false
	}
	b := (*q)[0]
	(*q)[0] = nil
	*q = (*q)[1:]
	s.settleBatchLocked(b, 0, reasonQueueFull)
	b.release()
	return true
}

// dropGenerated counts samples generated for every endpoint and dropped at once (invalid labels).
func (s *sink) dropGenerated(n int64, reason string, held uint8) {
	s.mu.Lock()
	copies := int64(len(s.endpoints))
	s.generated += n * copies
	s.pending += n * copies
	s.settleLocked(n*copies, reason)
	if held != heldNone {
		s.held[held].push(n * copies)
		s.held[held].settle(0, n*copies, reason)
	}
	s.mu.Unlock()
	s.generatedC.Add(float64(n * copies))
}

// settleBatchLocked settles b: acked of its samples acknowledged, the rest dropped for reason;
// in the history account too when b is history.
func (s *sink) settleBatchLocked(b *batch, acked int64, reason string) {
	if acked > 0 {
		s.settleLocked(acked, "")
	}
	if acked < b.samples {
		s.settleLocked(b.samples-acked, reason)
		s.notAcked.add(b.from, b.to)
	}
	if b.held != heldNone {
		s.held[b.held].settle(acked, b.samples-acked, reason)
	}
	if !b.history {
		return
	}
	s.histSettled += b.samples
	s.histAcked += acked
	s.checkHistoryDoneLocked()
}

// settleLocked moves n pending samples to acked (reason "") or dropped{reason}.
func (s *sink) settleLocked(n int64, reason string) {
	s.pending -= n
	s.settled.Broadcast()
	if reason == "" {
		s.acked += n
		s.lastAck = time.Now().UnixMilli()
		s.ackedC.Add(float64(n))
		return
	}
	s.dropped[reason] += n
	c, ok := s.droppedC[reason]
	if !ok {
		c = s.m.dropped.WithLabelValues(s.name, reason)
		s.droppedC[reason] = c
	}
	c.Add(float64(n))
}

// next waits for the shard's next batch. It returns false when the generator is done and the
// queue is empty, or when stop is closed (the drain deadline).
func (s *sink) next(ep *endpoint, shard int, genDone, stop <-chan struct{}) (*batch, bool) {
	for {
		s.mu.Lock()
		if q := ep.queues[shard]; len(q) > 0 {
			b := q[0]
			q[0] = nil
			ep.queues[shard] = q[1:]
			ep.inflight[shard] = b
			s.mu.Unlock()
			return b, true
		}
		s.mu.Unlock()
		select {
		case <-stop:
			return nil, false
		default:
		}
		select {
		case <-ep.notify[shard]:
		case <-stop:
			return nil, false
		case <-genDone:
			s.mu.Lock()
			empty := len(ep.queues[shard]) == 0
			s.mu.Unlock()
			if empty {
				return nil, false
			}
		}
	}
}

// senderConfig are the settings every sender shares.
type senderConfig struct {
	userAgent        string
	maxRetryDuration time.Duration
	minBackoff       time.Duration
	maxBackoff       time.Duration
	requestTimeout   time.Duration
}

// runSender sends the shard's batches one at a time, in order, until next says stop.
func (s *sink) runSender(ctx context.Context, ep *endpoint, shard int, cfg senderConfig, genDone, stop <-chan struct{}) {
	for {
		b, ok := s.next(ep, shard, genDone, stop)
		if !ok {
			return
		}
		o, settled := s.send(ctx, ep, b, cfg)
		if !settled {
			// ctx ended (the drain's deadline): the batch stays in flight, still pending and
			// still the oldest Settled sees. Taking the next one would put it in its place,
			// and the samples of this one would read as settled (issue 37: a storage that
			// stalled from the start was read back over its pending samples).
			return
		}
		s.mu.Lock()
		ep.inflight[shard] = nil
		s.settleBatchLocked(b, o.acked, o.reason)
		if o.unconfirmed {
			s.unconfirmed += o.acked
		}
		s.mu.Unlock()
		b.release()
	}
}

// outcome is how a batch settled: acked of its samples acknowledged, the rest dropped for
// reason.
type outcome struct {
	acked  int64
	reason string
	// unconfirmed: a remote write 2.0 2xx without the written headers acked the batch.
	unconfirmed bool
}

// send delivers b (deliver: retries with backoff or the server's Retry-After until
// maxRetryDuration). It returns the outcome, or settled=false when ctx ended first: the
// samples stay pending.
func (s *sink) send(ctx context.Context, ep *endpoint, b *batch, cfg senderConfig) (o outcome, settled bool) {
	ans, how := cfg.deliver(ctx, func(timeout time.Duration) (answer, error) {
		return s.post(ctx, ep, b, cfg.userAgent, timeout)
	}, s.countRetry)
	switch {
	case how == canceled:
		return outcome{}, false
	case how == gaveUp:
		return outcome{reason: reasonRetryTimeout}, true
	case ans.status/100 == 2:
		return s.confirmed(b, ans, reasonPartialWrite), true
	}
	// A 3xx or 4xx: a 2.0 receiver may have written part of the batch before it refused the rest.
	return s.confirmed(b, ans, "http_"+strconv.Itoa(ans.status)), true
}

func (s *sink) countRetry() {
	s.mu.Lock()
	s.retries++
	s.mu.Unlock()
	s.retriesC.Inc()
}

// confirmed settles an answered batch: what the answer says was written is acked, the rest
// dropped for rest. Remote write 1.0 has no such count, so a 2xx acks the whole batch and any
// other answer none of it; a 2.0 answer without the count is taken the same way, and a 2xx
// without it is marked unconfirmed.
func (s *sink) confirmed(b *batch, ans answer, rest string) outcome {
	ok := ans.status/100 == 2
	switch {
	case ans.written >= 0:
		return outcome{acked: min(ans.written, b.samples), reason: rest}
	case ok:
		return outcome{acked: b.samples, unconfirmed: s.wire == wireRW2}
	}
	return outcome{reason: rest}
}

// answer is what a storage's reply says of a batch.
type answer struct {
	status     int
	retryAfter time.Duration
	// written is the samples of the batch the receiver says it stored, -1 when it does not
	// say: a 2.0 receiver's written headers, or an OTLP 2xx less its rejected points.
	written int64
}

// post sends one request and reads the answer; it counts the request by status.
func (s *sink) post(ctx context.Context, ep *endpoint, b *batch, userAgent string, timeout time.Duration) (answer, error) {
	ans := answer{written: -1}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, ep.url, nil)
	if err != nil {
		return ans, err
	}
	req.Body, req.ContentLength = newBody(b), int64(len(b.data))
	req.GetBody = func() (io.ReadCloser, error) { return newBody(b), nil } // a retry on a stale connection
	setHeaders(req.Header, s.wire, userAgent)
	resp, err := ep.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.count("network_error", len(b.data), redactErr(err, ep.url), "")
		}
		return ans, err
	}
	limit := int64(512) // enough of an error to log
	otlpOK := (s.wire == wireOTLP || s.wire == wireOTLPGzip) && resp.StatusCode/100 == 2
	if otlpOK {
		limit = 64 << 10 // a partial success, message included
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	detail := string(body)
	s.limits.note(resp.StatusCode, detail, s.log)
	if resp.StatusCode/100 == 3 {
		detail = resp.Header.Get("Location")
	}
	ans.status, ans.retryAfter = resp.StatusCode, retryAfter(resp)
	switch {
	case s.wire == wireRW2:
		ans.written = writtenRW2(resp.Header)
	case otlpOK:
		rejected, msg := partialSuccess(body)
		ans.written = b.samples - rejectedSamples(rejected, b.points, b.samples)
		if rejected > 0 && s.firstTime("otlp_partial_success") {
			s.log.Warn("OTLP partial success: the rejected points' samples are dropped (partial_write)",
				"rejected_points", rejected, "message", msg)
		}
	}
	if s.wire == wireRW2 && resp.StatusCode/100 == 2 {
		switch {
		case ans.written < 0 && s.firstTime("rw2_unconfirmed"):
			s.log.Warn("receiver did not confirm RW 2.0 writes: a 2xx without X-Prometheus-Remote-Write-Samples-Written, as a 1.0-only receiver answers; the samples are counted as acked, unconfirmed")
		case ans.written >= 0 && ans.written < b.samples && s.firstTime("rw2_partial"):
			s.log.Warn("receiver confirmed fewer samples than sent; the rest are dropped (partial_write)",
				"sent", b.samples, "written", ans.written)
		}
	}
	s.count(strconv.Itoa(resp.StatusCode), len(b.data), "", detail)
	return ans, nil
}

// count records one request; the first of each status per storage is logged with its detail,
// so a user sees why a storage refuses data without a log line per request.
func (s *sink) count(status string, bytes int, errText, detail string) {
	s.mu.Lock()
	s.requests[status]++
	s.bytesSent += int64(bytes)
	first := !s.seen[status]
	s.seen[status] = true
	c, ok := s.requestsC[status]
	if !ok {
		c = s.m.requests.WithLabelValues(s.name, status)
		s.requestsC[status] = c
	}
	s.mu.Unlock()
	c.Inc()
	s.sentBytesC.Add(float64(bytes))
	if !first || (len(status) == 3 && status[0] == '2') {
		return
	}
	switch {
	case status == "network_error":
		s.log.Warn("remote write network error; retrying until maxRetryDuration, then dropping (retry_timeout)", "err", errText)
	case status == "429" || status[0] == '5':
		s.log.Warn("remote write refused; retrying with backoff until maxRetryDuration", "status", status, "body", detail)
	case status[0] == '3':
		s.log.Error("remote write redirected and not followed; samples dropped: a POST is not redirected, set writeURL to the final URL",
			"status", status, "reason", "http_"+status, "location", detail)
	case status == "415" && s.wire == wireRW2:
		s.log.Error("storage does not take remote write 2.0 (415 Unsupported Media Type); samples dropped: set protocol: prometheus-rw1 for it",
			"status", status, "reason", "http_"+status, "body", detail)
	default:
		s.log.Error("remote write rejected; samples dropped: check the storage's writeURL, auth and limits",
			"status", status, "reason", "http_"+status, "body", detail)
	}
}

// firstTime reports whether key happens to the storage for the first time: what is logged
// once per storage.
func (s *sink) firstTime(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := !s.seen[key]
	s.seen[key] = true
	return first
}

// redactErr keeps the URL's secrets (user info, secret query parameters) out of error texts.
// Of a *url.Error, what Client.Do returns, only the operation and the cause are kept (the log
// names the storage); the URL is redacted wherever else it appears.
func redactErr(err error, raw string) string {
	msg := err.Error()
	if ue, ok := errors.AsType[*url.Error](err); ok {
		msg = fmt.Sprintf("%s: %v", ue.Op, ue.Err)
	}
	return strings.ReplaceAll(msg, raw, config.RedactURL(raw))
}

// retryAfter reads a 429's or 503's Retry-After, in seconds or as an HTTP date.
func retryAfter(resp *http.Response) time.Duration {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}

// lagLocked is now minus the scheduled time of the oldest pending sample of the storage, 0
// when nothing is pending.
func (s *sink) lagLocked(nowMs int64) float64 {
	oldest := s.oldestLocked()
	if oldest < 0 {
		return 0
	}
	return max(0, float64(nowMs-oldest)/1000)
}
