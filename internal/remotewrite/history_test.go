package remotewrite

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// historyWriter is a writer of the test workload (10 series per target) with history, its
// workload's clock starting history before now, to in-memory receivers answering as the
// answers say, one storage per answer. It returns the writer, the receivers and a second
// generator of the same workload to compute what must arrive.
func historyWriter(t *testing.T, history, duration time.Duration, tweak func(*config.Config), answers map[string]func(int, http.ResponseWriter, *http.Request) bool) (*Writer, map[string]*receiver, *workload.Generator) {
	t.Helper()
	p, err := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(testProfile)}}, "p.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.History, cfg.Duration = history, duration
	cfg.TargetsCount, cfg.ScrapeInterval = 20, time.Second
	cfg.ScrapeConfigUpdatePercent, cfg.ScrapeConfigUpdateInterval = 10, time.Minute // 2 targets churn every minute
	cfg.WriteConcurrency, cfg.GenerateWorkers = 3, 2
	cfg.MaxSamplesPerRequest, cfg.MaxPendingSamples = 50, 400
	cfg.MaxRetryDuration = time.Minute
	cfg.RemoteStorages = map[string]config.Storage{}
	for name := range answers {
		cfg.RemoteStorages[name] = writeTo("http://" + name + ".invalid")
	}
	if tweak != nil {
		tweak(&cfg)
	}
	opts := workload.Options{
		Seed: 1, Start: time.Now().Add(-history), Hosts: cfg.TargetsCount, ScrapeInterval: cfg.ScrapeInterval,
		ChurnPercent: cfg.ScrapeConfigUpdatePercent, ChurnInterval: cfg.ScrapeConfigUpdateInterval,
	}
	wl, err := workload.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := workload.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(OptionsFrom(&cfg), wl, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	w.FlushAfter = 50 * time.Millisecond
	w.DrainTimeout = 10 * time.Second
	rcs := map[string]*receiver{}
	for name, answer := range answers {
		rc := &receiver{t: t, answer: answer, series: map[string][]int64{}}
		w.byName[name].endpoints[0].client.HTTP.Transport = handlerTransport{rc}
		rcs[name] = rc
	}
	return w, rcs, want
}

// handlerTransport serves every request with h in memory, so that in a synctest bubble the
// fake clock moves while h waits; a request whose context ends fails as the real
// transport's does.
type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	ht.h.ServeHTTP(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// expected is every sample of the workload's scrapes due before end: per series (labels as
// the receiver writes them), its timestamps in order.
func expected(g *workload.Generator, end int64) map[string][]int64 {
	app := &timesBySeries{series: map[string][]int64{}}
	for target := range g.Targets() {
		for k := int64(0); g.ScrapeTime(target, k) < end; k++ {
			g.Scrape(app, target, k)
		}
	}
	return app.series
}

type timesBySeries struct{ series map[string][]int64 }

func (c *timesBySeries) Append(labels []workload.Label, t int64, _ float64) {
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(l.Name + "=" + l.Value + ",")
	}
	c.series[b.String()] = append(c.series[b.String()], t)
}

// TestHistorySeamExact catches up 10 minutes of 20 targets × 10 series every second, with
// churn, through a storage that answers each request in 5-25 ms and a maxPendingSamples of
// 400, then runs 30 s live. Every scrape due from the workload's start until caught-up time
// + 30 s arrives exactly once: no gap and no overlap at the seam; nothing is dropped; each
// series arrives in time order, and no sample arrives more than the skew bound older than
// the newest one sent before it; pending never exceeds maxPendingSamples plus the open
// batches.
func TestHistorySeamExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slowish := func(n int, _ http.ResponseWriter, r *http.Request) bool {
			select {
			case <-time.After(time.Duration(5+n%5*5) * time.Millisecond):
				return true
			case <-r.Context().Done():
				return false
			}
		}
		w, rcs, want := historyWriter(t, 10*time.Minute, 30*time.Second, nil, map[string]func(int, http.ResponseWriter, *http.Request) bool{"s": slowish})
		start := time.Now()
		var mu sync.Mutex
		var maxPending int64
		watchCtx, stopWatch := context.WithCancel(t.Context())
		var watch sync.WaitGroup
		watch.Go(func() {
			for watchCtx.Err() == nil {
				r := w.Results("s")
				mu.Lock()
				maxPending = max(maxPending, r.PendingSamples)
				mu.Unlock()
				select {
				case <-watchCtx.Done():
				case <-time.After(10 * time.Millisecond):
				}
			}
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour) // the lane ends by itself
		defer cancel()
		if err := w.Run(ctx); err != nil {
			t.Fatal(err)
		}
		stopWatch()
		watch.Wait()
		if ctx.Err() != nil {
			t.Fatal("the load did not end by itself 30s after catching up")
		}
		caught := w.CaughtUpAt("s")
		if caught.IsZero() || !caught.After(start) {
			t.Fatalf("caught up at %v, want after the start %v", caught, start)
		}
		end := caught.Add(30 * time.Second).UnixMilli()
		exp := expected(want, end)
		rc := rcs["s"]
		got := map[string][]int64{}
		var n int64
		for s, ts := range rc.series {
			got[s] = ts // in arrival order: equal to the sorted expectation only if in order
			n += int64(len(ts))
		}
		if diff := cmp.Diff(exp, got); diff != "" {
			t.Errorf("samples per series (-want +got):\n%s", diff)
		}
		// Exactly targets × scrapes in [start − 10m, caught up + 30s) values, plus the markers.
		var values int64
		for target := range want.Targets() {
			for k := int64(0); want.ScrapeTime(target, k) < end; k++ {
				values += 10
			}
		}
		if stale := n - values; stale < 0 || stale%10 != 0 || values < 20*10*630 {
			t.Errorf("%d samples arrived: %d values (want at least 20 × 10 × 630) and %d staleness markers", n, values, stale)
		}
		r := w.Results("s")
		if r.GeneratedSamples != n || r.AckedSamples != n || r.PendingSamples != 0 || len(r.DroppedSamples) != 0 {
			t.Errorf("account %+v, want all %d acked", r, n)
		}
		h := r.History
		if h == nil || !h.CaughtUp || h.GeneratedSamples != h.AckedSamples || h.GeneratedSamples < 20*10*600 || h.SamplesPerSecond <= 0 {
			t.Errorf("history %+v, want caught up with at least 10 minutes acked", h)
		}
		skew := catchUpSkew(time.Second)
		newest := int64(0)
		for i, arrived := range rc.arrivals {
			for _, ts := range arrived {
				if ts < newest-skew {
					t.Fatalf("request %d: a sample at %d arrived %d ms older than the newest sent before it (%d), bound %d", i, ts, newest-ts, newest, skew)
				}
			}
			for _, ts := range arrived {
				newest = max(newest, ts)
			}
		}
		if bound := int64(400 + 2*3*50); maxPending > bound {
			t.Errorf("pending reached %d, want at most maxPendingSamples + workers × shards × maxSamplesPerRequest = %d", maxPending, bound)
		}
	})
}

// TestHistoryFastNotHeldBackBySlow catches up one storage answering at once and one taking
// 50 ms per request: the fast one catches up and ends its live phase while the slow one is
// still behind, and neither drops a sample.
func TestHistoryFastNotHeldBackBySlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := func(_ int, _ http.ResponseWriter, r *http.Request) bool {
			select {
			case <-time.After(50 * time.Millisecond):
				return true
			case <-r.Context().Done():
				return false
			}
		}
		w, _, _ := historyWriter(t, 5*time.Minute, 10*time.Second, nil, map[string]func(int, http.ResponseWriter, *http.Request) bool{"fast": nil, "slow": slow})
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		if err := w.Run(ctx); err != nil {
			t.Fatal(err)
		}
		fast, slowAt := w.CaughtUpAt("fast"), w.CaughtUpAt("slow")
		if fast.IsZero() || slowAt.IsZero() || !fast.Add(10*time.Second).Before(slowAt) {
			t.Errorf("fast caught up at %v, slow at %v: want the fast one done with its 10s live phase before the slow one caught up", fast, slowAt)
		}
		for _, name := range []string{"fast", "slow"} {
			r := w.Results(name)
			if ok, diff := r.Balanced(); !ok || len(r.DroppedSamples) != 0 || r.PendingSamples != 0 {
				t.Errorf("%s: off by %d, %+v", name, diff, r)
			}
		}
	})
}

// TestHistoryRefusedCounted: a storage that refuses samples older than a moment (as a
// Prometheus holding newer data answers 400 out of bounds) has them under droppedSamples by
// status, in the history account too, and the account balances.
func TestHistoryRefusedCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, _ := historyWriter(t, 3*time.Minute, 5*time.Second, nil, map[string]func(int, http.ResponseWriter, *http.Request) bool{"s": nil})
		h := &refuseOlder{t: t, cut: time.Now().Add(-time.Minute).UnixMilli()}
		w.byName["s"].endpoints[0].client.HTTP.Transport = handlerTransport{h}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		if err := w.Run(ctx); err != nil {
			t.Fatal(err)
		}
		r := w.Results("s")
		if ok, diff := r.Balanced(); !ok || r.DroppedSamples["http_400"] != h.refused || h.refused == 0 || r.AckedSamples != h.acked || r.PendingSamples != 0 {
			t.Errorf("off by %d: %+v; storage refused %d, took %d", diff, r, h.refused, h.acked)
		}
		hist := r.History
		if hist == nil || !hist.CaughtUp || hist.AckedSamples+h.refused != hist.GeneratedSamples {
			t.Errorf("history %+v with %d refused: want acked + refused = generated", hist, h.refused)
		}
	})
}

// refuseOlder answers 400 to a request holding a sample older than cut, 204 to the others.
type refuseOlder struct {
	t   *testing.T
	cut int64

	mu             sync.Mutex
	refused, acked int64
}

func (h *refuseOlder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		h.t.Errorf("snappy: %v", err)
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		h.t.Errorf("decode: %v", err)
	}
	var n int64
	old := false
	for _, ts := range req.Timeseries {
		for _, s := range ts.Samples {
			n++
			old = old || s.Timestamp < h.cut
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old {
		h.refused += n
		http.Error(w, "out of bounds", http.StatusBadRequest)
		return
	}
	h.acked += n
	w.WriteHeader(http.StatusNoContent)
}

// BenchmarkCatchUp is the catch-up's own ceiling (make bench): 200 targets of the default
// profile with 10 minutes of history (10 M samples) into a receiver that reads and discards,
// with the default writeConcurrency, generateWorkers and maxPendingSamples. samples/s is the
// history's acked samples over the time to catch up: a storage faster than this is measured
// at tsbench's pace, not its own.
func BenchmarkCatchUp(b *testing.B) {
	profile, srv := discardSetup(b)
	for b.Loop() {
		cfg := config.Default()
		cfg.History, cfg.Duration = 10*time.Minute, time.Millisecond
		cfg.RemoteStorages = map[string]config.Storage{"discard": writeTo(srv.URL)}
		gen, err := workload.New(profile, workload.Options{
			Seed: 1, Start: time.Now().Add(-cfg.History), Hosts: cfg.TargetsCount, ScrapeInterval: cfg.ScrapeInterval,
			ChurnPercent: cfg.ScrapeConfigUpdatePercent, ChurnInterval: cfg.ScrapeConfigUpdateInterval,
		})
		if err != nil {
			b.Fatal(err)
		}
		w, err := New(OptionsFrom(&cfg), gen, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
		if err != nil {
			b.Fatal(err)
		}
		cpu0 := cpuTime()
		if err := w.Run(b.Context()); err != nil {
			b.Fatal(err)
		}
		cpu := cpuTime() - cpu0
		h := w.Results("discard").History
		if h == nil || !h.CaughtUp || h.AckedSamples != h.GeneratedSamples {
			b.Fatalf("history %+v: want every sample acked", h)
		}
		b.ReportMetric(h.SamplesPerSecond, "samples/s")
		b.ReportMetric(float64(h.AckedSamples)/cpu.Seconds(), "samples/cpu-s")
	}
}

// TestHistoryPerProtocol catches up one storage in remote write 1.0 and one in OTLP: each
// lane encodes its own storage's protocol only, and each storage gets every sample of the
// history and the live phase, once.
func TestHistoryPerProtocol(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, want := historyWriter(t, 2*time.Minute, 5*time.Second, func(c *config.Config) {
			c.RemoteStorages["otlp"] = config.Storage{WriteURL: "http://otlp.invalid/v1/metrics", Protocol: config.ProtocolOTLP}
		}, map[string]func(int, http.ResponseWriter, *http.Request) bool{"rw1": nil})
		bodies := &countBodies{}
		w.byName["otlp"].endpoints[0].client.HTTP.Transport = handlerTransport{bodies}
		if err := w.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := [wires]bool{wireRW1: true}; w.laneOf["rw1"].use != got {
			t.Errorf("rw1's lane encodes %v, want 1.0 only", w.laneOf["rw1"].use)
		}
		if w.laneOf["otlp"].use[wireRW1] || w.laneOf["otlp"].use[wireRW2] {
			t.Errorf("otlp's lane encodes %v, want OTLP only", w.laneOf["otlp"].use)
		}
		for _, name := range []string{"rw1", "otlp"} {
			r := w.Results(name)
			end := w.CaughtUpAt(name).Add(5 * time.Second).UnixMilli()
			var n int64
			for _, ts := range expected(want, end) {
				n += int64(len(ts))
			}
			if ok, diff := r.Balanced(); !ok || r.AckedSamples != n || len(r.DroppedSamples) != 0 || r.History == nil || !r.History.CaughtUp {
				t.Errorf("%s: off by %d, acked %d of %d expected: %+v", name, diff, r.AckedSamples, n, r)
			}
		}
		if bodies.n == 0 {
			t.Error("the OTLP storage got no request")
		}
	})
}

// countBodies answers every request with 200 and counts them.
type countBodies struct {
	mu sync.Mutex
	n  int
}

func (c *countBodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// TestHistorySkewWithOneSlowQueue catches up 10 minutes through a storage that answers the
// requests of one shard in 40 ms and the others' in 1 ms, so that the fast shards' workers
// would run ahead of the slow one's: they wait for it instead. No sample reaches the storage
// more than the skew bound older than the newest one sent before it, the bound is reached
// (the slow queue does drive the workers apart), and nothing is dropped.
func TestHistorySkewWithOneSlowQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, _ := historyWriter(t, 10*time.Minute, 5*time.Second, nil, map[string]func(int, http.ResponseWriter, *http.Request) bool{"s": nil})
		h := &slowShard{t: t, slow: map[string]bool{}}
		for target := range 20 {
			if shardOf(target, w.shards) == shardOf(0, w.shards) {
				h.slow[fmt.Sprintf("host-%06d:9100", target)] = true
			}
		}
		w.byName["s"].endpoints[0].client.HTTP.Transport = handlerTransport{h}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		if err := w.Run(ctx); err != nil {
			t.Fatal(err)
		}
		r := w.Results("s")
		if ok, diff := r.Balanced(); !ok || len(r.DroppedSamples) != 0 || r.PendingSamples != 0 || r.History == nil || !r.History.CaughtUp {
			t.Errorf("off by %d: %+v, want every sample acked and the history caught up", diff, r)
		}
		skew := catchUpSkew(time.Second)
		var newest, widest int64
		for i, arrived := range h.arrivals {
			for _, ts := range arrived {
				if newest-ts > skew {
					t.Fatalf("request %d: a sample at %d arrived %d ms older than the newest sent before it (%d), bound %d", i, ts, newest-ts, newest, skew)
				}
				widest = max(widest, newest-ts)
			}
			for _, ts := range arrived {
				newest = max(newest, ts)
			}
		}
		if widest < skew/2 {
			t.Errorf("the widest skew was %d ms: want the slow queue to drive the workers at least half the bound (%d ms) apart", widest, skew)
		}
		if h.slowRequests == 0 || h.slowRequests == len(h.arrivals) {
			t.Errorf("%d of %d requests were the slow shard's: want some", h.slowRequests, len(h.arrivals))
		}
	})
}

// slowShard answers in 40 ms a request that holds a series of one of the slow instances,
// in 1 ms the others, and keeps each request's sample timestamps in arrival order.
type slowShard struct {
	t    *testing.T
	slow map[string]bool // instance label values

	mu           sync.Mutex
	arrivals     [][]int64
	slowRequests int
}

func (h *slowShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		h.t.Errorf("snappy: %v", err)
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		h.t.Errorf("decode: %v", err)
	}
	var times []int64
	slow := false
	for _, ts := range req.Timeseries {
		for _, l := range ts.Labels {
			slow = slow || (l.Name == "instance" && h.slow[l.Value])
		}
		for _, s := range ts.Samples {
			times = append(times, s.Timestamp)
		}
	}
	h.mu.Lock()
	h.arrivals = append(h.arrivals, times)
	if slow {
		h.slowRequests++
	}
	h.mu.Unlock()
	delay := time.Millisecond
	if slow {
		delay = 40 * time.Millisecond
	}
	select {
	case <-time.After(delay):
		w.WriteHeader(http.StatusNoContent)
	case <-r.Context().Done():
	}
}

// TestCatchUpSkew: a minute, two scrape intervals when longer, never more than a quarter of
// the hour a TSDB head accepts behind its newest sample.
func TestCatchUpSkew(t *testing.T) {
	for interval, want := range map[time.Duration]time.Duration{
		time.Second:      time.Minute,
		30 * time.Second: time.Minute,
		2 * time.Minute:  4 * time.Minute,
		10 * time.Minute: 15 * time.Minute,
		time.Hour:        15 * time.Minute,
	} {
		if got := catchUpSkew(interval); got != want.Milliseconds() {
			t.Errorf("scrape interval %s: skew %d ms, want %s", interval, got, want)
		}
	}
}
