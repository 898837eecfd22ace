package verify

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tsbench/tsbench/internal/results"
)

// lockedProm serves a fake storage that the test changes between checks.
type lockedProm struct {
	mu sync.Mutex // guards p
	p  *fakeProm
}

func (l *lockedProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.ServeHTTP(w, r)
}

// forget deletes every sample in [from, to] (ms): a storage restarted from a copy of its data
// taken at from loses what it acked after.
func (l *lockedProm) forget(from, to int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, ss := range l.p.series {
		kept := ss[:0]
		for _, s := range ss {
			if s.t < from || s.t > to {
				kept = append(kept, s)
			}
		}
		l.p.series[key] = kept
	}
}

// TestContinuousFindsDataLostAfterAck: three checks a minute apart over a storage that keeps
// everything until, after the second check, it loses the second minute. The third check
// reads again the scrape the second found complete, and counts its samples lost after ack
// (the NaN series aside, counted as NaN altered), at its own time; the storage that kept its
// data shows nothing.
func TestContinuousFindsDataLostAfterAck(t *testing.T) {
	wl := &fakeWorkload{targets: 4, series: 5, start: 1_700_000_000_000, interval: 1000, churn: 20}
	all := window{wl.start, wl.start + 179_100}
	losing, keeping := &lockedProm{p: newFakeProm()}, &lockedProm{p: newFakeProm()}
	writeAll(wl, all, losing.p)
	writeAll(wl, all, keeping.p)
	cfg := testConfig(40, time.Second) // 20 samples a check: 4 scrapes of 5 series held
	v := newVerifier(cfg, wl, []Target{startFake(t, losing, "losing"), startFake(t, keeping, "keeping")}, nil, slog.New(slog.DiscardHandler))
	v.Settle = 0
	reg := prometheus.NewRegistry()
	c := v.Continuous(time.Minute, NewMetrics(reg))
	from := time.UnixMilli(wl.start)
	var ats []time.Time
	for minute := range int64(3) {
		if minute == 2 {
			losing.forget(wl.start+60_000, wl.start+119_999)
		}
		before := time.Now().UTC()
		c.Check(t.Context(), from, time.UnixMilli(wl.start+minute*60_000+59_100))
		ats = append(ats, before)
	}
	got := c.Results()
	type row struct{ Missing, LostAfterAck, Rechecked int64 }
	var rows []row
	for _, ch := range got["losing"].Checks {
		rows = append(rows, row{ch.Missing, ch.LostAfterAck, ch.Rechecked})
	}
	// Rechecked: the scrapes held before each check, 5 samples each (the NaN among them).
	want := []row{{0, 0, 0}, {0, 0, 5}, {4, 4, 10}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("losing storage's checks (-want +got):\n%s", diff)
	}
	lost := got["losing"]
	if lost.LostAfterAck != 4 || lost.LostAfterAckAt == nil || lost.LostAfterAckAt.Before(ats[2]) {
		t.Errorf("lostAfterAck %d at %v, want 4 at the third check (started after %s)", lost.LostAfterAck, lost.LostAfterAckAt, ats[2])
	}
	for _, h := range lost.Continuous.Held {
		if ms := h.Time.UnixMilli(); ms >= wl.start+60_000 && ms < wl.start+120_000 {
			t.Errorf("scrape %+v lost and still held", h)
		}
	}
	m := c.metrics
	if n, lost := testutil.ToFloat64(m.checks.WithLabelValues("losing")), testutil.ToFloat64(m.lost.WithLabelValues("losing")); n != 3 || lost != 4 {
		t.Errorf("/metrics: %v checks, %v lost after ack; want 3 and 4", n, lost)
	}
	kept := got["keeping"]
	if kept.LostAfterAck != 0 || !kept.Continuous.Total.Clean() || kept.Continuous.Total.Checks != 3 {
		t.Errorf("keeping storage: lostAfterAck %d, total %+v, want 0 and 3 clean checks", kept.LostAfterAck, kept.Continuous.Total)
	}
	// The lost scrape's NaN sample counts where every NaN lost or altered does.
	want3 := fmt.Sprintf("3 checks every 1m0s: %d samples: 4 lost after ack (first missed by the check at %s), 1 NaN dropped or altered",
		lost.Continuous.Total.Checked, lost.LostAfterAckAt.Format(time.RFC3339))
	if s := lost.ContinuousVerdict(); s != want3 {
		t.Errorf("verdict %q, want %q", s, want3)
	}
}

// TestContinuousRestore: a run resumed from the checks' results continues after the newest
// data checked and after its restart (the gap is not read), and reads the same held scrapes
// again.
func TestContinuousRestore(t *testing.T) {
	wl := &fakeWorkload{targets: 4, series: 5, start: 1_700_000_000_000, interval: 1000}
	p := &lockedProm{p: newFakeProm()}
	writeAll(wl, window{wl.start, wl.start + 119_100}, p.p)
	target := startFake(t, p, "s")
	newC := func() *Continuous {
		v := newVerifier(testConfig(40, time.Second), wl, []Target{target}, nil, slog.New(slog.DiscardHandler))
		v.Settle = 0
		return v.Continuous(time.Minute, nil)
	}
	first := newC()
	first.Check(t.Context(), time.UnixMilli(wl.start), time.UnixMilli(wl.start+59_100))
	resumed := newC()
	restart := time.UnixMilli(wl.start + 69_000) // the gap: 59.1 s to 69 s
	resumed.Restore(first.Results(), restart)
	resumed.Check(t.Context(), time.UnixMilli(wl.start), time.UnixMilli(wl.start+119_100))
	got := resumed.Results()["s"]
	if n := len(got.Checks); n != 2 {
		t.Fatalf("%d checks, want 2", n)
	}
	second := got.Checks[1]
	if want := time.UnixMilli(wl.start + 69_001).UTC(); !second.Span.From.Equal(want) || second.Rechecked != 5 || !got.Continuous.Total.Clean() {
		t.Errorf("second check: span from %s, rechecked %d, total clean %v; want from %s, 5 rechecked, clean",
			second.Span.From, second.Rechecked, got.Continuous.Total.Clean(), want)
	}
}

// TestHeldScrapesStaySpreadAndBounded: whatever the number of checks, at most n scrapes are
// held, the oldest and the newest among them, and none two neighbours apart of the others.
func TestHeldScrapesStaySpreadAndBounded(t *testing.T) {
	var hs []results.HeldScrape
	base := time.Unix(1_700_000_000, 0)
	for i := range 1000 {
		hs = thin(append(hs, results.HeldScrape{Scrape: int64(i), Time: base.Add(time.Duration(i) * time.Minute)}), 4)
	}
	var got []int64
	for _, h := range hs {
		got = append(got, h.Scrape)
	}
	// Spread: 0 and 999 kept, and the gaps between kept scrapes within a factor 2 of each other.
	if len(got) != 4 || got[0] != 0 || got[3] != 999 {
		t.Fatalf("held %v, want 4 from 0 to 999", got)
	}
	for i := 1; i < len(got); i++ {
		if gap := got[i] - got[i-1]; gap < 999/3/2 || gap > 2*999/3+1 {
			t.Errorf("held %v: gap %d not spread", got, gap)
		}
	}
}

// TestCheckCostSameAfterAWeek: a check in the seventh day of a run reads as many samples in as
// many queries as one in the first hour, and keeps as many scrapes: its new data is one
// interval, and what it reads again is bounded and spread over the run. (Without churn, so
// that every target's newest minute is the same shape whichever the check picks.)
func TestCheckCostSameAfterAWeek(t *testing.T) {
	const interval, week = 10_000, 7 * 24 * 3_600_000
	wl := &fakeWorkload{targets: 4, series: 5, start: 1_700_000_000_000, interval: interval}
	costOf := func(span int64) (results.Check, int) {
		p := &lockedProm{p: newFakeProm()}
		v := newVerifier(testConfig(40, 10*time.Second), wl, []Target{startFake(t, p, "s")}, nil, slog.New(slog.DiscardHandler))
		v.Settle = 0
		c := v.Continuous(10*time.Minute, nil)
		// Held before: 4 scrapes spread over all but the last 10 minutes, all stored.
		checkedTo := wl.start + span - 600_000
		prev := &results.Verify{Continuous: &results.Continuous{CheckedTo: time.UnixMilli(checkedTo)}}
		for i := range int64(4) {
			k := i * (checkedTo - wl.start) / interval / 4
			prev.Continuous.Held = append(prev.Continuous.Held, results.HeldScrape{Target: int(i), Scrape: k, Time: time.UnixMilli(wl.ScrapeTime(int(i), k))})
			wl.Scrape(p.p, int(i), k)
		}
		for i := range wl.targets { // the last 10 minutes, and the scrape after (markers)
			for k := (checkedTo - wl.start) / interval; wl.ScrapeTime(i, k) <= wl.start+span+interval; k++ {
				wl.Scrape(p.p, i, k)
			}
		}
		c.Restore(map[string]*results.Verify{"s": prev}, time.Time{})
		c.Check(t.Context(), time.UnixMilli(wl.start), time.UnixMilli(wl.start+span))
		got := c.Results()["s"]
		return got.Checks[0], len(got.Continuous.Held)
	}
	hour, heldHour := costOf(3_600_000)
	weekCheck, heldWeek := costOf(week)
	if !hour.Clean() || !weekCheck.Clean() || hour.Rechecked != 20 || weekCheck.Rechecked != 20 {
		t.Fatalf("checks not clean or not reading 4 held scrapes: hour %+v, week %+v", hour, weekCheck)
	}
	t.Logf("a check after an hour: %d reads, %d samples, %d held; after a week: %d reads, %d samples, %d held",
		hour.Reads, hour.Checked, heldHour, weekCheck.Reads, weekCheck.Checked, heldWeek)
	if hour.Reads != weekCheck.Reads || hour.Checked != weekCheck.Checked || heldHour != heldWeek || heldWeek > 4 {
		t.Errorf("after an hour: %d reads, %d samples, %d held; after a week: %d reads, %d samples, %d held; want the same, at most 4 held",
			hour.Reads, hour.Checked, heldHour, weekCheck.Reads, weekCheck.Checked, heldWeek)
	}
}
