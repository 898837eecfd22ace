package remotewrite

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// Workload is what the writer uses of *workload.Generator.
type Workload interface {
	Targets() int
	SeriesPerTarget() int
	ScrapeInterval() time.Duration
	ScrapeTime(target int, k int64) int64
	Scrape(app workload.Appender, target int, k int64) (values, staleMarkers int)
}

// profiled is a Workload that tells its profile's series (their types, help and units), which
// remote write 2.0 and OTLP send: *workload.Generator.
type profiled interface {
	Series(s int) workload.Series
}

// Writer generates the workload and writes it to every storage: once for all of them, or,
// with history, once per storage (see lane).
type Writer struct {
	// DrainTimeout bounds how long pending samples are still sent after the load stops.
	DrainTimeout time.Duration
	// FlushAfter sends a batch that is not full once its oldest sample is this old.
	FlushAfter time.Duration
	// End, when set, is where generation stops: every scrape scheduled before it is generated,
	// even when ctx ends a moment before the generators' last look, and none at or after it. So
	// processes given the same workload start and End (shards, or a run and its shards)
	// generate exactly the same samples.
	End time.Time
	// From, when set, is where generation starts: no scrape scheduled before it is made (a
	// run resumed from a checkpoint, resume.go).
	From  time.Time
	bases map[string]*results.Write // per storage: the account of the checkpoint resumed from

	work       Workload
	sinks      []*sink // in storage name order
	byName     map[string]*sink
	shards     int // writeConcurrency: a sender per shard and endpoint
	workers    int // generateWorkers
	maxSamples int
	compress   func(dst, src []byte) []byte
	tpl        *templates                 // nil when the workload does not name its series, or a storage takes OTLP
	v2tpl      *v2Templates               // the same for remote write 2.0, when a storage takes it
	use        [wires]bool                // the wire encodings some storage takes
	meta       metadata                   // the profile's types, help and units, for 2.0 and OTLP
	metaSend   map[string]*metadataSender // 1.0 storages' metadata requests, with sendMetadata
	batches    sync.Pool                  // *batch, with its buffer
	sender     senderConfig
	log        *slog.Logger
	m          *Metrics
	copies     map[string]int

	lanes    []*lane          // one for every storage, or one per storage with history
	laneOf   map[string]*lane // by storage name
	duration time.Duration    // of each storage's live phase, with history
	skew     int64            // catchUpSkew, ms

	start, stop atomic.Int64  // unix ms: load start and the moment every lane stopped generating
	genDone     chan struct{} // closed when every lane stopped generating
	behindLanes atomic.Int32  // lanes not caught up yet
	allCaught   chan struct{} // closed when the last lane caught up
}

// New builds one pipeline per storage that writes: one endpoint per URL of its writeURL list
// and per writeURLReplicas copy.
func New(cfg *config.Config, wl Workload, logger *slog.Logger, m *Metrics) (*Writer, error) {
	w := &Writer{
		DrainTimeout: 30 * time.Second,
		FlushAfter:   time.Second,
		work:         wl,
		byName:       map[string]*sink{},
		shards:       cfg.WriteConcurrency,
		workers:      cfg.GenerateWorkers,
		maxSamples:   cfg.MaxSamplesPerRequest,
		compress:     s2.EncodeSnappy,
		log:          logger.With("component", "remotewrite"),
		m:            m,
		copies:       map[string]int{},
		laneOf:       map[string]*lane{},
		duration:     cfg.Duration,
		skew:         catchUpSkew(cfg.ScrapeInterval),
		genDone:      make(chan struct{}),
		allCaught:    make(chan struct{}),
		sender: senderConfig{
			userAgent:        "tsbench/" + version(),
			maxRetryDuration: cfg.MaxRetryDuration,
			minBackoff:       30 * time.Millisecond, // as Prometheus' min_backoff
			maxBackoff:       5 * time.Second,       // as Prometheus' max_backoff
			requestTimeout:   30 * time.Second,
		},
	}
	if w.workers < 1 { // a config built in code without Default
		w.workers = 1
	}
	if cfg.Compression == config.CompressionBetter {
		w.compress = s2.EncodeSnappyBetter
	}
	for _, name := range cfg.StorageNames() {
		if st := cfg.RemoteStorages[name]; !st.DisableWrite {
			w.use[wireOf(st)] = true
		}
	}
	if ps, ok := wl.(profiled); ok {
		series := make([]workload.Series, wl.SeriesPerTarget())
		for i := range series {
			series[i] = ps.Series(i)
		}
		w.meta = newMetadata(series)
	}
	// The 1.0 and 2.0 encoders' prepared series take the generator's label-less fast path,
	// which the OTLP encoder cannot: with it, every encoder gets each sample's labels.
	if ns, ok := wl.(namedSeries); ok && !w.use[wireOTLP] && !w.use[wireOTLPGzip] {
		w.tpl = newTemplates(ns)
		if w.use[wireRW2] {
			w.v2tpl = newV2Templates(ns, w.meta)
		}
	}
	for _, name := range cfg.StorageNames() {
		st := cfg.RemoteStorages[name]
		if st.DisableWrite {
			continue
		}
		client, err := storage.NewClient(name, st, storage.Write, cfg.WriteConcurrency)
		if err != nil {
			return nil, err
		}
		// A redirect is answered, not followed: Go would re-send a POST as a GET after a 301
		// or 302. send drops the batch with the status as reason.
		client.HTTP.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		s := newSink(name, wireOf(st), cfg.MaxPendingSamples, w.log.With("storage", name), m)
		s.proto = st.WriteProtocol()
		for _, raw := range st.WriteURLs() {
			n := cfg.URLReplicas(name)
			for r := range n {
				u, err := replicaURL(raw, r, n)
				if err != nil {
					return nil, fmt.Errorf("remoteStorages.%s.writeURL: %w", name, err)
				}
				s.addEndpoint(u, client, w.shards)
			}
		}
		w.copies[name] = len(s.endpoints)
		w.sinks = append(w.sinks, s)
		w.byName[name] = s
	}
	w.metaSend = newMetadataSenders(cfg.SendMetadata, w.sinks, w.meta, w.compress)
	if cfg.History > 0 {
		for _, s := range w.sinks {
			s.catchingUp = true
			w.addLane([]*sink{s}, true)
		}
	} else if len(w.sinks) > 0 {
		w.addLane(w.sinks, false)
	}
	if w.behindLanes.Load() == 0 {
		close(w.allCaught)
	}
	if n := wl.Targets(); n < w.shards {
		w.log.Warn("fewer targets than writeConcurrency: a target's series all go through one connection, so only as many connections as targets carry data",
			"targets", n, "write_concurrency", w.shards)
	}
	return w, nil
}

func (w *Writer) addLane(sinks []*sink, catchUp bool) {
	ln := &lane{
		sinks: sinks, catchUp: catchUp, caughtUp: make(chan struct{}),
		openOldest: make([]atomic.Int64, w.shards*w.workers*haReplicas(w.work)),
		due:        make([]atomic.Int64, w.workers),
	}
	if catchUp {
		ln.behind.Store(int32(w.workers))
		w.behindLanes.Add(1)
		ln.onCaughtUp = func() {
			if w.behindLanes.Add(-1) == 0 {
				close(w.allCaught)
			}
		}
	} else {
		close(ln.caughtUp) // nothing to catch up: live from the start
	}
	w.lanes = append(w.lanes, ln)
	for _, s := range sinks {
		w.laneOf[s.name] = ln
		ln.use[s.wire] = true
	}
}

// replicaURL adds extra_label=url_replica=N when the data is sent more than once.
func replicaURL(raw string, replica, replicas int) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if replicas > 1 {
		q := u.Query()
		q.Add("extra_label", "url_replica="+strconv.Itoa(replica))
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// version is tsbench's module version for the User-Agent.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}

// Run generates and sends until ctx is done, then stops generating, drains pending samples
// for at most DrainTimeout, and returns nil. What is left is counted as pending.
func (w *Writer) Run(ctx context.Context) error {
	w.start.Store(time.Now().UnixMilli())
	for _, ln := range w.lanes {
		if !ln.catchUp { // live from the start, until End when set
			ln.caughtUpAt.Store(w.start.Load())
			if !w.End.IsZero() {
				ln.end.Store(w.End.UnixMilli())
			}
		}
	}
	stop := make(chan struct{}) // closed at the drain deadline
	sendCtx, cancelSend := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelSend()
	genDone := w.genDone
	var senders sync.WaitGroup
	for _, s := range w.sinks {
		for _, ep := range s.endpoints {
			for shard := range w.shards {
				senders.Go(func() { s.runSender(sendCtx, ep, shard, w.sender, genDone, stop) })
			}
		}
	}
	for _, ms := range w.metaSend {
		senders.Go(func() { ms.run(sendCtx, genDone, w.sender.userAgent) })
	}
	lagDone := make(chan struct{})
	var lagLoop sync.WaitGroup
	lagLoop.Go(func() { w.watchLag(lagDone) })

	var gens sync.WaitGroup
	for _, ln := range w.lanes {
		gens.Go(func() {
			var lg sync.WaitGroup
			nextDue := make([]int64, w.workers)
			if ln.catchUp {
				ln.holdUntilStarted()
			}
			for worker := range w.workers {
				lg.Go(func() { nextDue[worker] = w.generate(ctx, ln, worker) })
			}
			lg.Wait()
			ln.nextDue.Store(slices.Min(nextDue))
			ln.stopped.Store(time.Now().UnixMilli())
		})
	}
	gens.Wait()
	w.stop.Store(time.Now().UnixMilli())
	close(genDone)
	deadline := time.AfterFunc(w.DrainTimeout, func() { close(stop); cancelSend() })
	senders.Wait()
	if deadline.Stop() {
		close(stop)
	}
	close(lagDone)
	lagLoop.Wait()
	w.updateLag()
	return nil
}

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
	enc        encoder      // remote write 1.0
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

// generate walks the scrape schedule of the worker's targets in time order until ctx ends
// or the lane's end. It returns the scheduled time (ms) of the first scrape it did not
// generate. A worker of a lane catching up makes every scrape due at once, waiting for room
// before each (lane.waitRoom); once it finds nothing due it has caught up, and goes on at the
// wall clock's pace with the same cursor.
func (w *Writer) generate(ctx context.Context, ln *lane, worker int) (nextDue int64) {
	var targets []int
	for t := range w.work.Targets() {
		if workerOf(t, w.shards, w.workers) == worker {
			targets = append(targets, t)
		}
	}
	// In phase order, the targets come due one after another, cycle after cycle.
	slices.SortFunc(targets, func(a, b int) int {
		return int(w.work.ScrapeTime(a, 0) - w.work.ScrapeTime(b, 0))
	})
	behind := ln.catchUp
	// One appender per shard this worker feeds and HA replica (ha.go): each replica's
	// samples travel in requests of their own.
	ha := haReplicas(w.work)
	apps := make([]*shardAppender, w.shards*ha)
	appIdx := make([]int, len(targets))
	appOf := make([]workload.Appender, len(targets))
	for i, t := range targets {
		shard := shardOf(t, w.shards)
		a := appenderIndex(w.work, t, shard, ha)
		if apps[a] == nil {
			apps[a] = w.newShardAppender(ln, shard, &ln.openOldest[worker*w.shards*ha+a], behind)
		}
		appIdx[i], appOf[i] = a, apps[a]
		if w.tpl == nil { // no templates (or a protocol other than 1.0): no fast path
			appOf[i] = labelsAppender{apps[a]}
		}
	}
	hw, _ := w.work.(heldWorkload)
	if hw != nil && !hw.SeriesOn() {
		hw = nil // the default run: nothing held, no events
	}
	heldOf := make([]heldAppenders, len(apps))
	var lateOf, oooOf []workload.Appender
	if hw != nil {
		lateOn, oooOn := hw.HeldKinds()
		lateOf, oooOf = make([]workload.Appender, len(targets)), make([]workload.Appender, len(targets))
		for i := range targets {
			a := appIdx[i]
			if lateOn {
				lateOf[i] = w.heldAppender(&heldOf[a], heldLate, apps[a])
			}
			if oooOn {
				oooOf[i] = w.heldAppender(&heldOf[a], heldOOO, apps[a])
			}
		}
	}
	order := slices.Concat(apps, heldAppendersOf(heldOf))
	// flushAll sends the batches whose oldest sample is at or before olderThan, and counts
	// the samples refused for invalid labels, which are in no batch. The held kinds' batches
	// go after the on-time ones, so a sample held back follows the newer ones sent before it.
	flushAll := func(olderThan int64) {
		for _, a := range order {
			if a == nil {
				continue
			}
			a.dropInvalid()
			if n, oldest := a.open(); n > 0 && oldest <= olderThan {
				a.flush()
			}
		}
	}
	caughtUp := func() {
		flushAll(math.MaxInt64) // the last history batches
		for _, a := range order {
			if a != nil {
				a.history = false
			}
		}
		behind = false
		ln.workerCaughtUp(w.duration)
	}
	var from int64
	if !w.From.IsZero() {
		from = w.From.UnixMilli()
	}
	pos, k := skipBefore(from, len(targets), func(p int, k int64) int64 { return w.work.ScrapeTime(targets[p], k) })
	next := func() int64 {
		if len(targets) == 0 {
			return math.MaxInt64
		}
		return w.work.ScrapeTime(targets[pos], k)
	}
	if ln.catchUp {
		first := next()
		if first == math.MaxInt64 { // no targets
			first = 0
		}
		ln.setDue(worker, first)
		defer ln.setDue(worker, 0)
	}
	need := int64(2 * samplesPerScrape(w.work)) // a scrape's values and staleness markers
	// scrape generates every scrape due at or before limit and before the lane's end, in time
	// order. A worker still behind looks at the clock again when it reaches limit, waits for
	// room before each scrape, and has caught up when it finds nothing due.
	scrape := func(limit int64, stopOnCancel bool) {
		for {
			due := next()
			if end := ln.end.Load(); end > 0 && due >= end {
				return
			}
			if due > limit {
				if !behind {
					return
				}
				if limit = time.Now().UnixMilli(); due > limit {
					caughtUp()
				}
				continue
			}
			// Until the lane's history has settled, a worker that caught up waits too: its live
			// samples must neither push the history out (queue_full) nor run ahead of it.
			if ln.catchUp && ln.caughtUpAt.Load() == 0 && stopOnCancel && !ln.waitRoom(ctx, worker, apps, due, need, w.skew) {
				return
			}
			values, stale := w.work.Scrape(appOf[pos], targets[pos], k)
			ln.produced.Add(int64(values + stale))
			ln.stale.Add(int64(stale))
			if hw != nil {
				ln.held(hw, heldOf[appIdx[pos]], lateOf[pos], oooOf[pos], targets[pos], k, due)
			}
			if pos++; pos == len(targets) {
				pos, k = 0, k+1
			}
			if stopOnCancel && ctx.Err() != nil {
				return
			}
		}
	}
	step := min(100*time.Millisecond, w.work.ScrapeInterval())
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			if end := ln.end.Load(); end > 0 {
				if now := time.Now().UnixMilli(); now >= end {
					scrape(now, false) // the load ended at its end: what was due before it, exactly
				}
			}
			flushAll(math.MaxInt64)
			return next()
		case <-timer.C:
		}
		now := time.Now().UnixMilli()
		scrape(now, true)
		if end := ln.end.Load(); end > 0 && now >= end {
			flushAll(math.MaxInt64)
			return next()
		}
		flushAll(now - w.FlushAfter.Milliseconds())
		timer.Reset(step)
	}
}

// GeneratedBefore is, once Run returned, the time before which every scheduled scrape was
// generated: the generators look every 100 ms and stop mid-pass when the load ends, so the
// last scrapes due before the end may never have been made. A read-back that expects only
// samples scheduled before it expects exactly what was written.
func (w *Writer) GeneratedBefore() time.Time {
	before := int64(math.MaxInt64)
	for _, ln := range w.lanes {
		before = min(before, ln.nextDue.Load())
	}
	return time.UnixMilli(before)
}

// CaughtUp is closed when the storage name has caught up with the wall clock: its history
// generated and settled. Without history it is closed from the start; for a storage without
// writes, it is closed when every storage written has caught up.
func (w *Writer) CaughtUp(name string) <-chan struct{} {
	if ln, ok := w.laneOf[name]; ok {
		return ln.caughtUp
	}
	return w.AllCaughtUp()
}

// AllCaughtUp is closed when every storage written has caught up.
func (w *Writer) AllCaughtUp() <-chan struct{} { return w.allCaught }

// CaughtUpAt is when the storage name caught up (the load's start without history); zero
// before, and for a storage without writes.
func (w *Writer) CaughtUpAt(name string) time.Time {
	if ln, ok := w.laneOf[name]; ok {
		if at := ln.caughtUpAt.Load(); at != 0 {
			return time.UnixMilli(at)
		}
	}
	return time.Time{}
}

// GenerationDone is closed when every storage's load has stopped: ctx ended, End came, or,
// with history, each storage's live phase lasted duration.
func (w *Writer) GenerationDone() <-chan struct{} { return w.genDone }

// shardOf spreads targets over shards by a hash. A target's series all go through its shard,
// which keeps each series' samples in order; sharding by target rather than by series hash
// lets each worker generate its targets with no lock and no per-sample hash. The cost:
// with few targets per shard, the shards' loads differ, and with fewer targets than shards
// some connections carry nothing.
func shardOf(target, shards int) int {
	h := uint64(target)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	h ^= h >> 29
	return int(h % uint64(shards))
}

// workerOf is the generate worker of a target. With no more workers than shards, a worker
// generates whole shards (shard mod workers), so each shard's batches come from one worker
// and fill up sooner; with more, a shard's targets are split by another hash among the
// workers w ≡ shard (mod shards). Either way a target stays with one worker and one shard,
// and a worker pushes its batches in order: each series' samples reach its shard's queue,
// and its sender, in time order.
func workerOf(target, shards, workers int) int {
	shard := shardOf(target, shards)
	if workers <= shards {
		return shard % workers
	}
	n := (workers - shard + shards - 1) / shards // workers w < workers with w ≡ shard (mod shards)
	h := uint64(target)*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	h ^= h >> 31
	return shard + shards*int(h%uint64(n))
}

// watchLag refreshes the lag gauges and the maximum lag every second.
func (w *Writer) watchLag(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			w.updateLag()
		}
	}
}

func (w *Writer) updateLag() {
	for _, s := range w.sinks {
		s.mu.Lock()
		lag := w.lagLocked(s)
		if s.liveLocked() {
			s.maxLag = max(s.maxLag, lag)
		}
		pending := s.pending
		s.mu.Unlock()
		w.m.lag.WithLabelValues(s.name).Set(lag)
		w.m.pending.WithLabelValues(s.name).Set(float64(pending))
	}
}

// lagLocked adds the generator's own delay to the storage's queue lag: samples generated but
// not yet in a batch are late for every storage alike.
func (w *Writer) lagLocked(s *sink) float64 {
	now := time.Now().UnixMilli()
	lag := s.lagLocked(now)
	ln := w.laneOf[s.name]
	for i := range ln.openOldest {
		if o := ln.openOldest[i].Load(); o > 0 {
			lag = max(lag, float64(now-o)/1000)
		}
	}
	return lag
}

// Acked is how many samples the storage name has acknowledged so far (0 for an unknown name):
// the one figure the observer needs every interval, without Results' side effect on the
// maximum lag.
func (w *Writer) Acked(name string) int64 {
	s, ok := w.byName[name]
	if !ok {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked + w.ackedBase(name)
}

// Results returns a consistent snapshot of one storage's account.
//
// Once generation has stopped, GeneratedSamples is the generator's own count (the values and
// staleness markers Scrape reported, × copies), taken at the source apart from the queues: a
// sample lost between the generator and the queue then unbalances the account, which the
// run reports as an accounting error. Before that, samples still in an open batch are not
// yet anywhere in the account, so GeneratedSamples is what reached the queues.
func (w *Writer) Results(name string) *results.Write {
	s, ok := w.byName[name]
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lag := w.lagLocked(s)
	stopped := w.stop.Load() != 0
	if stopped && s.pending == 0 {
		lag = 0
	}
	if s.liveLocked() {
		s.maxLag = max(s.maxLag, lag)
	}
	r := &results.Write{
		GeneratedSamples: s.generated, AckedSamples: s.acked, PendingSamples: s.pending,
		DroppedSamples: cloneMap(s.dropped), RequestsByStatus: cloneMap(s.requests),
		Retries: s.retries, BytesSent: s.bytesSent, MaxLagSeconds: s.maxLag, LagSeconds: lag,
		Copies: w.copies[name],
		TargetSamplesPerSecond: float64(samplesPerScrape(w.work)*w.work.Targets()*w.copies[name]) /
			w.work.ScrapeInterval().Seconds(),
	}
	ln := w.laneOf[name]
	if stopped {
		r.GeneratedSamples = ln.produced.Load() * int64(w.copies[name])
	}
	r.Protocol, r.UnconfirmedSamples = string(s.proto), s.unconfirmed
	if ms := w.metaSend[name]; ms != nil {
		r.Metadata = ms.results()
	}
	r.MaxScheduleDriftSeconds = float64(ln.maxDrift.Load()) / 1000
	w.withBase(name, r)
	r.Notes, r.Limits = s.notesLocked(), s.limits.results()
	start := w.start.Load()
	if start != 0 && s.lastAck > start {
		r.AchievedSamplesPerSecond = float64(s.acked) / (float64(s.lastAck-start) / 1000)
	}
	if hw, ok := w.work.(heldWorkload); ok {
		late, ooo := hw.HeldKinds()
		if late {
			r.Late = s.heldResultsLocked(heldLate, ln.heldProduced[heldLate].Load()*int64(w.copies[name]), stopped)
		}
		if ooo {
			r.OutOfOrder = s.heldResultsLocked(heldOOO, ln.heldProduced[heldOOO].Load()*int64(w.copies[name]), stopped)
		}
	}
	if ln.catchUp {
		h := &results.WriteHistory{GeneratedSamples: s.histGenerated, AckedSamples: s.histAcked, CaughtUp: s.histDone != 0}
		if h.CaughtUp {
			h.CaughtUpTime = time.UnixMilli(s.histDone).UTC()
		}
		if end := cmp.Or(s.histDone, time.Now().UnixMilli()); start != 0 && end > start {
			h.Seconds = float64(end-start) / 1000
			h.SamplesPerSecond = float64(s.histAcked) / h.Seconds
		}
		r.History = h
	}
	return r
}

func cloneMap(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	maps.Copy(c, m)
	return c
}

// WorkloadStats returns the series created by churn and the staleness markers written so
// far: one marker per series a churned target left, and as many new series.
func (w *Writer) WorkloadStats() (seriesCreated, staleMarkers int64) {
	var n, created int64
	for _, ln := range w.lanes { // with history, the lane that got furthest
		n = max(n, ln.stale.Load())
		created = max(created, ln.created.Load())
	}
	if hw, ok := w.work.(heldWorkload); ok && hw.SeriesOn() {
		// Events create series without markers (a target joins) and write markers without
		// creating (one leaves): counted apart.
		return created, n
	}
	return n, n
}
