// Package targets is scrape mode: tsbench's targets served over HTTP, listed by http_sd with
// churn, and the configs of the agents (vmagent, Prometheus in agent mode) that scrape them
// and remote-write to the storages.
//
// Invariant: every value a target page holds is the workload's pure function of the time it
// was served (or, with an exporter, the exporter's page as fetched), and every sample served
// is counted: Served().Samples is exact, and the served log gives the read-back each scrape's
// time and revision.
package targets

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsbench/tsbench/internal/workload"
)

// Options configure a Server.
type Options struct {
	// Gen gives every target's labels, revisions (churn) and values.
	Gen *workload.Generator
	// ExposeTimestamps writes each sample's timestamp into the page.
	ExposeTimestamps bool
	// ExporterURL, when set, is fetched (at most once per CacheTTL) and served as every
	// target's page instead of the generator's values.
	ExporterURL string
	CacheTTL    time.Duration // default 1s
	Logger      *slog.Logger
}

// Server serves the targets' pages and their http_sd list.
type Server struct {
	opts  Options
	log   *slog.Logger
	pages *pages // nil with an exporter
	cache *cache // nil without

	stopped        atomic.Bool
	exporterFailed atomic.Bool // the first failure is logged

	scrapes, samples, bytes, failed atomic.Int64
	durSum, durMax                  atomic.Int64 // ns
	logs                            []servedLog  // per target
}

// Served is what tsbench served, counted exactly.
type Served struct {
	Scrapes int64 // pages answered with 200
	Samples int64 // sample lines in them
	Bytes   int64
	// Failed are pages not served: a target no longer listed, an exporter that failed, or an
	// agent that gave up before the page was written (its scrape timeout).
	Failed int64
	// ExporterFetches is how many times the exporter was asked (at most once per CacheTTL).
	ExporterFetches int64
	// DurationSecondsMean and DurationSecondsMax are the time from a request to its last byte
	// written: how long the agent's scrapes took on tsbench's side.
	DurationSecondsMean float64
	DurationSecondsMax  float64
}

// New builds a server of o.Gen's targets.
func New(o Options) *Server {
	if o.CacheTTL <= 0 {
		o.CacheTTL = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: o, log: o.Logger.With("component", "targets"), logs: make([]servedLog, o.Gen.Targets())}
	if o.ExporterURL != "" {
		s.cache = newCache(o.ExporterURL, o.CacheTTL)
	} else {
		s.pages = newPages(o.Gen)
	}
	return s
}

// SDPath is where the http_sd list is served.
const SDPath = "/sd"

// Handler serves SDPath and every target's page.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+SDPath, s.serveSD)
	mux.HandleFunc("GET /targets/{target}/{revision}/metrics", s.serveTarget)
	return mux
}

// Stop ends the targets: the http_sd list becomes empty, so the agent drops them (and writes
// their staleness markers), and their pages answer 404.
func (s *Server) Stop() { s.stopped.Store(true) }

// sdGroup is one target group of the http_sd format.
type sdGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// serveSD lists every target at the tsbench address the agent reached, with the labels the
// direct writer gives it (instance, job, revision, replica) and its own metrics path, which
// names the revision: the page knows which revision the agent will store it under.
func (s *Server) serveSD(w http.ResponseWriter, r *http.Request) {
	groups := []sdGroup{}
	if !s.stopped.Load() {
		now := time.Now().UnixMilli()
		gen := s.opts.Gen
		for i := range gen.Targets() {
			rev := revisionAt(gen, i, now)
			labels := map[string]string{"__metrics_path__": fmt.Sprintf("/targets/%d/%d/metrics", i, rev)}
			for _, l := range gen.Labels(i, 0, rev) {
				if isTargetLabel(l.Name) {
					labels[l.Name] = l.Value
				}
			}
			groups = append(groups, sdGroup{Targets: []string{r.Host}, Labels: labels})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(groups)
}

// revisionAt is target's revision at now: that of its last scheduled scrape at or before now,
// so churn changes the list when the direct writer would change the series.
func revisionAt(gen *workload.Generator, target int, now int64) int64 {
	t0 := gen.ScrapeTime(target, 0)
	if now <= t0 {
		return gen.Revision(target, 0)
	}
	return gen.Revision(target, (now-t0)/gen.ScrapeInterval().Milliseconds())
}

// isTargetLabel names the labels the target (the agent, from http_sd) adds, not the page.
func isTargetLabel(name string) bool {
	switch name {
	case "instance", "job", "revision", "replica":
		return true
	}
	return false
}

func (s *Server) serveTarget(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	target, err1 := strconv.Atoi(r.PathValue("target"))
	rev, err2 := strconv.ParseInt(r.PathValue("revision"), 10, 64)
	if err1 != nil || err2 != nil || target < 0 || target >= len(s.logs) || rev < 0 || s.stopped.Load() {
		s.failed.Add(1)
		http.NotFound(w, r)
		return
	}
	var body []byte
	var n int
	var contentType string
	served := func() {} // logs the page for the read-back once it is written
	if s.cache != nil {
		var err error
		body, n, err = s.cache.get(r.Context())
		if err != nil {
			s.failed.Add(1)
			if s.exporterFailed.CompareAndSwap(false, true) {
				s.log.Warn("exporter page not fetched; further failures are counted, not logged", "err", err)
			}
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		contentType = textContentType
	} else {
		now := start.UnixMilli()
		om := wantsOpenMetrics(r.Header.Get("Accept"))
		body, n = s.pages.render(target, now, s.opts.ExposeTimestamps, om)
		contentType = textContentType
		if om {
			contentType = openMetricsContentType
		}
		served = func() { s.logs[target].add(now, rev) }
	}
	// A page the agent gave up on (its scrape timeout passed while the exporter was fetched,
	// or while the machine was busy) is not served: the agent does not count it either.
	if r.Context().Err() != nil {
		s.failed.Add(1)
		return
	}
	w.Header().Set("Content-Type", contentType)
	if _, err := w.Write(body); err != nil {
		s.failed.Add(1)
		return
	}
	// Not the context after this: an agent that read the page and closed its connection
	// cancels it too.
	if err := http.NewResponseController(w).Flush(); err != nil {
		s.failed.Add(1)
		return
	}
	served()
	s.scrapes.Add(1)
	s.samples.Add(int64(n))
	s.bytes.Add(int64(len(body)))
	d := time.Since(start).Nanoseconds()
	s.durSum.Add(d)
	for {
		m := s.durMax.Load()
		if d <= m || s.durMax.CompareAndSwap(m, d) {
			break
		}
	}
}

const (
	textContentType        = "text/plain; version=0.0.4; charset=utf-8"
	openMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"
)

// wantsOpenMetrics reports whether the Accept header prefers OpenMetrics to the text format,
// as Prometheus asks (openmetrics-text first, text/plain at q=0.5).
func wantsOpenMetrics(accept string) bool {
	best, bestQ := "", -1.0
	for part := range strings.SplitSeq(accept, ",") {
		fields := strings.Split(part, ";")
		mt := strings.TrimSpace(fields[0])
		q := 1.0
		for _, p := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		if (mt == "application/openmetrics-text" || mt == "text/plain") && q > bestQ {
			best, bestQ = mt, q
		}
	}
	return best == "application/openmetrics-text"
}

// Served returns the counts so far.
func (s *Server) Served() Served {
	out := Served{
		Scrapes: s.scrapes.Load(), Samples: s.samples.Load(), Bytes: s.bytes.Load(), Failed: s.failed.Load(),
		DurationSecondsMax: time.Duration(s.durMax.Load()).Seconds(),
	}
	if s.cache != nil {
		out.ExporterFetches = s.cache.Fetches()
	}
	if out.Scrapes > 0 {
		out.DurationSecondsMean = time.Duration(s.durSum.Load()).Seconds() / float64(out.Scrapes)
	}
	return out
}

// LastServed is the newest time a profile page was served (ms), 0 before any.
func (s *Server) LastServed() int64 {
	var last int64
	for i := range s.logs {
		if t, ok := s.logs[i].last(); ok {
			last = max(last, t)
		}
	}
	return last
}

// servedLog is one target's scrapes in serving order: time (ms) and revision.
type servedLog struct {
	mu      sync.Mutex // guards scrapes
	scrapes []servedScrape
}

type servedScrape struct{ t, rev int64 }

// maxLogged bounds a target's log (16 bytes a scrape): 100k scrapes are 28 h at 1 s. Later
// scrapes are served and counted but not logged, and the read-back stops where the log does.
const maxLogged = 100_000

func (l *servedLog) add(t, rev int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.scrapes) < maxLogged {
		l.scrapes = append(l.scrapes, servedScrape{t, rev})
	}
}

func (l *servedLog) last() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.scrapes) == 0 {
		return 0, false
	}
	return l.scrapes[len(l.scrapes)-1].t, true
}

func (l *servedLog) snapshot() []servedScrape {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]servedScrape(nil), l.scrapes...)
}
