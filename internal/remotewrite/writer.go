package remotewrite

import (
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
	"strings"
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

// Options are the writer's part of the config.
type Options struct {
	// Storages are the storages written (none with disableWrite), by name.
	Storages map[string]config.Storage
	// URLReplicas is each storage's writeURLReplicas: copies of every request, each to its
	// URL with url_replica=N.
	URLReplicas          map[string]int
	Concurrency          int // writeConcurrency: connections per endpoint, and shards
	GenerateWorkers      int
	Compression          config.Compression
	MaxSamplesPerRequest int
	MaxPendingSamples    int64 // per storage
	MaxRetryDuration     time.Duration
	SendMetadata         bool
	ScrapeInterval       time.Duration // of the workload: the catch-up's skew
	// History, when > 0, makes each storage catch up on a lane of its own, which then goes
	// on live for Duration.
	History, Duration time.Duration
}

// OptionsFrom is the writer's part of cfg.
func OptionsFrom(cfg *config.Config) Options {
	o := Options{
		Storages: map[string]config.Storage{}, URLReplicas: map[string]int{},
		Concurrency: cfg.WriteConcurrency, GenerateWorkers: cfg.GenerateWorkers, Compression: cfg.Compression,
		MaxSamplesPerRequest: cfg.MaxSamplesPerRequest, MaxPendingSamples: cfg.MaxPendingSamples,
		MaxRetryDuration: cfg.MaxRetryDuration, SendMetadata: cfg.SendMetadata,
		ScrapeInterval: cfg.ScrapeInterval, History: cfg.History, Duration: cfg.Duration,
	}
	for name, st := range cfg.RemoteStorages {
		if !st.DisableWrite {
			o.Storages[name] = st
			o.URLReplicas[name] = cfg.URLReplicas(name)
		}
	}
	return o
}

// New builds one pipeline per storage of o: one endpoint per URL of its writeURL list and per
// writeURLReplicas copy.
func New(o Options, wl Workload, logger *slog.Logger, m *Metrics) (*Writer, error) {
	w := &Writer{
		DrainTimeout: 30 * time.Second,
		FlushAfter:   time.Second,
		work:         wl,
		byName:       map[string]*sink{},
		shards:       o.Concurrency,
		workers:      o.GenerateWorkers,
		maxSamples:   o.MaxSamplesPerRequest,
		compress:     s2.EncodeSnappy,
		log:          logger.With("component", "remotewrite"),
		m:            m,
		copies:       map[string]int{},
		laneOf:       map[string]*lane{},
		duration:     o.Duration,
		skew:         catchUpSkew(o.ScrapeInterval),
		genDone:      make(chan struct{}),
		allCaught:    make(chan struct{}),
		sender: senderConfig{
			userAgent:        "tsbench/" + version(),
			maxRetryDuration: o.MaxRetryDuration,
			minBackoff:       30 * time.Millisecond, // as Prometheus' min_backoff
			maxBackoff:       5 * time.Second,       // as Prometheus' max_backoff
			requestTimeout:   30 * time.Second,
		},
	}
	if w.workers < 1 { // options built in code without config.Default
		w.workers = 1
	}
	if o.Compression == config.CompressionBetter {
		w.compress = s2.EncodeSnappyBetter
	}
	names := slices.Sorted(maps.Keys(o.Storages))
	for _, name := range names {
		w.use[wireOf(o.Storages[name])] = true
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
	for _, name := range names {
		if err := w.addSink(o, name, o.Storages[name]); err != nil {
			return nil, err
		}
	}
	w.metaSend = w.newMetadataSenders(o.SendMetadata)
	if o.History > 0 {
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

// addSink makes storage name's pipeline: an endpoint per URL of its writeURL list and per
// writeURLReplicas copy.
func (w *Writer) addSink(o Options, name string, st config.Storage) error {
	client, err := storage.NewClient(name, st, storage.Write, o.Concurrency)
	if err != nil {
		return err
	}
	// A redirect is answered, not followed: Go would re-send a POST as a GET after a 301
	// or 302. send drops the batch with the status as reason.
	client.HTTP.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	s := newSink(name, wireOf(st), o.MaxPendingSamples, w.log.With("storage", name), w.m)
	s.proto = st.WriteProtocol()
	for _, raw := range st.WriteURLs() {
		n := o.URLReplicas[name]
		for r := range n {
			u, err := replicaURL(raw, r, n)
			if err != nil {
				return fmt.Errorf("remoteStorages.%s.writeURL: %w", name, err)
			}
			s.addEndpoint(u, client, w.shards)
		}
	}
	w.copies[name] = len(s.endpoints)
	w.sinks = append(w.sinks, s)
	w.byName[name] = s
	return nil
}

func (w *Writer) addLane(sinks []*sink, catchUp bool) {
	ln := &lane{
		sinks: sinks, catchUp: catchUp, caughtUp: make(chan struct{}),
		openOldest: make([]atomic.Int64, w.shards*w.workers*haReplicas(w.work)),
		due:        make([]atomic.Int64, w.workers),
		cursor:     make([]atomic.Int64, w.workers),
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

// version is tsbench's version for the User-Agent, as `tsbench version` prints it.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return productVersion("", "")
	}
	var rev string
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			rev = s.Value
		}
	}
	return productVersion(bi.Main.Version, rev)
}

// productVersion makes a module version a User-Agent product version, which RFC 9110 (section
// 10.1.5) makes a token. A build without VCS stamping (go test, -buildvcs=false, a build
// outside the repository) has the module version "(devel)", whose parentheses are not token
// characters: it is sent as devel, or devel-<revision> when the build knows its revision.
// Every other module version (v1.2.3, a pseudo-version, +dirty) is a token already.
func productVersion(v, revision string) string {
	if v != "" && v != "(devel)" && isToken(v) {
		return v
	}
	if revision != "" && isToken(revision) {
		return "devel-" + revision[:min(12, len(revision))]
	}
	return "devel"
}

// isToken reports whether s is an RFC 9110 token: 1*tchar (section 5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && strings.IndexByte("!#$%&'*+-.^_`|~", c) < 0 {
			return false
		}
	}
	return true
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
		senders.Go(func() { ms.run(sendCtx, genDone, w.sender) })
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
