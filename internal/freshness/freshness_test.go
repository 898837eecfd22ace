package freshness

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// fakeStorage acks canary writes and shows each sample to queries delay after its write; the
// index (series lookups) indexDelay after. Samples with a timestamp in lost are never shown.
type fakeStorage struct {
	delay, indexDelay time.Duration
	lose              func(n int) bool          // the n-th write (from 0) is acked but never stored
	later             func(n int) time.Duration // added to both delays of the n-th write; nil: none

	mu      sync.Mutex
	samples []stored
}

type stored struct {
	t  int64
	at time.Time
}

func (f *fakeStorage) Write(_ context.Context, _ [][]workload.Label, t int64, _ float64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.samples)
	at := time.Now()
	if f.lose != nil && f.lose(n) {
		at = time.Now().Add(time.Hour)
	}
	if f.later != nil {
		at = at.Add(f.later(n))
	}
	f.samples = append(f.samples, stored{t: t, at: at})
	return http.StatusNoContent, nil
}

// writes is how many writes the storage has had.
func (f *fakeStorage) writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.samples)
}

// visible are the timestamps shown at now with delay d.
func (f *fakeStorage) visible(d time.Duration) []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ts []int64
	for _, s := range f.samples {
		if time.Since(s.at) >= d {
			ts = append(ts, s.t)
		}
	}
	return ts
}

func (f *fakeStorage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	w.Header().Set("Content-Type", "application/json")
	ts := f.visible(f.delay)
	switch r.URL.Path {
	case "/api/v1/query":
		var res []any
		if len(ts) > 0 {
			last := ts[len(ts)-1]
			res = append(res, map[string]any{"metric": map[string]string{"__name__": MetricName}, "value": []any{float64(last) / 1000, strconv.FormatInt(last, 10)}})
		}
		writeData(w, map[string]any{"resultType": "vector", "result": res})
	case "/api/v1/query_range":
		var pts []any
		for _, t := range ts {
			pts = append(pts, []any{float64(t) / 1000, strconv.FormatInt(t, 10)})
		}
		var res []any
		if len(pts) > 0 {
			res = append(res, map[string]any{"metric": map[string]string{"__name__": MetricName}, "values": pts})
		}
		writeData(w, map[string]any{"resultType": "matrix", "result": res})
	case "/api/v1/series":
		re := regexp.MustCompile(`canary_ts=~"([^"]*)"`).FindStringSubmatch(r.Form.Get("match[]"))
		want := regexp.MustCompile("^(?:" + re[1] + ")$")
		res := []map[string]string{}
		for _, t := range f.visible(f.indexDelay) {
			if s := strconv.FormatInt(t, 10); want.MatchString(s) {
				res = append(res, map[string]string{"__name__": SeriesMetricName, "canary_ts": s})
			}
		}
		writeData(w, res)
	default:
		http.NotFound(w, r)
	}
}

// newProber makes the prober of a storage whose query API is api and whose writes go to w;
// the server stops with the test.
func newProber(t *testing.T, cfg config.Freshness, w Writer, api http.Handler) *Prober {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client, err := storage.NewClient("fake", config.Storage{ReadURL: srv.URL + "/"}, storage.Read, 3)
	if err != nil {
		t.Fatal(err)
	}
	return New("fake", cfg, 0, w, query.NewAPI(client, srv.URL+"/"), time.Second, slog.New(slog.DiscardHandler))
}

func writeData(w io.Writer, data any) {
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
}

// TestFreshnessMeasuresTheDelay runs the canary against a storage that shows samples 300ms
// after their ack (the index 600ms after) and loses every fifth write: the figures are the
// delays to within the polling interval, the lost samples are never visible, and every acked
// sample is accounted for in each probe.
func TestFreshnessMeasuresTheDelay(t *testing.T) {
	fs := &fakeStorage{delay: 300 * time.Millisecond, indexDelay: 600 * time.Millisecond, lose: func(n int) bool { return n%5 == 4 }}
	// Polls every 50ms and gives a sample 2 s to show: a machine busy with other tests delays
	// a poll by tens of milliseconds, and the slack below is three polls.
	cfg := config.Freshness{Interval: 50 * time.Millisecond, WriteInterval: 200 * time.Millisecond, Timeout: 2 * time.Second}
	p := newProber(t, cfg, fs, fs)
	// Until the storage has 50 writes (10 s at 200ms on an idle machine), not for 10 s: a
	// starved test process wrote 27 in them. The minute is a bound, not a figure.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	go func() {
		for fs.writes() < 50 && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	res := p.Results()
	if res.Acked < 50 || res.Written != res.Acked {
		t.Fatalf("written %d acked %d, want 50 acked (the storage's 50 writes, within a minute)", res.Written, res.Acked)
	}
	probes := []struct {
		name  string
		pr    *results.FreshnessProbe
		delay time.Duration
		// The largest figure: the instant and range probes take a newer sample for every
		// older one (they cannot tell a lost sample from one shown and followed by a newer),
		// so a lost sample shows when the next one does, a write interval later; the index
		// probe asks for each series and counts the lost ones as never visible.
		longest time.Duration
	}{
		{"instant", res.Instant, fs.delay, fs.delay + cfg.WriteInterval},
		{"range", res.Range, fs.delay, fs.delay + cfg.WriteInterval},
		{"series", res.Series, fs.indexDelay, fs.indexDelay},
	}
	for _, c := range probes {
		t.Run(c.name, func(t *testing.T) {
			pr := c.pr
			if got := pr.Visible + pr.NeverVisible + pr.Pending; got != res.Acked {
				t.Errorf("visible %d + never %d + pending %d = %d, want acked %d", pr.Visible, pr.NeverVisible, pr.Pending, got, res.Acked)
			}
			slack := 3 * cfg.Interval // the poll's resolution, and a busy machine's scheduling
			p50, mx := *pr.Seconds.P50, *pr.Seconds.Max
			if p50 < c.delay.Seconds() || p50 > (c.delay+slack).Seconds() {
				t.Errorf("p50 %.3fs, want in [%s, %s]", p50, c.delay, c.delay+slack)
			}
			if mx < p50 || mx > (c.longest+3*slack).Seconds() {
				t.Errorf("max %.3fs, want in [p50, %s]", mx, c.longest+3*slack)
			}
			if c.name == "series" && pr.NeverVisible < res.Acked/5-3 {
				t.Errorf("never visible %d of %d acked, want about a fifth", pr.NeverVisible, res.Acked)
			}
			if c.name != "series" && pr.NeverVisible != 0 {
				t.Errorf("never visible %d, want 0: a newer sample shows each lost one", pr.NeverVisible)
			}
			if len(pr.Timeline) == 0 {
				t.Error("no timeline")
			}
			if pr.Queries == 0 || len(pr.Errors) != 0 {
				t.Errorf("queries %d errors %v %s", pr.Queries, pr.Errors, pr.FirstError)
			}
		})
	}
	if q := p.Schedule().QueriesPerSecond(); res.QueriesPerSecond <= 0 || res.QueriesPerSecond > q {
		t.Errorf("queries per second %.1f, want at most the schedule's 3 probes × 8 polls per %s, %.0f", res.QueriesPerSecond, cfg.WriteInterval, q)
	}
}

// slowWriter stores a write after a delay, whatever its context says, as a storage does once
// the request has reached it.
type slowWriter struct {
	delay  time.Duration
	stored chan int64
}

func (s *slowWriter) Write(_ context.Context, _ [][]workload.Label, t int64, _ float64) (int, error) {
	time.Sleep(s.delay)
	s.stored <- t
	return http.StatusNoContent, nil
}

// TestWriteUnderWayAtTheEndIsCounted ends the run while a canary write is under way: the
// storage stores it, so the account counts it acked (the e2e tests compare the storages'
// ingestion counters with the account exactly).
func TestWriteUnderWayAtTheEndIsCounted(t *testing.T) {
	w := &slowWriter{delay: 300 * time.Millisecond, stored: make(chan int64, 10)}
	cfg := config.Freshness{Interval: 100 * time.Millisecond, WriteInterval: 100 * time.Millisecond, Timeout: time.Minute}
	p := newProber(t, cfg, w, http.NotFoundHandler())
	ctx, cancel := context.WithTimeout(t.Context(), 250*time.Millisecond) // the first write starts at 100ms
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	res := p.Results()
	if stored := int64(len(w.stored)); stored != 1 || res.Written != 1 || res.Acked != 1 {
		t.Fatalf("stored %d, written %d, acked %d: want 1 each", stored, res.Written, res.Acked)
	}
	if got := res.Instant.Pending + res.Instant.Visible + res.Instant.NeverVisible; got != 1 {
		t.Errorf("instant probe accounts for %d samples, want the 1 acked", got)
	}
}

// TestResumeContinuesTheCounts resumes a prober from a checkpoint's figures: its counts and
// histograms add to the checkpoint's, and the samples pending then count as abandoned.
func TestResumeContinuesTheCounts(t *testing.T) {
	fs := &fakeStorage{delay: 100 * time.Millisecond, indexDelay: 100 * time.Millisecond}
	cfg := config.Freshness{Interval: 50 * time.Millisecond, WriteInterval: 200 * time.Millisecond, Timeout: 2 * time.Second}
	run := func(p *Prober) *results.Freshness {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		if err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return p.Results()
	}
	cp := run(newProber(t, cfg, fs, fs))
	cp.Instant.Pending += 2 // as if two samples were pending when the checkpoint was written
	cp.Acked += 2
	resumed := newProber(t, cfg, fs, fs)
	if err := resumed.Resume(cp); err != nil {
		t.Fatal(err)
	}
	final := run(resumed)
	if final.Acked <= cp.Acked || final.Written <= cp.Written {
		t.Fatalf("acked %d written %d, want above the checkpoint's %d and %d", final.Acked, final.Written, cp.Acked, cp.Written)
	}
	in := final.Instant
	if in.Abandoned != cp.Instant.Pending {
		t.Errorf("abandoned %d, want the checkpoint's pending %d", in.Abandoned, cp.Instant.Pending)
	}
	if got := in.Visible + in.NeverVisible + in.Pending + in.Abandoned; got != final.Acked {
		t.Errorf("visible %d + never %d + pending %d + abandoned %d = %d, want acked %d", in.Visible, in.NeverVisible, in.Pending, in.Abandoned, got, final.Acked)
	}
	if in.Visible <= cp.Instant.Visible || len(in.Timeline) < len(cp.Instant.Timeline) {
		t.Errorf("visible %d (checkpoint %d), %d timeline points (checkpoint %d): want both continued", in.Visible, cp.Instant.Visible, len(in.Timeline), len(cp.Instant.Timeline))
	}
	h, err := hdrhistogram.Decode([]byte(in.Seconds.Histogram))
	if err != nil || h.TotalCount() != in.Visible {
		t.Errorf("histogram holds %d samples (%v), want every visible one, %d", h.TotalCount(), err, in.Visible)
	}
	if q := resumed.Schedule().QueriesPerSecond(); final.QueriesPerSecond <= 0 || final.QueriesPerSecond > q {
		t.Errorf("queries per second %.1f over both runs, want in (0, %.0f]", final.QueriesPerSecond, q)
	}
}
