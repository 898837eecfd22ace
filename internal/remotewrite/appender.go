package remotewrite

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/tsbench/tsbench/internal/workload"
)

// encoder builds one protocol's requests from the samples a shardAppender gets: encoderV1
// (remote write 1.0, encode.go), encoderV2 (2.0, encode_rw2.go), encoderOTLP (OTLP/HTTP,
// encode_otlp.go), or a fanout over several when one lane's storages take several. None
// allocates per sample once its buffers have grown.
//
// What only some encoders can do is an interface of its own, found by type assertion:
// workload.SeriesAppender (the prepared series' fast path: 1.0 and 2.0, with templates),
// workload.ExemplarAppender, workload.CreatedAppender (2.0 and OTLP carry a start
// timestamp, 1.0 has no field for it) and metadataRequester (1.0 sends metadata in requests
// of its own; 2.0 and OTLP carry it on every series).
type encoder interface {
	workload.Appender          // a float sample
	workload.HistogramAppender // a native histogram
	// open is the open request's samples, its oldest sample's timestamp (ms), and whether
	// the request may end after the last sample: an OTLP summary or histogram point is
	// never split.
	open() (samples int, oldest int64, whole bool)
	// takeInvalid adds to n, per wire it encodes for, the samples refused for invalid
	// labels since the last call, which are in no request.
	takeInvalid(n *[wires]int64)
	// flush puts the open request's body, uncompressed, in out at each wire it encodes for,
	// and starts the next request. The body is valid until the next sample.
	flush(out *[wires]request)
}

// request is an encoded request, before compression.
type request struct {
	body   []byte
	points int64 // OTLP data points; a remote write request's samples
}

// newEncoder makes the encoder of the protocols of the wires in use: one, or a fanout.
// tpl and v2tpl, when not nil, give 1.0 and 2.0 the fast path; the writer makes them only
// when no storage takes OTLP, which has none.
func newEncoder(use [wires]bool, meta metadata, tpl *templates, v2tpl *v2Templates) encoder {
	var encs []encoder
	if use[wireRW1] {
		encs = append(encs, &encoderV1{tpl: tpl})
	}
	if use[wireRW2] {
		encs = append(encs, newEncoderV2(meta, v2tpl))
	}
	if use[wireOTLP] || use[wireOTLPGzip] {
		encs = append(encs, newEncoderOTLP(meta))
	}
	if len(encs) == 1 {
		return encs[0]
	}
	return newFanout(encs)
}

// fanout encodes each sample once per protocol a lane's storages take (with no history,
// one lane feeds every storage). Every encoder gets the same samples and checks labels
// alike, so their counts agree, and their requests end together.
type fanout struct {
	encs      []encoder
	series    []workload.SeriesAppender   // every encoder's fast path
	exemplars []workload.ExemplarAppender // of those that send exemplars
	created   []workload.CreatedAppender  // of those that send a start timestamp
}

func newFanout(encs []encoder) *fanout {
	f := &fanout{encs: encs}
	for _, e := range encs {
		if s, ok := e.(workload.SeriesAppender); ok {
			f.series = append(f.series, s)
		}
		if x, ok := e.(workload.ExemplarAppender); ok {
			f.exemplars = append(f.exemplars, x)
		}
		if c, ok := e.(workload.CreatedAppender); ok {
			f.created = append(f.created, c)
		}
	}
	return f
}

func (f *fanout) Append(labels []workload.Label, t int64, v float64) {
	for _, e := range f.encs {
		e.Append(labels, t, v)
	}
}

func (f *fanout) AppendHistogram(labels []workload.Label, t int64, h *workload.Histogram) {
	for _, e := range f.encs {
		e.AppendHistogram(labels, t, h)
	}
}

// open is the first encoder's count: they all agree. The request may end only where every
// encoder's may.
func (f *fanout) open() (samples int, oldest int64, whole bool) {
	whole = true
	for i, e := range f.encs {
		n, o, w := e.open()
		if i == 0 {
			samples, oldest = n, o
		}
		whole = whole && w
	}
	return samples, oldest, whole
}

func (f *fanout) takeInvalid(n *[wires]int64) {
	for _, e := range f.encs {
		e.takeInvalid(n)
	}
}

func (f *fanout) flush(out *[wires]request) {
	for _, e := range f.encs {
		e.flush(out)
	}
}

// StartTarget and AppendSeries are used only when every encoder has the fast path (see
// shardAppender.appender).
func (f *fanout) StartTarget(values []string) {
	for _, s := range f.series {
		s.StartTarget(values)
	}
}

func (f *fanout) AppendSeries(s int, t int64, v float64) {
	for _, e := range f.series {
		e.AppendSeries(s, t, v)
	}
}

func (f *fanout) SetExemplar(ex *workload.Exemplar) {
	for _, e := range f.exemplars {
		e.SetExemplar(ex)
	}
}

func (f *fanout) SetCreated(ms int64) {
	for _, e := range f.created {
		e.SetCreated(ms)
	}
}

// shardAppender batches the samples one worker generates for one shard, flushing at
// maxSamples mid-scrape if need be. Its encoder encodes each sample once per protocol the
// lane's storages take; each request is compressed once per wire and pushed to every
// storage that takes the wire.
type shardAppender struct {
	w          *Writer
	ln         *lane
	use        [wires]bool // the wire encodings the lane's storages take
	shard      int
	history    bool // the worker is catching up: its batches are history
	openOldest *atomic.Int64
	enc        encoder
	// The encoder's optional abilities, nil where it has none.
	series    workload.SeriesAppender // only when the writer has templates
	exemplars workload.ExemplarAppender
	created   workload.CreatedAppender
	invalid   [wires]int64   // takeInvalid's, reused
	out       [wires]request // flush's, reused
	pk        packer
	// A held kind's appender (series.go) dates its batches by when they were due to be sent,
	// not by their old samples: lag is the storage's, not the delay held by design.
	held          uint8
	due, firstDue int64
	// from and to are the open batch's smallest and largest sample timestamps (batch);
	// MaxInt64 and MinInt64 while it is empty.
	from, to int64
}

func (w *Writer) newShardAppender(ln *lane, shard int, openOldest *atomic.Int64, history bool) *shardAppender {
	// Only the lane's own storages' encodings: with history, each storage's lane encodes its
	// protocol alone.
	a := &shardAppender{w: w, ln: ln, use: ln.use, shard: shard, openOldest: openOldest, history: history, from: math.MaxInt64, to: math.MinInt64}
	a.pk.snappy = w.compress
	a.enc = newEncoder(ln.use, w.meta, w.tpl, w.v2tpl)
	if w.tpl != nil { // the workload names its series and no storage takes OTLP
		a.series, _ = a.enc.(workload.SeriesAppender)
	}
	a.exemplars, _ = a.enc.(workload.ExemplarAppender)
	a.created, _ = a.enc.(workload.CreatedAppender)
	return a
}

// appender is what the generator is given: a itself when its encoder takes the fast path
// (workload.SeriesAppender), else a wrapper without it.
func (a *shardAppender) appender() workload.Appender {
	if a.series != nil {
		return a
	}
	return labelsAppender{a}
}

func (a *shardAppender) Append(labels []workload.Label, t int64, v float64) {
	a.enc.Append(labels, t, v)
	a.appended(t)
}

func (a *shardAppender) AppendHistogram(labels []workload.Label, t int64, h *workload.Histogram) {
	a.enc.AppendHistogram(labels, t, h)
	a.appended(t)
}

// StartTarget and AppendSeries take the generator's fast path (workload.SeriesAppender),
// offered only when the encoder has it (appender).
func (a *shardAppender) StartTarget(values []string) { a.series.StartTarget(values) }

func (a *shardAppender) AppendSeries(s int, t int64, v float64) {
	a.series.AppendSeries(s, t, v)
	a.appended(t)
}

// SetExemplar gives the exemplar of the next sample to the encoder.
func (a *shardAppender) SetExemplar(ex *workload.Exemplar) {
	if a.exemplars != nil {
		a.exemplars.SetExemplar(ex)
	}
}

// SetCreated gives the target's process start to the encoder, when its protocol sends it.
func (a *shardAppender) SetCreated(ms int64) {
	if a.created != nil {
		a.created.SetCreated(ms)
	}
}

var (
	_ workload.SeriesAppender    = (*shardAppender)(nil)
	_ workload.HistogramAppender = (*shardAppender)(nil)
	_ workload.ExemplarAppender  = (*shardAppender)(nil)
	_ workload.CreatedAppender   = (*shardAppender)(nil)
)

func (a *shardAppender) appended(t int64) {
	n, _, whole := a.enc.open()
	if n == 1 {
		a.firstDue = a.due
		a.openOldest.Store(t)
	}
	a.from, a.to = min(a.from, t), max(a.to, t)
	if n >= a.w.maxSamples && whole {
		a.flush()
	}
}

// dropInvalid counts the samples refused for invalid labels since the last call as dropped.
// Every encoder checks labels alike, so each storage's count is its own encoder's.
func (a *shardAppender) dropInvalid() {
	a.invalid = [wires]int64{}
	a.enc.takeInvalid(&a.invalid)
	for _, s := range a.ln.sinks {
		if n := a.invalid[s.wire]; n > 0 {
			s.dropGenerated(n, reasonInvalidLabels, a.held)
		}
	}
}

// flush compresses the open batch once per wire encoding in use and hands each to the
// storages that take it.
func (a *shardAppender) flush() {
	a.dropInvalid()
	samples, oldest, _ := a.enc.open()
	if samples == 0 {
		return
	}
	a.enc.flush(&a.out)
	for wr := range wires {
		if r := a.out[wr]; a.use[wr] && r.body != nil {
			a.push(wr, a.pk.pack(wr, r.body), int64(samples), r.points, oldest)
		}
	}
	a.out = [wires]request{}
	a.openOldest.Store(0)
	a.from, a.to = math.MaxInt64, math.MinInt64
}

// packer compresses request bodies as their wire sends them, into buffers it reuses.
type packer struct {
	snappy func(dst, src []byte) []byte // s2.EncodeSnappy, or EncodeSnappyBetter
	packed []byte                       // the compressor needs its worst case, a batch keeps only what it used
	gz     gzipper
}

// pack is body compressed as wire wr sends it: snappy for remote write, gzip or nothing for
// OTLP. The result is valid until the next call.
func (p *packer) pack(wr wire, body []byte) []byte {
	switch wr {
	case wireRW1, wireRW2:
		if n := s2.MaxEncodedLen(len(body)); cap(p.packed) < n {
			p.packed = make([]byte, n)
		}
		return p.snappy(p.packed[:cap(p.packed)], body)
	case wireOTLPGzip:
		return p.gz.compress(body)
	}
	return body
}

// push copies data into a batch and queues it for every storage that takes the wire.
func (a *shardAppender) push(wr wire, data []byte, samples, points, oldest int64) {
	if a.held != heldNone {
		oldest = a.firstDue
	}
	b := a.w.newBatch(data, samples, oldest)
	b.points, b.history, b.held, b.from, b.to = points, a.history, a.held, a.from, a.to
	if !a.history && a.held == heldNone { // a history batch is behind the clock by design, a held one by its delay
		a.ln.noteDrift(time.Now().UnixMilli(), oldest)
	}
	for _, s := range a.ln.sinks {
		if s.wire == wr {
			s.push(a.shard, b)
		}
	}
	b.release() // the generator's reference
}

// labelsAppender hides shardAppender's fast path (workload.SeriesAppender) from a workload
// that does not name its series, or when a storage takes a protocol whose encoder needs every
// label of every sample (OTLP).
type labelsAppender struct{ a *shardAppender }

func (l labelsAppender) Append(labels []workload.Label, t int64, v float64) { l.a.Append(labels, t, v) }

func (l labelsAppender) AppendHistogram(labels []workload.Label, t int64, h *workload.Histogram) {
	l.a.AppendHistogram(labels, t, h)
}

func (l labelsAppender) SetExemplar(ex *workload.Exemplar) { l.a.SetExemplar(ex) }

func (l labelsAppender) SetCreated(ms int64) { l.a.SetCreated(ms) }

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
