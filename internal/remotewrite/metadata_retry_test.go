package remotewrite

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang/snappy"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// metadataScript answers the metadata-only requests as answer says (false: the request is
// not answered, its connection fails) and hands every other request to next.
type metadataScript struct {
	next   http.Handler
	answer func(n int, w http.ResponseWriter) bool

	mu    sync.Mutex // guards times
	times []time.Time
}

// isMetadata reports whether body is a metadata-only remote write 1.0 request, and gives r
// its body back.
func isMetadata(r *http.Request) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	raw, _ := snappy.Decode(nil, body)
	var req prompb.WriteRequest
	return req.Unmarshal(raw) == nil && len(req.Metadata) > 0 && len(req.Timeseries) == 0
}

// RoundTrip makes memNet's requests; an unanswered metadata request fails as a reset
// connection does.
func (m *metadataScript) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isMetadata(req) {
		return memNet{"s.test": m.next}.RoundTrip(req)
	}
	m.mu.Lock()
	n := len(m.times)
	m.times = append(m.times, time.Now())
	m.mu.Unlock()
	rec := httptest.NewRecorder()
	if !m.answer(n, rec) {
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return rec.Result(), nil
}

// metadataWriter writes the test workload (2 targets every second) with sendMetadata to a
// receiver of samples in memory, its metadata requests answered by script.
func metadataWriter(t *testing.T, script *metadataScript, tweak func(*config.Config)) (*Writer, *receiver) {
	t.Helper()
	rc := memReceiver(t, nil)
	script.next = rc
	w := newWriter(t, map[string]config.Storage{"s": writeTo("http://s.test")}, nil, func(c *config.Config) {
		c.TargetsCount, c.ScrapeInterval, c.SendMetadata = 2, time.Second, true
		if tweak != nil {
			tweak(c)
		}
	})
	for _, ep := range w.sinks[0].endpoints {
		ep.client.HTTP.Transport = script
	}
	return w, rc
}

// TestMetadataRetriedAsSamples: a metadata request answered 503, then 429 with Retry-After,
// then failing as a reset connection, is sent again each time, with the samples' backoff and
// the server's Retry-After, until accepted; each retry counted in the metadata account,
// none in the samples' (issue 37: it was sent once and the next went a minute later).
func TestMetadataRetriedAsSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		script := &metadataScript{answer: func(n int, w http.ResponseWriter) bool {
			switch n {
			case 0:
				w.WriteHeader(http.StatusServiceUnavailable)
			case 1:
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
			case 2:
				return false
			default:
				w.WriteHeader(http.StatusNoContent)
			}
			return true
		}}
		w, rc := metadataWriter(t, script, func(c *config.Config) { c.MaxRetryDuration = 10 * time.Second })
		runFor(t, w, 10*time.Second)
		r := w.Results("s")
		want := &results.WriteMetadata{
			Families: 3, RequestsByStatus: map[string]int64{"503": 1, "429": 1, "network_error": 1, "204": 1},
			BytesSent: 4 * int64(len(w.metaSend["s"].body)), Retries: 3, Dropped: map[string]int64{},
		}
		if diff := cmp.Diff(want, r.Metadata); diff != "" {
			t.Errorf("metadata account (-want +got):\n%s", diff)
		}
		if len(script.times) != 4 {
			t.Fatalf("receiver saw %d metadata requests, want 4", len(script.times))
		}
		waits := []time.Duration{script.times[1].Sub(script.times[0]), script.times[2].Sub(script.times[1]), script.times[3].Sub(script.times[2])}
		if waits[0] < 30*time.Millisecond || waits[0] > 38*time.Millisecond || waits[1] != time.Second ||
			waits[2] < time.Second || waits[2] > 5*time.Second {
			t.Errorf("waits %v: want the backoff's first (30–37.5 ms), the 1 s of Retry-After, then no shorter", waits)
		}
		if r.Retries != 0 || r.AckedSamples != r.GeneratedSamples || r.RequestsByStatus["204"] != int64(rc.requests) {
			t.Errorf("sample account %+v: want its own, untouched (receiver saw %d requests)", r, rc.requests)
		}
	})
}

// TestMetadataGivenUpAsSamples: a metadata request refused with 503 every time is retried
// until the next retry would pass maxRetryDuration, then dropped as retry_timeout (one send),
// and sent again at the next interval; a 400 is dropped at once. Every send is accepted,
// dropped or pending, and every request counted.
func TestMetadataGivenUpAsSamples(t *testing.T) {
	for _, tc := range []struct {
		status  int
		reason  string
		retried bool
	}{
		{http.StatusServiceUnavailable, reasonRetryTimeout, true},
		{http.StatusBadRequest, "http_400", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				script := &metadataScript{answer: func(_ int, w http.ResponseWriter) bool {
					w.WriteHeader(tc.status)
					return true
				}}
				w, _ := metadataWriter(t, script, nil) // maxRetryDuration 2 s
				runFor(t, w, 61*time.Second)           // sends at 0 s and 60 s
				m := w.Results("s").Metadata
				requests := int64(len(script.times))
				if diff := cmp.Diff(map[string]int64{tc.reason: 2}, m.Dropped); diff != "" {
					t.Errorf("dropped sends (-want +got):\n%s", diff)
				}
				if m.RequestsByStatus[strconv.Itoa(tc.status)] != requests || m.Retries != requests-2 || m.Pending != 0 {
					t.Errorf("account %+v; receiver saw %d requests: want them all, 2 sends, the rest retries", m, requests)
				}
				if tc.retried != (m.Retries > 0) {
					t.Errorf("%d retries of a %d", m.Retries, tc.status)
				}
				// The first send's retries end within maxRetryDuration; the second send goes a
				// minute after the first.
				second := slices.IndexFunc(script.times, func(at time.Time) bool { return at.Sub(script.times[0]) >= time.Minute })
				if second < 1 || script.times[second-1].Sub(script.times[0]) > 2*time.Second || script.times[second].Sub(script.times[0]) != time.Minute {
					t.Errorf("request times %v: want the retries within 2 s, the next send a minute after the first", script.times)
				}
			})
		})
	}
}

// TestMetadataRetriedOverResetConnection: over a real connection, a metadata request whose
// connection the receiver resets is sent again and accepted.
func TestMetadataRetriedOverResetConnection(t *testing.T) {
	rc := memReceiver(t, nil)
	var mu sync.Mutex
	resets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reset := isMetadata(r) && resets == 0
		if reset {
			resets++
		}
		mu.Unlock()
		if !reset {
			rc.ServeHTTP(w, r)
			return
		}
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	w := newWriter(t, map[string]config.Storage{"s": writeTo(srv.URL)}, nil, func(c *config.Config) { c.SendMetadata = true })
	runFor(t, w, 300*time.Millisecond)
	m := w.Results("s").Metadata
	if diff := cmp.Diff(map[string]int64{"network_error": 1, "204": 1}, m.RequestsByStatus); diff != "" || m.Retries != 1 || len(m.Dropped) != 0 || m.Pending != 0 {
		t.Errorf("metadata account %+v: want a network error retried once, then accepted (-want +got):\n%s", m, diff)
	}
}

// TestMetadataPendingAtDrainDeadline: a metadata send still retrying when the load stops
// goes on, as a batch of samples does, until the drain deadline; then it is pending.
func TestMetadataPendingAtDrainDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		script := &metadataScript{answer: func(_ int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusBadGateway)
			return true
		}}
		w, _ := metadataWriter(t, script, func(c *config.Config) { c.MaxRetryDuration = time.Minute })
		start := time.Now()
		runFor(t, w, time.Second) // DrainTimeout 3 s
		m := w.Results("s").Metadata
		if m.Pending != 1 || len(m.Dropped) != 0 || m.Retries != int64(len(script.times))-1 || m.RequestsByStatus["502"] != int64(len(script.times)) {
			t.Errorf("account %+v, receiver saw %d requests: want one send pending, every request counted", m, len(script.times))
		}
		if d := time.Since(start); d != 4*time.Second {
			t.Errorf("run took %v, want the 1 s load and the 3 s drain", d)
		}
	})
}
