package freshness

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// warmUp is how many samples a probe's staircase takes to place a steady delay, at the start
// and again after the delay changed: the ladder's bracket, the region's first pass over it,
// and (after a change) the guard's.
const warmUp = 3

// TestStaircaseResolution (issue 37, item 6) runs the default canary against a storage whose
// instant and range queries show a sample 4 s after its ack and its index 2.5 s after, and
// one whose delays go from 1 s to 6 s at the seventh sample: after the warm-up, every
// probe's bracket of every sample (from the last query that did not return it to the first
// that did) holds the true delay and is at most max(delay/10, 0.2 s) wide, and each probe
// still asks for each sample exactly 8 times. With the fixed ladder every 4 s sample read
// 3.01–7.05 s.
func TestStaircaseResolution(t *testing.T) {
	jump := func(n int) time.Duration {
		if n >= 6 {
			return 5 * time.Second
		}
		return 0
	}
	for _, c := range []struct {
		name    string
		fs      *fakeStorage
		samples int
		change  int // the first sample at the new delay; 0: none
	}{
		{"4s, the index 2.5s", &fakeStorage{delay: 4 * time.Second, indexDelay: 2500 * time.Millisecond}, 10, 0},
		{"1s, then 6s", &fakeStorage{delay: time.Second, indexDelay: time.Second, later: jump}, 16, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newCounted(c.fs)
				p := bubbleProber(t, config.Default().Freshness, defaultReadLoad, c.fs, h)
				// Until samples full schedules are done, and the next sample written but
				// not yet asked for (its first poll is 100ms after).
				ctx, cancel := context.WithTimeout(t.Context(), time.Duration(c.samples+1)*p.Schedule().Write+50*time.Millisecond)
				defer cancel()
				if err := p.Run(ctx); err != nil {
					t.Error(err)
				}
				f := p.Results()
				for _, pr := range []struct {
					path  string
					delay time.Duration
					res   *results.FreshnessProbe
				}{
					{"/api/v1/query", c.fs.delay, f.Instant},
					{"/api/v1/query_range", c.fs.delay, f.Range},
					{"/api/v1/series", c.fs.indexDelay, f.Series},
				} {
					if want := int64(c.samples * PollsPerSample); h.n[pr.path] != want || pr.res.Queries != want || pr.res.MergedPolls != 0 {
						t.Errorf("%s: the storage answered %d queries, the probe made %d, %d merged: want %d, %d, 0", pr.path, h.n[pr.path], pr.res.Queries, pr.res.MergedPolls, want, want)
					}
					for n, s := range c.fs.samples[:c.samples] {
						if n < warmUp || c.change > 0 && n >= c.change && n < c.change+warmUp {
							continue
						}
						ack := time.UnixMilli(s.t)
						d := s.at.Sub(ack) + pr.delay
						lo, hi := bracketOf(h.at[pr.path], ack, ack.Add(d))
						if w := max(d/10, 200*time.Millisecond); lo >= d || hi < d || hi-lo > w {
							t.Errorf("%s sample %d, shown %s after its ack: bracketed %s–%s, want it within at most %s", pr.path, n, d, lo, hi, w)
						}
					}
					if c.change == 0 {
						lo, hi := *pr.res.LowerBoundSeconds.P50, *pr.res.Seconds.P50
						if d := pr.delay.Seconds(); lo >= d || hi < d || hi-lo > max(d/10, 0.2) {
							t.Errorf("%s: p50 %.3f–%.3f s, want it to hold %.1f s within %.2f s", pr.path, lo, hi, d, max(d/10, 0.2))
						}
					}
				}
			})
		})
	}
}

// bracketOf is where queries at times placed a sample acked at ack and shown at shown: from
// the last query after the ack before it showed to the first query at or after, both from
// the ack (hi is an hour when none came).
func bracketOf(times []time.Time, ack, shown time.Time) (lo, hi time.Duration) {
	hi = time.Hour
	for _, q := range times {
		switch {
		case !q.After(ack):
		case q.Before(shown):
			lo = max(lo, q.Sub(ack))
		default:
			hi = min(hi, q.Sub(ack))
		}
	}
	return lo, hi
}

// TestStaircasePolls (milliseconds after the ack): the first sample is asked for at the
// ladder; a later one at the ladder's ends, a guard beside each end of the region the latest
// samples showed in, and 4 polls over that region, always 8 and at least freshness.interval
// apart; a ladder too short to place, or samples that their own last poll did not find, keep
// the ladder. A sample the last poll
// found counts, however late that poll ran (a real run's polls start milliseconds after
// their time: with a 5 s delay on an 8.5 s ladder every sample read 4.51–8.52 s, taken for
// one found after the last poll).
func TestStaircasePolls(t *testing.T) {
	def := NewSchedule(config.Default().Freshness, defaultReadLoad).Polls // 0.1 … 38.71 s
	short := NewSchedule(config.Freshness{Interval: time.Second, WriteInterval: time.Second, Timeout: time.Minute}, 0).Polls
	half := NewSchedule(config.Freshness{Interval: 100 * time.Millisecond, WriteInterval: 500 * time.Millisecond, Timeout: time.Minute}, 0).Polls
	s := func(v ...int) string { return fmt.Sprint(v) }
	for _, c := range []struct {
		name   string
		ladder []time.Duration
		seen   []bracket
		want   string
	}{
		{"first sample", def, nil, s(100, 234, 549, 1285, 3011, 7054, 16525, 38710)},
		{"after the ladder's 3.01–7.05 s", def, []bracket{{3011 * ms, 7054 * ms}}, s(100, 549, 3011, 3999, 5311, 7054, 16525, 38710)},
		{"then 3.64–4.00 s: 3 × 0.2 s around it", def, []bracket{{3011 * ms, 7054 * ms}, {3640 * ms, 4000 * ms}}, s(100, 593, 3520, 3710, 3909, 4120, 12629, 38710)},
		{"a jump from 1 s to 1.15–6.67 s", def, []bracket{{950 * ms, 1050 * ms}, {950 * ms, 1050 * ms}, {1150 * ms, 6670 * ms}}, s(100, 339, 1150, 2066, 3712, 6670, 16068, 38710)},
		{"seen at the first poll: 0.1 s apart", def, []bracket{{0, 100 * ms}}, s(100, 200, 300, 400, 500, 600, 2782, 38710)},
		{"seen by the last poll, run 2ms late", def, []bracket{{16525 * ms, 38712 * ms}}, s(100, 1285, 16525, 20373, 25118, 30968, 34623, 38710)},
		{"seen after the last poll", def, []bracket{{38710 * ms, 39 * time.Second}}, s(100, 234, 549, 1285, 3011, 7054, 16525, 38710)},
		{"close to the last poll", def, []bracket{{33 * time.Second, 36 * time.Second}}, s(100, 234, 549, 1285, 3011, 7054, 16525, 38710)},
		{"a ladder of one poll", short, []bracket{{0, time.Second}}, s(1000)},
		{"no room 0.1 s apart", half, []bracket{{100 * ms, 126 * ms}}, s(100, 126, 158, 199, 251, 316, 397, 500)},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := staircase{ladder: c.ladder, interval: c.ladder[0]}
			for _, b := range c.seen {
				st.seen(b)
			}
			var got []int
			for _, d := range st.polls() {
				got = append(got, int(d.Milliseconds()))
			}
			if s(got...) != c.want {
				t.Errorf("polls %v ms, want %s", got, c.want)
			}
		})
	}
}

const ms = time.Millisecond

// TestEndCutsTheSamePolls: a run that ends 3 s after its sixth sample's ack cuts that
// sample's polls alike on a storage that shows samples 1 s after their ack and one 5 s
// after, though the staircase placed their earlier samples' polls apart: the last sample is
// asked for at the ladder (0.1, 0.234, 0.549 and 1.285 s before the end), so each storage got
// exactly as many queries.
func TestEndCutsTheSamePolls(t *testing.T) {
	const samples = 5
	got := map[time.Duration]map[string]int64{}
	for _, delay := range []time.Duration{time.Second, 5 * time.Second} {
		synctest.Test(t, func(t *testing.T) {
			fs := &fakeStorage{delay: delay, indexDelay: delay}
			h := newCounted(fs)
			p := bubbleProber(t, config.Default().Freshness, defaultReadLoad, fs, h)
			ctx, cancel := context.WithTimeout(t.Context(), time.Duration(samples+1)*p.Schedule().Write+3*time.Second)
			defer cancel()
			if err := p.Run(ctx); err != nil {
				t.Error(err)
			}
			got[delay] = h.n
			if ps := p.Results().Instant.LastPollSeconds; len(ps) != PollsPerSample || ps[1] == p.Results().PollSeconds[1] {
				t.Errorf("delay %s: newest polls %v, want the fifth sample's, placed by the staircase", delay, ps)
			}
		})
	}
	perProbe := int64(samples*PollsPerSample + 4)
	want := map[string]int64{"/api/v1/query": perProbe, "/api/v1/query_range": perProbe, "/api/v1/series": perProbe}
	for delay, n := range got {
		if diff := cmp.Diff(want, n); diff != "" {
			t.Errorf("delay %s: queries the storage answered (-want +got):\n%s", delay, diff)
		}
	}
}
