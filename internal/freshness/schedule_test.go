package freshness

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// defaultReadLoad is the default workload's queries per second per storage: 55 rules every
// 10s, 7 panels every 30s and 4 every minute, 12 index lookups every 30s.
const defaultReadLoad = 55.0/10 + 7.0/30 + 4.0/60 + 12.0/30

// TestScheduleDefault: at the default config and workload a sample every 38.7 s, asked for
// 8 times by each probe from 0.1 s to 38.7 s after its ack, 0.62 queries/s: a tenth of the
// workload's 6.2.
func TestScheduleDefault(t *testing.T) {
	s := NewSchedule(config.Default().Freshness, defaultReadLoad)
	ms := func(d ...int) []time.Duration {
		out := make([]time.Duration, len(d))
		for i, v := range d {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	want := Schedule{Write: 38710 * time.Millisecond, Polls: ms(100, 234, 549, 1285, 3011, 7054, 16525, 38710)}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if q := s.QueriesPerSecond(); q > LoadShare*defaultReadLoad {
		t.Errorf("%.3f queries/s, above a tenth of %.2f", q, defaultReadLoad)
	}
}

// TestScheduleOf: an explicit write interval is kept; polls never pass the timeout; a
// workload that reads nothing gets a sample per timeout; a write interval as short as the
// first poll has one poll.
func TestScheduleOf(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      config.Freshness
		readLoad float64
		write    time.Duration
		first    time.Duration
		last     time.Duration
		polls    int
	}{
		{"explicit", config.Freshness{Interval: 100 * time.Millisecond, WriteInterval: time.Second, Timeout: time.Minute}, 6.2, time.Second, 100 * time.Millisecond, time.Second, 8},
		{"beyond the timeout", config.Freshness{Interval: 100 * time.Millisecond, Timeout: 10 * time.Second}, 6.2, 38710 * time.Millisecond, 100 * time.Millisecond, 10 * time.Second, 8},
		{"no read load", config.Freshness{Interval: time.Second, Timeout: time.Minute}, 0, time.Minute, time.Second, time.Minute, 8},
		{"one poll", config.Freshness{Interval: time.Second, WriteInterval: time.Second, Timeout: time.Minute}, 6.2, time.Second, time.Second, time.Second, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewSchedule(c.cfg, c.readLoad)
			if s.Write != c.write || s.Polls[0] != c.first || s.Polls[len(s.Polls)-1] != c.last || len(s.Polls) != c.polls {
				t.Errorf("write %s, polls %v: want write %s, %d polls from %s to %s", s.Write, s.Polls, c.write, c.polls, c.first, c.last)
			}
			for i := 1; i < len(s.Polls); i++ {
				if s.Polls[i] <= s.Polls[i-1] {
					t.Errorf("polls %v not ascending", s.Polls)
				}
			}
		})
	}
}

// inBubble serves requests with an http.Handler in the test's synctest bubble, through
// httptest's recorder: a real loopback server's goroutines would not be durably blocked, so
// the bubble's clock could not advance while a request is in flight.
type inBubble struct{ h http.Handler }

func (b inBubble) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// counted counts the queries a handler answers, by path, and keeps when each came.
type counted struct {
	h  http.Handler
	mu sync.Mutex
	n  map[string]int64
	at map[string][]time.Time
}

func newCounted(h http.Handler) *counted {
	return &counted{h: h, n: map[string]int64{}, at: map[string][]time.Time{}}
}

func (c *counted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.n[r.URL.Path]++
	c.at[r.URL.Path] = append(c.at[r.URL.Path], time.Now())
	c.mu.Unlock()
	c.h.ServeHTTP(w, r)
}

// bubbleProber is newProber with its queries answered in the bubble.
func bubbleProber(t *testing.T, cfg config.Freshness, readLoad float64, fs *fakeStorage, h http.Handler) *Prober {
	t.Helper()
	c, err := storage.NewClient("fake", config.Storage{ReadURL: "http://fake/"}, storage.Read, 3)
	if err != nil {
		t.Fatal(err)
	}
	c.HTTP = &http.Client{Transport: inBubble{h}}
	return New("fake", cfg, readLoad, fs, query.NewAPI(c, "http://fake/"), 10*time.Second, slog.New(slog.DiscardHandler))
}

// TestEqualQueriesWhateverTheDelay (issue 29, item 8) runs the default canary against two
// storages, one that shows a sample 0.1 s after its ack and one 5 s after: each is asked
// exactly as often, 8 queries per probe per sample, at most a tenth of the workload's read
// load; the figures are the polls that saw the samples, each with the poll before it (the
// resolution: 5 s reads as 3.01–7.05 s at the ladder, the first sample's polls, and 4.83–5.31
// s at the p50 of five samples once the staircase placed the later ones' polls around it;
// each probe's newest polls are stated). Before, each probe polled every 100 ms until it saw
// the sample: the 5 s storage was asked 50 times per sample and probe, the other once.
func TestEqualQueriesWhateverTheDelay(t *testing.T) {
	const samples = 5
	type outcome struct {
		res     *results.Freshness
		queries map[string]int64
	}
	run := func(delay time.Duration) outcome {
		var out outcome
		synctest.Test(t, func(t *testing.T) {
			fs := &fakeStorage{delay: delay, indexDelay: delay}
			h := newCounted(fs)
			p := bubbleProber(t, config.Default().Freshness, defaultReadLoad, fs, h)
			w := p.Schedule().Write
			// Until samples full schedules are done, and the next sample written but not yet
			// asked for (its first poll is 100ms after).
			ctx, cancel := context.WithTimeout(t.Context(), (samples+1)*w+50*time.Millisecond)
			defer cancel()
			if err := p.Run(ctx); err != nil {
				t.Error(err)
			}
			out = outcome{p.Results(), h.n}
		})
		return out
	}
	quick, late := run(100*time.Millisecond), run(5*time.Second)
	perProbe := int64(samples * PollsPerSample)
	want := map[string]int64{"/api/v1/query": perProbe, "/api/v1/query_range": perProbe, "/api/v1/series": perProbe}
	for _, c := range []struct {
		name    string
		o       outcome
		figures string // p50 and max: the poll before the one that saw it – that poll
	}{
		{"shown after 0.1s", quick, "0.00–0.10, max 0.00–0.10"},
		{"shown after 5s", late, "4.83–5.31, max 4.92–7.05"}, // the max is the first sample's, at the ladder
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(want, c.o.queries); diff != "" {
				t.Errorf("queries the storage answered (-want +got):\n%s", diff)
			}
			f := c.o.res
			if f.Acked != samples+1 {
				t.Fatalf("acked %d, want %d", f.Acked, samples+1)
			}
			if bound := LoadShare * defaultReadLoad; f.QueriesPerSecond > bound || f.QueriesPerSecond < 0.8*bound {
				t.Errorf("%.3f queries/s, want at most a tenth of the read load, %.3f, and near it", f.QueriesPerSecond, bound)
			}
			if f.ReadLoadQueriesPerSecond != defaultReadLoad || len(f.PollSeconds) != PollsPerSample || f.PollSeconds[0] != 0.1 || f.PollSeconds[PollsPerSample-1] != f.WriteIntervalSeconds {
				t.Errorf("read load %v, polls %v, write interval %v: want the schedule stated", f.ReadLoadQueriesPerSecond, f.PollSeconds, f.WriteIntervalSeconds)
			}
			for name, pr := range map[string]*results.FreshnessProbe{"instant": f.Instant, "range": f.Range, "series": f.Series} {
				if pr.Queries != perProbe || pr.MergedPolls != 0 {
					t.Errorf("%s: %d queries, %d merged, want %d, 0", name, pr.Queries, pr.MergedPolls, perProbe)
				}
				if got := pr.Visible + pr.NeverVisible + pr.Pending + pr.Abandoned; got != f.Acked || pr.Visible != samples {
					t.Errorf("%s: visible %d + never %d + pending %d + abandoned %d = %d, want acked %d, %d visible", name, pr.Visible, pr.NeverVisible, pr.Pending, pr.Abandoned, got, f.Acked, samples)
				}
				lo, hi := pr.LowerBoundSeconds, pr.Seconds
				if hi.P50 == nil || lo.P50 == nil {
					t.Fatalf("%s: no figures: %+v", name, pr)
				}
				if got := fmt.Sprintf("%.2f–%.2f, max %.2f–%.2f", *lo.P50, *hi.P50, *lo.Max, *hi.Max); got != c.figures {
					t.Errorf("%s: p50 %s, want %s", name, got, c.figures)
				}
				if ps := pr.LastPollSeconds; len(ps) != PollsPerSample || ps[0] != f.PollSeconds[0] || ps[PollsPerSample-1] != f.WriteIntervalSeconds {
					t.Errorf("%s: newest polls %v, want 8 from the ladder's first to its last, %v", name, ps, f.PollSeconds)
				}
			}
		})
	}
}
