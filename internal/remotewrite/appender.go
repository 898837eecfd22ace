package remotewrite

import (
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/tsbench/tsbench/internal/workload"
)

// shardAppender batches the samples one worker generates for one shard, flushing at
// maxSamples mid-scrape if need be. It encodes each sample once per protocol some storage
// takes; every encoder gets the same samples, so their counts agree.
type shardAppender struct {
	w          *Writer
	ln         *lane
	use        [wires]bool // the wire encodings the lane's storages take
	shard      int
	history    bool // the worker is catching up: its batches are history
	openOldest *atomic.Int64
	enc        encoderV1    // remote write 1.0
	v2         *encoderV2   // remote write 2.0, when a storage takes it
	otlp       *encoderOTLP // OTLP, when a storage takes it
	packed     []byte       // reused: the compressor needs its worst case, the batch keeps only what it used
	gz         gzipper
	// A held kind's appender (series.go) dates its batches by when they were due to be sent,
	// not by their old samples: lag is the storage's, not the delay held by design.
	held          uint8
	due, firstDue int64
}

func (w *Writer) newShardAppender(ln *lane, shard int, openOldest *atomic.Int64, history bool) *shardAppender {
	// Only the lane's own storages' encodings: with history, each storage's lane encodes its
	// protocol alone.
	a := &shardAppender{w: w, ln: ln, use: ln.use, shard: shard, openOldest: openOldest, history: history}
	a.enc.tpl = w.tpl
	if a.use[wireRW2] {
		a.v2 = newEncoderV2(w.meta, w.v2tpl)
	}
	if a.use[wireOTLP] || a.use[wireOTLPGzip] {
		a.otlp = newEncoderOTLP(w.meta)
	}
	return a
}

func (a *shardAppender) Append(labels []workload.Label, t int64, v float64) {
	if a.use[wireRW1] {
		a.enc.Append(labels, t, v)
	}
	if a.v2 != nil {
		a.v2.Append(labels, t, v)
	}
	if a.otlp != nil {
		a.otlp.Append(labels, t, v)
	}
	a.appended(t)
}

// open is the samples in the open batch and the oldest one's timestamp.
func (a *shardAppender) open() (samples int, oldest int64) {
	switch {
	case a.use[wireRW1]:
		return a.enc.samples, a.enc.oldest
	case a.v2 != nil:
		return a.v2.samples, a.v2.oldest
	case a.otlp != nil:
		return a.otlp.samples, a.otlp.oldest
	}
	return 0, 0
}

// StartTarget and AppendSeries take the generator's fast path (workload.SeriesAppender),
// offered only when every encoder in use has its templates (1.0, 2.0).
func (a *shardAppender) StartTarget(values []string) {
	if a.use[wireRW1] {
		a.enc.StartTarget(values)
	}
	if a.v2 != nil {
		a.v2.StartTarget(values)
	}
}

func (a *shardAppender) AppendSeries(s int, t int64, v float64) {
	if a.use[wireRW1] {
		a.enc.AppendSeries(s, t, v)
	}
	if a.v2 != nil {
		a.v2.AppendSeries(s, t, v)
	}
	a.appended(t)
}

func (a *shardAppender) appended(t int64) {
	n, _ := a.open()
	if n == 1 {
		a.firstDue = a.due
		a.openOldest.Store(t)
	}
	// An OTLP summary or histogram point is open until a sample of another series comes: a
	// batch ends after it, never within it.
	if n >= a.w.maxSamples && (a.otlp == nil || !a.otlp.fam.open) {
		a.flush()
	}
}

// dropInvalid counts the samples refused for invalid labels since the last call as dropped.
// Every encoder checks labels alike, so each storage's count is its own encoder's.
func (a *shardAppender) dropInvalid() {
	var invalid [wires]int64
	invalid[wireRW1] = int64(a.enc.invalid)
	if a.v2 != nil {
		invalid[wireRW2] = int64(a.v2.invalid)
	}
	if a.otlp != nil {
		invalid[wireOTLP], invalid[wireOTLPGzip] = int64(a.otlp.invalid), int64(a.otlp.invalid)
	}
	for _, s := range a.ln.sinks {
		if n := invalid[s.wire]; n > 0 {
			s.dropGenerated(n, reasonInvalidLabels, a.held)
		}
	}
	a.enc.invalid = 0
	if a.v2 != nil {
		a.v2.invalid = 0
	}
	if a.otlp != nil {
		a.otlp.invalid = 0
	}
}

// flush compresses the open batch once per wire encoding in use and hands each to the
// storages that take it.
func (a *shardAppender) flush() {
	a.dropInvalid()
	samples, oldest := a.open()
	if samples == 0 {
		return
	}
	n, points := int64(samples), int64(samples)
	if a.use[wireRW1] {
		a.push(wireRW1, a.snappy(a.enc.buf), n, points, oldest)
		a.enc.reset()
	}
	if a.v2 != nil {
		a.push(wireRW2, a.snappy(a.v2.body()), n, points, oldest)
		a.v2.reset()
	}
	if a.otlp != nil {
		body, points := a.otlp.body(), int64(a.otlp.points)
		if a.use[wireOTLP] {
			a.push(wireOTLP, body, n, points, oldest)
		}
		if a.use[wireOTLPGzip] {
			a.push(wireOTLPGzip, a.gz.compress(body), n, points, oldest)
		}
		a.otlp.reset()
	}
	a.openOldest.Store(0)
}

// snappy compresses body into the appender's reused buffer.
func (a *shardAppender) snappy(body []byte) []byte {
	if n := s2.MaxEncodedLen(len(body)); cap(a.packed) < n {
		a.packed = make([]byte, n)
	}
	return a.w.compress(a.packed[:cap(a.packed)], body)
}

// push copies data into a batch and queues it for every storage that takes the wire.
func (a *shardAppender) push(wire wire, data []byte, samples, points, oldest int64) {
	if a.held != heldNone {
		oldest = a.firstDue
	}
	b := a.w.newBatch(data, samples, oldest)
	b.points, b.history, b.held = points, a.history, a.held
	if !a.history && a.held == heldNone { // a history batch is behind the clock by design, a held one by its delay
		a.ln.noteDrift(time.Now().UnixMilli(), oldest)
	}
	for _, s := range a.ln.sinks {
		if s.wire == wire {
			s.push(a.shard, b)
		}
	}
	b.release() // the generator's reference
}

// labelsAppender hides shardAppender's fast path (workload.SeriesAppender) from a workload
// that does not name its series, or when a storage takes a protocol whose encoder needs every
// label of every sample (2.0, OTLP).
type labelsAppender struct{ a *shardAppender }

func (l labelsAppender) Append(labels []workload.Label, t int64, v float64) { l.a.Append(labels, t, v) }

// newBatch copies data into a batch from the pool, holding one reference for the caller.
func (w *Writer) newBatch(data []byte, samples, oldest int64) *batch {
	b, _ := w.batches.Get().(*batch)
	if b == nil {
		b = &batch{pool: &w.batches}
	}
	if cap(b.data) < len(data) {
		b.data = make([]byte, len(data), len(data)+len(data)/8) // room for the next, a little larger
	}
	b.data = append(b.data[:0], data...)
	b.samples, b.oldest, b.history, b.held = samples, oldest, false, heldNone
	b.refs.Store(1)
	return b
}

// AppendHistogram encodes h once per protocol some storage takes, as Append a float.
func (a *shardAppender) AppendHistogram(labels []workload.Label, t int64, h *workload.Histogram) {
	if a.use[wireRW1] {
		a.enc.AppendHistogram(labels, t, h)
	}
	if a.v2 != nil {
		a.v2.AppendHistogram(labels, t, h)
	}
	if a.otlp != nil {
		a.otlp.AppendHistogram(labels, t, h)
	}
	a.appended(t)
}

func (l labelsAppender) AppendHistogram(labels []workload.Label, t int64, h *workload.Histogram) {
	l.a.AppendHistogram(labels, t, h)
}

// SetExemplar gives the exemplar to every encoder in use.
func (a *shardAppender) SetExemplar(ex *workload.Exemplar) {
	if a.use[wireRW1] {
		a.enc.SetExemplar(ex)
	}
	if a.v2 != nil {
		a.v2.SetExemplar(ex)
	}
	if a.otlp != nil {
		a.otlp.SetExemplar(ex)
	}
}

func (l labelsAppender) SetExemplar(ex *workload.Exemplar) { l.a.SetExemplar(ex) }

// SetCreated gives the process start to the encoders that send it.
func (a *shardAppender) SetCreated(ms int64) {
	if a.v2 != nil {
		a.v2.SetCreated(ms)
	}
	if a.otlp != nil {
		a.otlp.SetCreated(ms)
	}
}

func (l labelsAppender) SetCreated(ms int64) { l.a.SetCreated(ms) }

var _ workload.CreatedAppender = (*shardAppender)(nil)
