// Package liar is a storage that lies, for tests: a remote-write and query-API middleware in
// front of a faithful receiver (storagetest's) that tells one known lie, a behaviour some
// storage has shown or could show while acknowledging every write (issue 29), and keeps a
// record of what it lied about, by which tsbench's verdicts are judged (cli's TestMatrix,
// conformance's TestConformanceLies, e2e's TestLiar*).
//
// For tests only, as storagetest: no package of the tsbench binary imports it. Invariant:
// every sample the lie altered, dropped or hides is in the record exactly once; nothing else
// is.
package liar

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// Lie names the one lie a Liar tells (issue 29): each is a behaviour some storage has shown, or
// could show, while acknowledging every write.
type Lie string

// The lies. Write-side lies alter what is forwarded to the receiver and still answer as it
// did (for a 2.0 request, with the counts received in the written headers, as a storage that
// claims them); query-side lies alter what /api/v1/query and /api/v1/query_range answer.
const (
	// LieDropSamples drops a Share of float samples with a number (not NaN, not staleness
	// markers: those are LieDropStale's) after acking them.
	LieDropSamples Lie = "dropSamples"
	// LieDropHistograms drops every native histogram sample while acking it.
	LieDropHistograms Lie = "dropHistograms"
	// LieDropExemplars drops every exemplar while acking it.
	LieDropExemplars Lie = "dropExemplars"
	// LieDropMetadata drops every metadata entry (1.0's metadata requests, 2.0's per series).
	// The record holds each metric family once (Series its name, as a storage keeps it: a
	// histogram's or summary's without _bucket, _count or _sum), however often it was sent.
	LieDropMetadata Lie = "dropMetadata"
	// LieAddLabel adds Label to every series, as Thanos receive adds tenant_id.
	LieAddLabel Lie = "addLabel"
	// LieRenameJobInstance stores job as service_name and instance as service_instance_id, as
	// OTLP storages keep them; written in OTLP, where a storage keeps them so by its own
	// translation, it renames the resource attributes service.name and service.instance.id
	// to exported_job and exported_instance instead (as a Prometheus scrape keeps a target
	// label it would overwrite): not where the storage said it keeps them (otlpLabels).
	LieRenameJobInstance Lie = "renameJobInstance"
	// LieULP changes a Share of float values to the next float64 up.
	LieULP Lie = "ulp"
	// LieRound rounds every float value to an integer (a changed value is counted).
	LieRound Lie = "round"
	// LieShiftTimestamps moves a Share of samples by Shift.
	LieShiftTimestamps Lie = "shiftTimestamps"
	// LieDropStale drops every staleness marker.
	LieDropStale Lie = "dropStale"
	// LieDelay acknowledges a write at once and hands it to the receiver Delay later, in
	// the order it came, as a storage that buffers what it acks: a query sees a sample Delay
	// after its ack (the receiver's own time to store it added). A request is held whole: Skip
	// does not apply. The record holds each request so held, at its arrival, N its samples.
	LieDelay Lie = "delay"
	// LiePartial leaves a Share of series out of every query answer (the series chosen by
	// their labels), though they are stored. The record holds their samples with a number
	// (NaN and staleness markers, which a reader counts apart, are not in it), as for
	// LieDeleteAfter; written in OTLP, under their labels as the receiver stored them
	// (OTLPResourceLabels).
	LiePartial Lie = "partial"
	// LieDeleteAfter leaves a Share of series out of every query answer from After on: data
	// acknowledged and shown, then lost.
	LieDeleteAfter Lie = "deleteAfter"
	// LieRefuse answers a Share of write requests with Status and Body, forwarding nothing.
	LieRefuse Lie = "refuse"
)

// Lies configures a Liar: one lie and its parameters.
type Lies struct {
	Lie Lie
	// Share is the part of the samples, series or requests the lie touches, in (0, 1]; the
	// choice is a hash of the series' labels (and the timestamp for a per-sample lie), so the
	// same data is lied about the same way in every run. 0 means 1.
	Share float64
	// Label is the label LieAddLabel adds.
	Label labels.Label
	// Shift is LieShiftTimestamps' shift, Delay LieDelay's.
	Shift, Delay time.Duration
	// After is when LieDeleteAfter starts hiding (SetAfter moves it).
	After time.Time
	// Status is LieRefuse's answer: 400, 429 or 503; Body its text ("refused by the liar"
	// when empty), e.g. the message a storage sends when one of its limits is hit.
	Status int
	Body   string
	// Skip leaves the series whose metric name starts with it alone (the canary, "tsbench_").
	Skip string
	// OTLPResourceLabels says the receiver behind keeps OTLP resource attributes as labels
	// (storagetest.Options.OTLPResourceLabels): how it translates an OTLP point into the
	// series a query answer names, which LiePartial and LieDeleteAfter choose by.
	OTLPResourceLabels bool
}

// Told is one thing a Liar lied about: a sample's series and timestamp, or a request.
type Told struct {
	// Series is the labels as written, in labels.Labels' String form (in OTLP the metric
	// name, resource and point attributes; for LiePartial and LieDeleteAfter the labels as
	// stored); "" for a request.
	Series string
	T      int64 // ms; the request's arrival for LieRefuse
	N      int64 // samples in a refused request; 1 otherwise
}

// Liar is a remote-write and query-API middleware in front of a Receiver that tells one lie
// and keeps a record of every sample (series, request) it told it about. Invariant: every
// sample the lie altered, dropped or hides is in the record exactly once; nothing else is.
type Liar struct {
	URL string

	lies   Lies
	target string
	proxy  *httputil.ReverseProxy
	srv    *http.Server
	done   chan error

	held      chan heldWrite // LieDelay's writes, in arrival order, to the forwarder
	forwarded chan struct{}  // closed when the forwarder is done

	mu       sync.Mutex // guards told, seen, recorded, requests, newest, answered, after, delays
	told     []Told
	seen     map[string]bool       // metric families recorded for LieDropMetadata
	recorded map[pointKey]struct{} // the points in told (recordPoint)
	requests int64
	newest   map[string]int64 // by target: the newest sample timestamp received, ms (Newest)
	answered map[string]int64 // the same, of the requests answered (Reached)
	after    time.Time        // LieDeleteAfter's start
	delays   []Held           // LieDelay: each held write's forwarding (delay.go)
}

// Paths the liar lies on, as a Prometheus server serves them (the receiver's); it forwards
// every other path as it is.
const (
	WritePath = "/api/v1/write"
	OTLPPath  = "/api/v1/otlp/v1/metrics"
)

// closeTimeout bounds how long Close waits for requests still being served, as the
// receiver's Close does.
const closeTimeout = 30 * time.Second

// Start serves l in front of the receiver at target (its base URL) on a free loopback port.
func Start(target string, l Lies) (*Liar, error) {
	if l.Share == 0 {
		l.Share = 1
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	lr := &Liar{
		lies: l, target: target, done: make(chan error, 1), seen: map[string]bool{}, after: l.After,
		newest: map[string]int64{}, answered: map[string]int64{},
	}
	lr.proxy = httputil.NewSingleHostReverseProxy(u)
	lr.proxy.ModifyResponse = lr.rewriteQuery
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lr.URL = "http://" + ln.Addr().String()
	lr.srv = &http.Server{Handler: lr, ReadHeaderTimeout: 10 * time.Second}
	if l.Lie == LieDelay {
		lr.held, lr.forwarded = make(chan heldWrite, 10_000), make(chan struct{})
		go lr.forward()
	}
	go func() { lr.done <- lr.srv.Serve(ln) }()
	return lr, nil
}

// Close stops serving.
func (l *Liar) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := l.srv.Shutdown(ctx)
	if serr := <-l.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if l.held != nil {
		close(l.held)
		<-l.forwarded
	}
	return err
}

// SetAfter moves when LieDeleteAfter starts hiding: a test starts the loss at a moment it
// chooses, between two reads of its own.
func (l *Liar) SetAfter(t time.Time) {
	l.mu.Lock()
	l.after = t
	l.mu.Unlock()
}

// Told returns a copy of the record.
func (l *Liar) Told() []Told {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.told)
}

// Count is how many samples the lie touched with timestamps in [from, to] (both inclusive),
// in series whose labels satisfy keep (nil keeps every series).
func (l *Liar) Count(from, to time.Time, keep func(series string) bool) int64 {
	var n int64
	for _, t := range l.Told() {
		if t.T >= from.UnixMilli() && t.T <= to.UnixMilli() && (keep == nil || keep(t.Series)) {
			n += t.N
		}
	}
	return n
}

// Newest is the newest timestamp of a sample the liar received, lied about or not (the
// series Skip leaves alone aside); zero before the first: how far the run writing through it
// has come.
func (l *Liar) Newest() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var newest int64
	for _, t := range l.newest {
		newest = max(newest, t)
	}
	return unixMilli(newest)
}

// Reached is the oldest of the targets' newest samples in the write requests the liar has
// answered (a target by its instance label; in OTLP, its service.instance.id); zero before
// the first. A writer that makes each target's scrapes in time order and stops has made none
// after a target's newest: the earliest scrape it did not make is the next of the target
// that reached least. A request still unanswered when the writer gave up on it (a starved
// storage at the end of a run) is not reached, even if answered later: its samples are the
// writer's pending ones.
func (l *Liar) Reached() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var reached int64
	for _, t := range l.answered {
		if reached == 0 || t < reached {
			reached = t
		}
	}
	return unixMilli(reached)
}

func unixMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// request is what one write request showed of each target: its newest sample (saw), kept
// for Newest when the request is read and for Reached once it is answered (add).
type request struct{ newest map[string]int64 }

func newRequest() *request { return &request{newest: map[string]int64{}} }

func (rq *request) saw(target string, t int64) { rq.newest[target] = max(rq.newest[target], t) }

// add keeps the request's newest sample of each target in into (a map guarded by l.mu).
func (l *Liar) add(into map[string]int64, rq *request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for target, t := range rq.newest {
		into[target] = max(into[target], t)
	}
}

// Total is how many samples the lie touched (for LieRefuse: the samples in refused requests).
func (l *Liar) Total() int64 { return l.Count(time.Unix(0, 0), time.Unix(math.MaxInt32, 0), nil) }

func (l *Liar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case WritePath, OTLPPath:
		l.write(w, r)
	default:
		l.proxy.ServeHTTP(w, r)
	}
}

// write decodes a write request, lies, re-encodes it and forwards it to the receiver.
func (l *Liar) write(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now()
	ct := r.Header.Get("Content-Type")
	var (
		out     []byte
		n       int64 // samples received
		headers = map[string]string{}
	)
	rq := newRequest()
	switch {
	case r.URL.Path == OTLPPath:
		out, n, err = l.otlp(rq, body, r.Header.Get("Content-Encoding"))
	case strings.Contains(ct, "io.prometheus.write.v2.Request"):
		var floats, hists, exs int64
		out, floats, hists, exs, err = l.v2(rq, body)
		n = floats + hists
		headers["X-Prometheus-Remote-Write-Samples-Written"] = strconv.FormatInt(floats, 10)
		headers["X-Prometheus-Remote-Write-Histograms-Written"] = strconv.FormatInt(hists, 10)
		headers["X-Prometheus-Remote-Write-Exemplars-Written"] = strconv.FormatInt(exs, 10)
	default:
		out, n, err = l.v1(rq, body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	l.add(l.newest, rq)
	defer func() {
		// Once the answer is written, whatever it is, if the writer still waited for it: a
		// request it gave up on (its timeout, a drain's deadline) is pending for it, even
		// when the receiver behind stored it.
		if r.Context().Err() == nil {
			l.add(l.answered, rq)
		}
	}()
	switch refuse, hold := l.tellRequest(now.UnixMilli(), n); {
	case refuse:
		if l.lies.Status == http.StatusTooManyRequests || l.lies.Status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "0")
		}
		http.Error(w, cmp.Or(l.lies.Body, "refused by the liar"), l.lies.Status)
		return
	case hold:
		l.hold(w, r, out, headers, now)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, l.target+r.URL.Path, bytes.NewReader(out))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	req.Header.Del("Content-Length")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	maps.Copy(w.Header(), resp.Header)
	if resp.StatusCode/100 == 2 {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
