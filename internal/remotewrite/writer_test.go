package remotewrite

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/report"
	"github.com/tsbench/tsbench/internal/workload"
)

// testProfile has 10 series: 6 counters, 3 gauges, 1 NaN.
const testProfile = `{"source":"test","series":[
{"name":"c_total","labels":[{"name":"i","value":"0"}],"type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":0.01}},
{"name":"c_total","labels":[{"name":"i","value":"1"}],"type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":0.01}},
{"name":"c_total","labels":[{"name":"i","value":"2"}],"type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":0.01}},
{"name":"c_total","labels":[{"name":"i","value":"3"}],"type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":0.01}},
{"name":"c_total","labels":[{"name":"i","value":"4"}],"type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":0.01}},
{"name":"c_total","labels":[{"name":"i","value":"5"}],"type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":1}},
{"name":"g","labels":[{"name":"i","value":"0"}],"type":"gauge","shape":{"kind":"gauge","min":1,"max":5,"periodSeconds":60,"resolution":1}},
{"name":"g","labels":[{"name":"i","value":"1"}],"type":"gauge","shape":{"kind":"gauge","min":1,"max":5,"periodSeconds":60}},
{"name":"g","labels":[{"name":"i","value":"2"}],"type":"gauge","shape":{"kind":"gauge","min":0,"max":1e9,"periodSeconds":60,"resolution":1}},
{"name":"n","type":"summary","shape":{"kind":"nan"}}]}`

// receiver is a scripted remote-write endpoint: answer decides each response; it decodes
// and keeps every request it acknowledges.
type receiver struct {
	t      *testing.T
	answer func(n int, w http.ResponseWriter, r *http.Request) bool // false: do not ack

	mu       sync.Mutex
	requests int
	times    []time.Time
	series   map[string][]int64 // acked samples' timestamps per series, in arrival order
	samples  int64
	headers  http.Header
	rawQuery []string
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request) bool) (*receiver, *httptest.Server) {
	rc := &receiver{t: t, answer: answer, series: map[string][]int64{}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	n := rc.requests
	rc.requests++
	rc.times = append(rc.times, time.Now())
	rc.headers = r.Header.Clone()
	rc.rawQuery = append(rc.rawQuery, r.URL.RawQuery)
	rc.mu.Unlock()
	if rc.answer != nil && !rc.answer(n, w, r) {
		return
	}
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		rc.t.Errorf("snappy: %v", err)
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		rc.t.Errorf("decode: %v", err)
	}
	rc.mu.Lock()
	for _, ts := range req.Timeseries {
		var b strings.Builder
		for _, l := range ts.Labels {
			b.WriteString(l.Name + "=" + l.Value + ",")
		}
		for _, s := range ts.Samples {
			rc.series[b.String()] = append(rc.series[b.String()], s.Timestamp)
			rc.samples++
		}
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// run writes the test workload to the storages for load, then drains, and returns the writer.
func run(t *testing.T, storages map[string]config.Storage, load time.Duration, tweak func(*config.Config, *Writer)) *Writer {
	t.Helper()
	p, err := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(testProfile)}}, "p.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.ScrapeInterval = 100 * time.Millisecond
	cfg.WriteConcurrency = 2
	cfg.MaxSamplesPerRequest = 50
	cfg.MaxRetryDuration = 2 * time.Second
	cfg.RemoteStorages = storages
	wl, err := workload.New(p, workload.Options{Seed: 1, Start: time.Now(), Targets: 20, ScrapeInterval: cfg.ScrapeInterval})
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(&cfg, wl, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	w.FlushAfter = 50 * time.Millisecond
	w.DrainTimeout = 3 * time.Second
	if tweak != nil {
		tweak(&cfg, w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), load)
	defer cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for name := range storages {
		if ok, diff := w.Results(name).Balanced(); !ok {
			t.Errorf("%s: accounting off by %d: %+v", name, diff, w.Results(name))
		}
	}
	return w
}

func writeTo(u string) config.Storage { return config.Storage{WriteURL: u + "/api/v1/write"} }

func TestAllAckedInOrderWithHeaders(t *testing.T) {
	rc, srv := newReceiver(t, nil)
	st := writeTo(srv.URL)
	st.WriteBearerToken = "tok"
	w := run(t, map[string]config.Storage{"s": st}, time.Second, nil)
	r := w.Results("s")
	if r.AckedSamples == 0 || r.AckedSamples != r.GeneratedSamples || r.PendingSamples != 0 || len(r.DroppedSamples) != 0 {
		t.Fatalf("account %+v: want every sample acked", r)
	}
	if r.AckedSamples != rc.samples {
		t.Errorf("acked %d, receiver got %d", r.AckedSamples, rc.samples)
	}
	for k, want := range map[string]string{
		"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
		"X-Prometheus-Remote-Write-Version": "0.1.0", "Authorization": "Bearer tok",
	} {
		if got := rc.headers.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if !strings.HasPrefix(rc.headers.Get("User-Agent"), "tsbench/") {
		t.Errorf("User-Agent %q", rc.headers.Get("User-Agent"))
	}
	for s, ts := range rc.series {
		for i := 1; i < len(ts); i++ {
			if ts[i] <= ts[i-1] {
				t.Fatalf("series %s out of order: %v", s, ts)
			}
		}
	}
	if len(rc.series) != 20*10 {
		t.Errorf("%d series, want 20 targets × 10", len(rc.series))
	}
	if r.RequestsByStatus["204"] != int64(rc.requests) {
		t.Errorf("requestsByStatus %v, receiver saw %d", r.RequestsByStatus, rc.requests)
	}
}

func TestClientErrorDroppedWithoutRetry(t *testing.T) {
	rc, srv := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		http.Error(w, "out of bounds", http.StatusBadRequest)
		return false
	})
	w := run(t, map[string]config.Storage{"s": writeTo(srv.URL)}, 500*time.Millisecond, nil)
	r := w.Results("s")
	if r.Retries != 0 || r.DroppedSamples[reasonHTTP4xx] != r.GeneratedSamples || r.GeneratedSamples == 0 {
		t.Errorf("account %+v: want every sample dropped as http_4xx, no retry", r)
	}
	if r.RequestsByStatus["400"] != int64(rc.requests) {
		t.Errorf("requests %v vs %d", r.RequestsByStatus, rc.requests)
	}
}

func TestTooManyRequestsHonoursRetryAfter(t *testing.T) {
	rc, srv := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return false
		}
		return true
	})
	w := run(t, map[string]config.Storage{"s": writeTo(srv.URL)}, 300*time.Millisecond, func(_ *config.Config, _ *Writer) {})
	r := w.Results("s")
	if r.AckedSamples != r.GeneratedSamples || r.Retries < 1 || r.RequestsByStatus["429"] != 1 {
		t.Errorf("account %+v: want one 429, retried, all acked", r)
	}
	// The retried batch went again no sooner than Retry-After: some request came >= 1s after the first.
	if last := rc.times[len(rc.times)-1]; last.Sub(rc.times[0]) < time.Second {
		t.Errorf("retry after %v, want >= 1s", last.Sub(rc.times[0]))
	}
}

func TestServerErrorsRetriedWithGrowingDelay(t *testing.T) {
	var mu sync.Mutex
	var attempts []time.Time
	_, srv := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if len(attempts) < 5 {
			attempts = append(attempts, time.Now())
			w.WriteHeader(http.StatusInternalServerError)
			return false
		}
		return true
	})
	w := run(t, map[string]config.Storage{"s": func() config.Storage { s := writeTo(srv.URL); return s }()}, 200*time.Millisecond,
		func(_ *config.Config, w *Writer) {
			w.shards = 1
			w.openOldest = w.openOldest[:1]
			w.sinks[0].endpoints = w.sinks[0].endpoints[:1]
		})
	r := w.Results("s")
	if r.AckedSamples != r.GeneratedSamples || r.Retries < 5 {
		t.Errorf("account %+v: want 5 retries then all acked", r)
	}
	for i := 2; i < len(attempts); i++ {
		if d1, d2 := attempts[i-1].Sub(attempts[i-2]), attempts[i].Sub(attempts[i-1]); d2 < d1*9/10 {
			t.Errorf("delay %d = %v shorter than delay %d = %v: backoff must grow", i, d2, i-1, d1)
		}
	}
}

func TestPersistentErrorsDroppedAfterMaxRetryDuration(t *testing.T) {
	_, srv := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return false
	})
	w := run(t, map[string]config.Storage{"s": writeTo(srv.URL)}, 300*time.Millisecond, func(_ *config.Config, w *Writer) {
		w.sender.maxRetryDuration = 200 * time.Millisecond
	})
	r := w.Results("s")
	if r.DroppedSamples[reasonRetryTimeout] != r.GeneratedSamples || r.Retries == 0 {
		t.Errorf("account %+v: want every sample dropped as retry_timeout after retries", r)
	}
}

func TestResetConnectionsRetried(t *testing.T) {
	_, srv := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n < 3 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.(*net.TCPConn).SetLinger(0)
				_ = conn.Close()
			}
			return false
		}
		return true
	})
	w := run(t, map[string]config.Storage{"s": writeTo(srv.URL)}, 300*time.Millisecond, nil)
	r := w.Results("s")
	if r.AckedSamples != r.GeneratedSamples || r.RequestsByStatus["network_error"] != 3 || r.Retries < 3 {
		t.Errorf("account %+v: want 3 network errors retried, then all acked", r)
	}
}

// stalledReceiver never answers a request until the client gives up or the test ends.
func stalledReceiver(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	_, srv := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) bool {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return false
	})
	return srv
}

func TestSlowStorageLeavesPendingAtDrainDeadline(t *testing.T) {
	srv := stalledReceiver(t)
	w := run(t, map[string]config.Storage{"s": writeTo(srv.URL)}, 300*time.Millisecond, func(_ *config.Config, w *Writer) {
		w.DrainTimeout = 200 * time.Millisecond
	})
	r := w.Results("s")
	if r.PendingSamples == 0 || r.PendingSamples != r.GeneratedSamples || r.LagSeconds <= 0 {
		t.Errorf("account %+v: want everything still pending, with lag", r)
	}
}

func TestQueueFullDropsOldest(t *testing.T) {
	srv := stalledReceiver(t)
	w := run(t, map[string]config.Storage{"s": writeTo(srv.URL)}, 500*time.Millisecond, func(_ *config.Config, w *Writer) {
		w.sinks[0].maxPending = 200
		w.DrainTimeout = 100 * time.Millisecond
	})
	r := w.Results("s")
	if r.DroppedSamples[reasonQueueFull] == 0 || r.PendingSamples > 200+2*50 {
		t.Errorf("account %+v: want queue_full drops and pending bounded by maxPendingSamples", r)
	}
}

func TestDeadStorageDoesNotSlowLiveOne(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	rc, live := newReceiver(t, nil)
	w := run(t, map[string]config.Storage{"dead": writeTo(dead), "live": writeTo(live.URL)}, time.Second, func(_ *config.Config, w *Writer) {
		w.sender.maxRetryDuration = 300 * time.Millisecond
	})
	l, d := w.Results("live"), w.Results("dead")
	if l.AckedSamples != l.GeneratedSamples || l.AckedSamples != rc.samples || l.MaxLagSeconds > 0.5 {
		t.Errorf("live %+v: want all acked within 0.5s", l)
	}
	if d.GeneratedSamples != l.GeneratedSamples || d.AckedSamples != 0 || d.DroppedSamples[reasonRetryTimeout] == 0 {
		t.Errorf("dead %+v: want the same load, retried then dropped", d)
	}
}

func TestURLReplicasAndCommaList(t *testing.T) {
	rc1, s1 := newReceiver(t, nil)
	rc2, s2 := newReceiver(t, nil)
	st := config.Storage{WriteURL: s1.URL + "/api/v1/write, " + s2.URL + "/api/v1/write?db=x"}
	w := run(t, map[string]config.Storage{"s": st}, 500*time.Millisecond, nil)
	_ = w
	// Rebuild with two URL replicas: 2 URLs × 2 copies = 4 endpoints.
	rc1.series, rc2.series = map[string][]int64{}, map[string][]int64{}
	rc1.samples, rc2.samples, rc1.rawQuery, rc2.rawQuery = 0, 0, nil, nil
	p, _ := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(testProfile)}}, "p.json")
	cfg := config.Default()
	cfg.ScrapeInterval, cfg.WriteURLReplicas, cfg.WriteConcurrency = 100*time.Millisecond, 2, 1
	cfg.RemoteStorages = map[string]config.Storage{"s": st}
	wl, _ := workload.New(p, workload.Options{Seed: 1, Start: time.Now(), Targets: 5, ScrapeInterval: cfg.ScrapeInterval})
	w2, err := New(&cfg, wl, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = w2.Run(ctx)
	r := w2.Results("s")
	if r.Copies != 4 || r.AckedSamples != r.GeneratedSamples || r.AckedSamples != rc1.samples+rc2.samples || rc1.samples != rc2.samples {
		t.Errorf("account %+v, receivers %d + %d: want 4 copies, split evenly", r, rc1.samples, rc2.samples)
	}
	queries := strings.Join(append(rc1.rawQuery, rc2.rawQuery...), " ")
	for _, want := range []string{"extra_label=url_replica%3D0", "extra_label=url_replica%3D1", "db=x"} {
		if !strings.Contains(queries, want) {
			t.Errorf("no request with %s in %q", want, queries[:min(200, len(queries))])
		}
	}
	if r.TargetSamplesPerSecond != 5*10/0.1*4 {
		t.Errorf("target rate %v, want 5 targets × 10 series / 0.1s × 4 copies", r.TargetSamplesPerSecond)
	}
}

var _ = report.Write{}
