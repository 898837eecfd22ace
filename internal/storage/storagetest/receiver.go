// Package storagetest is a storage for tests, in-process, as net/http/httptest is a server for
// tests: the receive side of Prometheus itself, its remote-write handler (1.0 and 2.0 messages
// accepted) and its OTLP handler, from the github.com/prometheus/prometheus module, over a real
// on-disk TSDB from the same module, with its PromQL engine behind /api/v1/query and
// /api/v1/query_range and its index behind /api/v1/series, /api/v1/labels and
// /api/v1/label/<name>/values, so that tsbench's read-back, queries and freshness canary run
// against it as against a Prometheus server.
//
// For tests only: no package of the tsbench binary imports it, as its handlers pull in the
// OTLP collector's packages, which tsbench has no use for (its row in docs/development.md's
// level table says tests only; docs' TestImportLevels fails when a non-test file imports
// it). Invariant: Appended is the TSDB's own count of samples appended
// (prometheus_tsdb_head_samples_appended_total), not a count kept beside it.
package storagetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/storage/remote"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/util/annotations"
)

// Paths the receiver serves, as a Prometheus server does.
const (
	WritePath = "/api/v1/write"
	OTLPPath  = "/api/v1/otlp/v1/metrics"
)

// Options change what the receiver accepts.
type Options struct {
	// V1Only makes the remote-write handler take only 1.0 messages, as a receiver that
	// predates 2.0: a 2.0 request is answered 415 Unsupported Media Type.
	V1Only bool
	// OTLPResourceLabels turns the OTLP handler's job and instance translation off: every
	// resource attribute is stored as a label under its own escaped name (service_name,
	// service_instance_id; Prometheus' promote_all_resource_attributes and
	// keep_identifying_resource_attributes), the scope as otel_scope_* labels
	// (promote_scope_metadata), and no job or instance label is made. A storage that keeps
	// OTLP's own names, as VictoriaMetrics does, looks the same to a reader.
	OTLPResourceLabels bool
	// OutOfOrderWindow accepts samples this much older than their series' newest, as
	// Prometheus' storage.tsdb.out_of_order_time_window; 0 refuses them (400).
	OutOfOrderWindow time.Duration
	// DelayedNameRemoval is Prometheus' --enable-feature=promql-delayed-name-removal, which
	// the PromQL test runner turns on (the parser's features are the caller's: package
	// variables of the parser, set once before Start).
	DelayedNameRemoval bool
	// CreatedZeroIngestion is --enable-feature=created-timestamp-zero-ingestion: a 2.0
	// sample's start timestamp is stored as a zero sample before it, where the head takes it.
	CreatedZeroIngestion bool
}

// Receiver is one running receiver. URL is its base, http://127.0.0.1:port.
type Receiver struct {
	URL string

	db     *tsdb.DB
	meta   *metadataRecorder // the db as the write handlers see it
	reg    *prometheus.Registry
	engine *promql.Engine
	srv    *http.Server
	done   chan error
	// mu keeps appends and reads apart: the TSDB's in-memory postings race between an append
	// of a new series and a query reading them (prometheus/prometheus#15317, open in
	// v0.310.0), which the race detector reports in the tests that serve this receiver.
	mu sync.RWMutex
}

// Start opens a TSDB in dir (which must exist) and serves on a free loopback port until Close.
func Start(dir string, logger *slog.Logger, opts Options) (*Receiver, error) {
	reg := prometheus.NewRegistry()
	tsdbOpts := tsdb.DefaultOptions()
	tsdbOpts.OutOfOrderTimeWindow = opts.OutOfOrderWindow.Milliseconds()
	tsdbOpts.EnableExemplarStorage, tsdbOpts.MaxExemplars = true, 100_000 // as --enable-feature=exemplar-storage
	db, err := tsdb.Open(dir, logger, reg, tsdbOpts, nil)
	if err != nil {
		return nil, fmt.Errorf("open tsdb: %w", err)
	}
	msgs := remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}
	if opts.V1Only {
		msgs = remoteapi.MessageTypes{remoteapi.WriteV1MessageType}
	}
	lookback := 5 * time.Minute
	r := &Receiver{
		db:  db,
		reg: reg,
		engine: promql.NewEngine(promql.EngineOpts{
			Logger: logger, MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: lookback,
			EnableAtModifier: true, EnableNegativeOffset: true, EnableDelayedNameRemoval: opts.DelayedNameRemoval,
			// A subquery without a step takes the global evaluation_interval, 1m by default.
			NoStepSubqueryIntervalFn: func(int64) int64 { return time.Minute.Milliseconds() },
		}),
		done: make(chan error, 1),
		meta: &metadataRecorder{Appendable: db, families: map[string][]metadata.Metadata{}},
	}
	mux := http.NewServeMux()
	// As Prometheus' --web.enable-remote-write-receiver with 2.0 accepted; metadata appended.
	mux.Handle(WritePath, locked(&r.mu, remote.NewWriteHandler(logger, reg, r.meta, msgs, opts.CreatedZeroIngestion, false, true)))
	// As --web.enable-otlp-receiver with the default otlp config (UnderscoreEscapingWithSuffixes).
	otlpConfig, appendable := config.DefaultConfig, storage.AppendableV2(db)
	if opts.OTLPResourceLabels {
		otlpConfig.OTLPConfig.PromoteAllResourceAttributes = true
		otlpConfig.OTLPConfig.KeepIdentifyingResourceAttributes = true
		otlpConfig.OTLPConfig.PromoteScopeMetadata = true
		appendable = withoutJobInstance{db}
	}
	mux.Handle(OTLPPath, locked(&r.mu, remote.NewOTLPWriteHandler(logger, reg, appendable, func() config.Config { return otlpConfig },
		remote.OTLPOptions{LookbackDelta: lookback})))
	mux.Handle("/api/v1/query", locked(r.mu.RLocker(), http.HandlerFunc(r.query)))
	mux.Handle("/api/v1/query_range", locked(r.mu.RLocker(), http.HandlerFunc(r.query)))
	mux.Handle("/api/v1/query_exemplars", locked(r.mu.RLocker(), http.HandlerFunc(r.queryExemplars)))
	mux.Handle("/api/v1/metadata", locked(r.mu.RLocker(), http.HandlerFunc(r.metadata)))
	// The index, as Prometheus serves it: series and label names by GET or POST, a label's
	// values by GET only (another method is 405, as Prometheus' router answers it).
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		mux.Handle(m+" /api/v1/series", locked(r.mu.RLocker(), http.HandlerFunc(r.series)))
		mux.Handle(m+" /api/v1/labels", locked(r.mu.RLocker(), http.HandlerFunc(r.labelNames)))
	}
	mux.Handle("GET /api/v1/label/{name}/values", locked(r.mu.RLocker(), http.HandlerFunc(r.labelValues)))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})) // its TSDB's and handlers' metrics
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	r.URL = "http://" + ln.Addr().String()
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// withoutJobInstance appends to the TSDB without the job and instance labels.
type withoutJobInstance struct{ db *tsdb.DB }

func (w withoutJobInstance) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return jobInstanceDropper{w.db.AppenderV2(ctx)}
}

type jobInstanceDropper struct{ storage.AppenderV2 }

func (a jobInstanceDropper) Append(_ storage.SeriesRef, ls labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AppendV2Options) (storage.SeriesRef, error) {
	return a.AppenderV2.Append(0, labels.NewBuilder(ls).Del("job", "instance").Labels(), st, t, v, h, fh, opts)
}

// locked serves h holding l.
func locked(l sync.Locker, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		l.Lock()
		defer l.Unlock()
		h.ServeHTTP(w, req)
	})
}

// closeTimeout bounds how long Close waits for requests still being served: a query a client
// gave up on runs to its end in the engine, and under -race beside a make test that took more
// than 5 s (TestConformanceLies/refuse400: "context deadline exceeded" from Close).
const closeTimeout = 30 * time.Second

// Close stops serving and closes the TSDB.
func (r *Receiver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if serr := <-r.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, r.db.Close())
}

// Appended is the number of samples (float and histogram) the TSDB head appended.
func (r *Receiver) Appended() (int64, error) {
	c, err := r.counters("prometheus_tsdb_head_samples_appended_total")
	return c["prometheus_tsdb_head_samples_appended_total"], err
}

// Account is what the TSDB head says of the samples it was given, for a failed test's
// message: appended, and rejected at commit without an error to the writer (out of order,
// out of bounds, too old: an answered write may still have lost some of these).
func (r *Receiver) Account() string {
	names := []string{
		"prometheus_tsdb_head_samples_appended_total", "prometheus_tsdb_out_of_order_samples_total",
		"prometheus_tsdb_out_of_bound_samples_total", "prometheus_tsdb_too_old_samples_total",
	}
	c, err := r.counters(names...)
	if err != nil {
		return "receiver: " + err.Error()
	}
	return fmt.Sprintf("receiver: appended %d, out of order %d, out of bounds %d, too old %d", c[names[0]], c[names[1]], c[names[2]], c[names[3]])
}

// counters sums each named counter of the TSDB's registry over its label values.
func (r *Receiver) counters(names ...string) (map[string]int64, error) {
	mfs, err := r.reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, mf := range mfs {
		if !slices.Contains(names, mf.GetName()) {
			continue
		}
		var n float64
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue()
		}
		out[mf.GetName()] = int64(n)
	}
	return out, nil
}

// Sample is one stored float sample; V's bits are kept as stored (staleness markers included).
type Sample struct {
	T int64
	V float64
}

// Series reads every float sample of every series matching ms in [mint, maxt] straight from
// the TSDB, keyed by the series' labels in their String form.
func (r *Receiver) Series(mint, maxt int64, ms ...*labels.Matcher) (map[string][]Sample, error) {
	out := map[string][]Sample{}
	err := r.each(mint, maxt, ms, func(lset labels.Labels, it chunkenc.Iterator) {
		var samples []Sample
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			if vt == chunkenc.ValFloat {
				t, v := it.At()
				samples = append(samples, Sample{T: t, V: v})
			}
		}
		out[lset.String()] = samples
	})
	return out, err
}

// each calls f with every series matching ms (every series when none) in [mint, maxt] and
// its iterator, under the read lock.
func (r *Receiver) each(mint, maxt int64, ms []*labels.Matcher, f func(labels.Labels, chunkenc.Iterator)) (err error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	q, err := r.db.Querier(mint, maxt)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, q.Close()) }()
	if len(ms) == 0 {
		ms = []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, model.MetricNameLabel, ".+")}
	}
	set := q.Select(context.Background(), true, nil, ms...)
	var it chunkenc.Iterator
	for set.Next() {
		s := set.At()
		it = s.Iterator(it)
		f(s.Labels(), it)
		if err := it.Err(); err != nil {
			return err
		}
	}
	return set.Err()
}

// query answers /api/v1/query and /api/v1/query_range with the PromQL engine over the TSDB,
// in the Prometheus HTTP API's JSON.
func (r *Receiver) query(w http.ResponseWriter, req *http.Request) {
	if err := req.ParseForm(); err != nil {
		apiError(w, http.StatusBadRequest, "bad_data", err)
		return
	}
	var (
		q   promql.Query
		err error
	)
	if req.URL.Path == "/api/v1/query_range" {
		var start, end time.Time
		var step time.Duration
		start, err = parseTime(req.Form.Get("start"))
		if err == nil {
			end, err = parseTime(req.Form.Get("end"))
		}
		if err == nil {
			step, err = parseDuration(req.Form.Get("step"))
		}
		if err != nil {
			apiError(w, http.StatusBadRequest, "bad_data", err)
			return
		}
		q, err = r.engine.NewRangeQuery(req.Context(), r.db, nil, req.Form.Get("query"), start, end, step)
	} else {
		ts := time.Now()
		if v := req.Form.Get("time"); v != "" {
			if ts, err = parseTime(v); err != nil {
				apiError(w, http.StatusBadRequest, "bad_data", err)
				return
			}
		}
		q, err = r.engine.NewInstantQuery(req.Context(), r.db, nil, req.Form.Get("query"), ts)
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "bad_data", err)
		return
	}
	defer q.Close()
	res := q.Exec(req.Context())
	if res.Err != nil {
		apiError(w, http.StatusUnprocessableEntity, "execution", res.Err)
		return
	}
	warnings, infos := res.Warnings.AsStrings(req.Form.Get("query"), 0, 0)
	body, err := json.Marshal(struct {
		Status   string   `json:"status"`
		Data     any      `json:"data"`
		Warnings []string `json:"warnings,omitempty"`
		Infos    []string `json:"infos,omitempty"`
	}{"success", struct {
		ResultType string `json:"resultType"`
		Result     any    `json:"result"`
	}{string(res.Value.Type()), resultJSON(res.Value)}, warnings, infos})
	if err != nil {
		apiError(w, http.StatusInternalServerError, "internal", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// resultJSON shapes a result as the API does: a matrix as {metric, values, histograms}.
func resultJSON(v any) any {
	type series struct {
		Metric     labels.Labels   `json:"metric"`
		Values     []promql.FPoint `json:"values,omitempty"`
		Histograms []promql.HPoint `json:"histograms,omitempty"`
	}
	switch v := v.(type) {
	case promql.Matrix:
		out := make([]series, 0, len(v))
		for _, s := range v {
			out = append(out, series{s.Metric, s.Floats, s.Histograms})
		}
		return out
	case promql.Vector:
		if v == nil {
			return promql.Vector{}
		}
	}
	return v
}

// lookup is what the index endpoints take: match[] (selectors, a series matching any of them
// counts), start and end (the whole TSDB when absent) and limit (0: none).
type lookup struct {
	sets       [][]*labels.Matcher
	mint, maxt int64
	limit      int
}

// parseLookup reads a lookup's parameters from the query string or a POST form. Its error is
// the request's: 400 bad_data, worded as Prometheus words it.
func parseLookup(req *http.Request) (lookup, error) {
	l := lookup{mint: math.MinInt64, maxt: math.MaxInt64}
	if err := req.ParseForm(); err != nil {
		return l, fmt.Errorf("error parsing form values: %w", err)
	}
	if v := req.Form.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil && n < 0 {
			err = errors.New("limit must be non-negative")
		}
		if err != nil {
			return l, fmt.Errorf("invalid parameter \"limit\": %w", err)
		}
		l.limit = n
	}
	for _, p := range []struct {
		name string
		ms   *int64
	}{{"start", &l.mint}, {"end", &l.maxt}} {
		if v := req.Form.Get(p.name); v != "" {
			t, err := parseTime(v)
			if err != nil {
				return l, fmt.Errorf("invalid parameter %q: %w", p.name, err)
			}
			*p.ms = t.UnixMilli()
		}
	}
	sets, err := parser.ParseMetricSelectors(req.Form["match[]"])
	if err != nil {
		return l, fmt.Errorf("invalid parameter \"match[]\": %w", err)
	}
	for _, ms := range sets {
		// A selector every series matches ({job=~".*"}) would read the whole index: refused.
		if !slices.ContainsFunc(ms, func(m *labels.Matcher) bool { return !m.Matches("") }) {
			return l, errors.New("match[] must contain at least one non-empty matcher")
		}
	}
	l.sets = sets
	return l, nil
}

// openLookup parses req's lookup and opens a querier over its range, or answers the error
// and returns a nil querier. A lookup of series needs a match[] (needMatch), one of names not.
func (r *Receiver) openLookup(w http.ResponseWriter, req *http.Request, needMatch bool) (lookup, storage.Querier) {
	l, err := parseLookup(req)
	if err == nil && needMatch && len(l.sets) == 0 {
		err = errors.New("no match[] parameter provided")
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "bad_data", err)
		return l, nil
	}
	q, err := r.db.Querier(l.mint, l.maxt)
	if err != nil {
		apiError(w, http.StatusUnprocessableEntity, "execution", err)
		return l, nil
	}
	return l, q
}

// series answers /api/v1/series: the label sets of the series matching any match[] (one at
// least) with samples between start and end, sorted, each once.
func (r *Receiver) series(w http.ResponseWriter, req *http.Request) {
	l, q := r.openLookup(w, req, true)
	if q == nil {
		return
	}
	// Closed after the answer is written (a block's labels may point into its index), when
	// the client has its answer and a close error is nothing to it, as in Prometheus.
	defer func() { _ = q.Close() }()
	// Func "series" tells the TSDB no samples are read: it keeps a series whose chunks
	// overlap the range without decoding them, as for Prometheus' own lookups.
	hints := &storage.SelectHints{Start: l.mint, End: l.maxt, Func: "series"}
	found := []labels.Labels{}
	var warnings annotations.Annotations
	for _, ms := range l.sets {
		set := q.Select(req.Context(), false, hints, ms...)
		for set.Next() {
			found = append(found, set.At().Labels())
		}
		if err := set.Err(); err != nil {
			apiError(w, http.StatusUnprocessableEntity, "execution", err)
			return
		}
		warnings.Merge(set.Warnings())
	}
	slices.SortFunc(found, labels.Compare)
	found = slices.CompactFunc(found, labels.Equal)
	respond(w, truncated(found, l.limit, &warnings), warnings)
}

// labelNames answers /api/v1/labels: the label names of the series matching any match[]
// (every series when none) between start and end.
func (r *Receiver) labelNames(w http.ResponseWriter, req *http.Request) {
	r.names(w, req, func(ctx context.Context, q storage.Querier, hints *storage.LabelHints, ms []*labels.Matcher) ([]string, annotations.Annotations, error) {
		return q.LabelNames(ctx, hints, ms...)
	})
}

// labelValues answers /api/v1/label/<name>/values: the values of label name among the series
// matching any match[] (every series when none) between start and end. A name that is not
// valid UTF-8 as it is may come escaped, U__ and its bytes (Prometheus 3).
func (r *Receiver) labelValues(w http.ResponseWriter, req *http.Request) {
	name := req.PathValue("name")
	if strings.HasPrefix(name, "U__") {
		name = model.UnescapeName(name, model.ValueEncodingEscaping)
	}
	if !model.UTF8Validation.IsValidLabelName(name) {
		apiError(w, http.StatusBadRequest, "bad_data", fmt.Errorf("invalid label name: %q", name))
		return
	}
	r.names(w, req, func(ctx context.Context, q storage.Querier, hints *storage.LabelHints, ms []*labels.Matcher) ([]string, annotations.Annotations, error) {
		return q.LabelValues(ctx, name, hints, ms...)
	})
}

// names answers a lookup of names (label names or one label's values) with the sorted union
// of what list finds for each match[], or for no matcher when the request has none.
func (r *Receiver) names(w http.ResponseWriter, req *http.Request,
	list func(context.Context, storage.Querier, *storage.LabelHints, []*labels.Matcher) ([]string, annotations.Annotations, error),
) {
	l, q := r.openLookup(w, req, false)
	if q == nil {
		return
	}
	defer func() { _ = q.Close() }() // after the answer, as in series
	sets := l.sets
	if len(sets) == 0 {
		sets = [][]*labels.Matcher{nil}
	}
	out := []string{}
	var warnings annotations.Annotations
	for _, ms := range sets {
		names, ws, err := list(req.Context(), q, &storage.LabelHints{}, ms)
		if err != nil {
			apiError(w, http.StatusUnprocessableEntity, "execution", err)
			return
		}
		out = append(out, names...)
		warnings.Merge(ws)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	respond(w, truncated(out, l.limit, &warnings), warnings)
}

// truncated is s cut to limit (0: none), with the warning Prometheus gives when it cuts.
func truncated[T any](s []T, limit int, warnings *annotations.Annotations) []T {
	if limit > 0 && len(s) > limit {
		warnings.Add(errors.New("results truncated due to limit"))
		return s[:limit]
	}
	return s
}

// respond writes a successful answer in the API's envelope.
func respond(w http.ResponseWriter, data any, warnings annotations.Annotations) {
	ws, infos := warnings.AsStrings("", 0, 0)
	body, err := json.Marshal(struct {
		Status   string   `json:"status"`
		Data     any      `json:"data"`
		Warnings []string `json:"warnings,omitempty"`
		Infos    []string `json:"infos,omitempty"`
	}{"success", data, ws, infos})
	if err != nil {
		apiError(w, http.StatusInternalServerError, "internal", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func apiError(w http.ResponseWriter, status int, kind string, err error) {
	body, _ := json.Marshal(map[string]string{"status": "error", "errorType": kind, "error": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// parseTime reads a Unix time in seconds, as the API takes it (fractions allowed), or RFC 3339.
func parseTime(s string) (time.Time, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e3))*int64(time.Millisecond)).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q as a time", s)
}

func parseDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(math.Round(f * float64(time.Second))), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("cannot parse %q as a duration", s)
	}
	return d, nil
}
