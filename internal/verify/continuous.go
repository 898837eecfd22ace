package verify

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// kindHeld marks the read again of a scrape an earlier check found complete.
const kindHeld = "held"

// maxHeld bounds the scrapes kept per storage to read again, whatever verifySamples.
const maxHeld = 64

// Continuous is the read-back while the load runs (issue 19). Every check reads a sample of
// the data that became settled since the previous check, planned as the read-back at the end
// plans a window (about verifySamples/2 samples), and reads again the scrapes earlier checks
// found complete: a sample that was returned once and is missing now was lost after its ack.
//
// Invariant: a check costs the same at any age of the run. The new data is a window of
// verifyInterval; the scrapes kept to read again are at most verifySamples/2 samples (one
// target's scrape each, at most maxHeld), thinned to stay spread over the run; the list of
// checks is bounded by results.MaxChecks. What a resumed run needs to continue is in
// results.Verify (Checks, Continuous, LostAfterAck): Restore takes it back.
type Continuous struct {
	v        *Verifier
	interval time.Duration // verifyInterval
	held     int           // scrapes kept per storage
	metrics  *Metrics      // nil: none

	mu    sync.Mutex // guards state
	state map[string]*results.Verify
}

// Continuous returns the checks of v's targets, made every interval, counted in m (nil: no
// metrics).
func (v *Verifier) Continuous(interval time.Duration, m *Metrics) *Continuous {
	c := &Continuous{
		v: v, interval: interval, state: map[string]*results.Verify{}, metrics: m,
		held: min(maxHeld, max(2, v.budget/2/max(1, v.wl.SeriesPerTarget()))),
	}
	for _, t := range v.targets {
		c.state[t.Name] = &results.Verify{Continuous: &results.Continuous{IntervalSeconds: interval.Seconds()}}
	}
	return c
}

// Restore continues from the checks of an earlier run (a checkpoint's results): a storage's
// checks, totals, lost samples and held scrapes. The next check's new data starts after
// after, too: a resumed run does not know what it wrote between its checkpoint and its
// restart (the gap), nor reads it back.
func (c *Continuous) Restore(prev map[string]*results.Verify, after time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, p := range prev {
		if _, ok := c.state[name]; ok && p != nil && p.Continuous != nil {
			s := copyState(p)
			if after.After(s.Continuous.CheckedTo) {
				s.Continuous.CheckedTo = after.UTC()
			}
			c.state[name] = s
		}
	}
}

// Results returns each storage's checks so far, by name: Checks, Continuous, LostAfterAck and
// LostAfterAckAt of a results.Verify, a copy safe to keep.
func (c *Continuous) Results() map[string]*results.Verify {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]*results.Verify, len(c.state))
	for name, s := range c.state {
		out[name] = copyState(s)
	}
	return out
}

func copyState(s *results.Verify) *results.Verify {
	cont := *s.Continuous
	cont.Held = append([]results.HeldScrape(nil), cont.Held...)
	cont.Examples = append([]string(nil), cont.Examples...)
	return &results.Verify{
		Checks: append([]results.Check(nil), s.Checks...), Continuous: &cont,
		LostAfterAck: s.LostAfterAck, LostAfterAckAt: s.LostAfterAckAt,
	}
}

// Check reads back, on every storage, a sample of the data settled since the previous check
// (to: every sample before it is acked and searchable) and the held scrapes; from is where
// the run's data begins. The check ends when ctx does: reads not made count as unchecked.
func (c *Continuous) Check(ctx context.Context, from, to time.Time) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(c.v.Settle):
	}
	at := time.Now().UTC()
	start := time.Now()
	c.mu.Lock()
	newFrom := from
	for _, s := range c.state {
		if done := s.Continuous.CheckedTo; !done.IsZero() && !done.Before(newFrom) {
			newFrom = done.Add(time.Millisecond) // every storage is checked up to one edge
		}
	}
	c.mu.Unlock()
	w := window{from: newFrom.UnixMilli(), to: to.UnixMilli()}
	var fresh []unit
	if w.to >= w.from {
		// Seeded by the window too: each check picks other targets.
		fresh = plan(c.v.wl, c.v.seed^uint64(w.from), w, c.v.interval, max(1, c.v.budget/2))
		for i := range fresh {
			expect(c.v.wl, &fresh[i], c.v.interval)
		}
	}
	span := results.Span{From: time.UnixMilli(w.from).UTC(), To: time.UnixMilli(w.to).UTC()}
	held := results.Span{From: time.UnixMilli(from.UnixMilli()).UTC(), To: span.To}
	var wg sync.WaitGroup
	for _, t := range c.v.targets {
		wg.Go(func() { c.checkTarget(ctx, t, fresh, at, start, span, held) })
	}
	wg.Wait()
}

// checkTarget is one storage's part of a check.
func (c *Continuous) checkTarget(ctx context.Context, t Target, fresh []unit, at, start time.Time, span, heldSpan results.Span) {
	log := c.v.log.With("storage", t.Name)
	c.mu.Lock()
	held := append([]results.HeldScrape(nil), c.state[t.Name].Continuous.Held...)
	c.mu.Unlock()
	// The held scrapes first: if the check runs out of time, what is cut is new data, not
	// the reads that find data lost.
	units := make([]unit, 0, len(held)+len(fresh))
	for _, h := range held {
		u := unit{kind: kindHeld, target: h.Target, kFrom: h.Scrape, kTo: h.Scrape}
		expect(c.v.wl, &u, c.v.interval)
		units = append(units, u)
	}
	units = c.v.forProtocol(t, append(units, fresh...), log)
	res, _, missing := c.v.readBack(ctx, newReader(t), t, units)
	check := results.Check{
		At: at, Span: span, Held: heldSpan, Checks: 1,
		Checked: res.CheckedSamples, Missing: res.MissingSamples, Changed: res.ChangedValues,
		Duplicate: res.DuplicateSamples, Unexpected: res.UnexpectedSamples, NaNAltered: res.NaNAltered,
		ReadErrors: res.ReadErrors, Unchecked: res.UncheckedSamples, Reads: res.Reads,
		Seconds: time.Since(start).Seconds(),
	}
	var kept []results.HeldScrape
	for i, h := range held {
		if missing[i] >= 0 { // -1: the read failed or was not made; it is tried again next time
			check.Rechecked += units[i].samples
		}
		if missing[i] > 0 {
			check.LostAfterAck += missing[i]
			continue
		}
		kept = append(kept, h)
	}
	if h, ok := newestComplete(c.v.wl, fresh, missing[len(held):], at); ok {
		kept = thin(append(kept, h), c.held)
	}

	c.metrics.observe(t.Name, check)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state[t.Name]
	s.Checks = results.AddCheck(s.Checks, check)
	check.AddTo(&s.Continuous.Total)
	s.Continuous.Held = kept
	if span.To.After(s.Continuous.CheckedTo) {
		s.Continuous.CheckedTo = span.To
	}
	for _, e := range res.Examples {
		if len(s.Continuous.Examples) < maxExamples {
			s.Continuous.Examples = append(s.Continuous.Examples, fmt.Sprintf("check at %s: %s", at.Format(time.RFC3339), e))
		}
	}
	if check.LostAfterAck > 0 {
		s.LostAfterAck += check.LostAfterAck
		if s.LostAfterAckAt == nil {
			s.LostAfterAckAt = &at
		}
		log.Error("samples lost after their ack: a check found them, this one did not", "lost", check.LostAfterAck, "check_at", at)
	}
	log.Info("checked during the run", "checked", check.Checked, "missing", check.Missing, "lost_after_ack", check.LostAfterAck,
		"reads", check.Reads, "seconds", check.Seconds)
}

// newestComplete picks, of the fresh units read with nothing missing, the newest scrape, to be
// read again by the next checks.
func newestComplete(wl Workload, fresh []unit, missing []int64, at time.Time) (results.HeldScrape, bool) {
	best := -1
	for i, u := range fresh {
		if missing[i] != 0 || u.samples == 0 {
			continue
		}
		if best < 0 || wl.ScrapeTime(u.target, u.kTo) > wl.ScrapeTime(fresh[best].target, fresh[best].kTo) {
			best = i
		}
	}
	if best < 0 {
		return results.HeldScrape{}, false
	}
	u := fresh[best]
	return results.HeldScrape{Target: u.target, Scrape: u.kTo, Time: time.UnixMilli(wl.ScrapeTime(u.target, u.kTo)).UTC(), SeenAt: at}, true
}

// thin drops, while hs (in time order) are more than n, the scrape whose neighbours lie
// closest together, never the oldest or the newest: what is kept stays spread over the run.
func thin(hs []results.HeldScrape, n int) []results.HeldScrape {
	for len(hs) > max(n, 2) {
		drop := 1
		for i := 2; i+1 < len(hs); i++ {
			if hs[i+1].Time.Sub(hs[i-1].Time) < hs[drop+1].Time.Sub(hs[drop-1].Time) {
				drop = i
			}
		}
		hs = append(hs[:drop], hs[drop+1:]...)
	}
	return hs
}
