package results

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// MaxChecks bounds Verify.Checks: a day of checks at the default verifyInterval (10m) is
// kept one by one; past that, neighbours are added up (AddCheck), so the list, results.json
// and the report's chart stay the same size over a week as over a day.
const MaxChecks = 144

// Check is one read-back made while the load ran, every verifyInterval (issue 19). It reads
// a sample of the data that became settled since the previous check (Span), and reads again
// the scrapes earlier checks found complete (Rechecked), kept spread over all the data held
// so far (Held). Every count is in samples.
type Check struct {
	// At is when the check started.
	At time.Time `json:"at"`
	// Span is the data that became settled since the previous check: its sample was read.
	Span Span `json:"span"`
	// Held is all the data written so far that is settled: the scrapes read again lie in it.
	Held Span `json:"held"`
	// Checked counts the samples looked for: the new sample's and the Rechecked ones.
	Checked int64 `json:"checked"`
	// Missing, Changed, Duplicate, Unexpected and NaNAltered mean what they mean in Verify;
	// Missing includes LostAfterAck.
	Missing    int64 `json:"missing"`
	Changed    int64 `json:"changed"`
	Duplicate  int64 `json:"duplicate"`
	Unexpected int64 `json:"unexpected"`
	NaNAltered int64 `json:"nanAltered"`
	// Rechecked are the samples of scrapes an earlier check found complete, read again.
	Rechecked int64 `json:"rechecked"`
	// LostAfterAck are the Rechecked samples not returned any more: the storage acked them,
	// returned them to an earlier check, and lost them since.
	LostAfterAck int64 `json:"lostAfterAck"`
	ReadErrors   int64 `json:"readErrors"`
	Unchecked    int64 `json:"unchecked"`
	// Reads is how many queries the check made; Seconds how long it took (the wait for
	// freshly acked data to become searchable not counted).
	Reads   int64   `json:"reads"`
	Seconds float64 `json:"seconds"`
	// Checks is how many checks this entry adds up (1 until the list was downsampled); At and
	// Span.From are the first one's, Span.To and Held the last one's, Seconds the largest.
	Checks int `json:"checks"`
}

// Span is a range of data (sample timestamps), both ends included.
type Span struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Continuous sums every check made while the load ran, also those Checks holds added up,
// and is the state a resumed run continues from.
type Continuous struct {
	// IntervalSeconds is verifyInterval.
	IntervalSeconds float64 `json:"intervalSeconds"`
	// Total is every check added up (Total.Checks is how many were made).
	Total Check `json:"total"`
	// Examples are the first differences the checks found, one line each.
	Examples []string `json:"examples,omitempty"`
	// CheckedTo is the newest data a check has read: the next check's Span starts after it.
	CheckedTo time.Time `json:"checkedTo"`
	// Held are the scrapes found complete that each check reads again, at most a fixed number
	// per storage, spread over the run (the oldest and the newest always among them).
	Held []HeldScrape `json:"held,omitempty"`
}

// HeldScrape is one scrape of one target (the workload recomputes its samples) that a check
// found complete.
type HeldScrape struct {
	Target int   `json:"target"`
	Scrape int64 `json:"scrape"`
	// Time is the scrape's timestamp; SeenAt the check that found it complete.
	Time   time.Time `json:"time"`
	SeenAt time.Time `json:"seenAt"`
}

// AddCheck appends c to checks; when they are more than MaxChecks, the two neighbours that
// add up the fewest checks are added up into one, so the list covers the run evenly and a
// check that found a difference keeps showing it (counts are summed, never dropped).
func AddCheck(checks []Check, c Check) []Check {
	checks = append(checks, c)
	if len(checks) <= MaxChecks {
		return checks
	}
	best := 0
	for i := 1; i+1 < len(checks); i++ {
		if checks[i].Checks+checks[i+1].Checks < checks[best].Checks+checks[best+1].Checks {
			best = i
		}
	}
	checks[best] = sumChecks(checks[best], checks[best+1])
	return append(checks[:best+1], checks[best+2:]...)
}

// sumChecks adds b, the later check, to a.
func sumChecks(a, b Check) Check {
	if a.Checks == 0 {
		a.At, a.Span.From = b.At, b.Span.From
	}
	a.Span.To, a.Held = b.Span.To, b.Held
	a.Checked += b.Checked
	a.Missing += b.Missing
	a.Changed += b.Changed
	a.Duplicate += b.Duplicate
	a.Unexpected += b.Unexpected
	a.NaNAltered += b.NaNAltered
	a.Rechecked += b.Rechecked
	a.LostAfterAck += b.LostAfterAck
	a.ReadErrors += b.ReadErrors
	a.Unchecked += b.Unchecked
	a.Reads += b.Reads
	a.Seconds = math.Max(a.Seconds, b.Seconds)
	a.Checks += b.Checks
	return a
}

// AddTo adds c to the running total t.
func (c Check) AddTo(t *Check) { *t = sumChecks(*t, c) }

// Clean reports whether a check (or a total) found nothing wrong: samples checked, none
// missing, changed, duplicated or unexpected, no NaN altered, no read failed.
func (c Check) Clean() bool {
	return c.Checked > 0 && c.Missing == 0 && c.Changed == 0 && c.Duplicate == 0 && c.Unexpected == 0 && c.NaNAltered == 0 &&
		c.ReadErrors == 0 && c.Unchecked == 0
}

// ContinuousVerdict is the one-line outcome of the checks made while the load ran, e.g.
// "6 checks every 10m0s: 61230 samples, all returned as written (24600 read again)" or
// "6 checks every 10m0s: 61230 samples: 3690 lost after ack (first missed by the check at
// 05:12:00), ...". "" when no check was made.
func (v *Verify) ContinuousVerdict() string {
	if v == nil || v.Continuous == nil || v.Continuous.Total.Checks == 0 {
		return ""
	}
	t := v.Continuous.Total
	head := fmt.Sprintf("%d checks every %s: %d samples", t.Checks, time.Duration(v.Continuous.IntervalSeconds*float64(time.Second)), t.Checked)
	if t.Clean() {
		return fmt.Sprintf("%s, all returned as written (%d read again)", head, t.Rechecked)
	}
	var parts []string
	add := func(n int64, what string) { parts = addCount(parts, n, what) }
	if v.LostAfterAck > 0 && v.LostAfterAckAt != nil {
		parts = append(parts, fmt.Sprintf("%d lost after ack (first missed by the check at %s)", v.LostAfterAck, v.LostAfterAckAt.UTC().Format(time.RFC3339)))
	}
	add(t.Missing-t.LostAfterAck, "missing")
	add(t.Changed, "changed")
	add(t.Duplicate, "duplicated")
	add(t.Unexpected, "unexpected")
	add(t.NaNAltered, "NaN dropped or altered")
	add(t.ReadErrors, "reads failed")
	add(t.Unchecked, "samples unchecked")
	if len(parts) == 0 {
		return head + ": nothing checked"
	}
	return head + ": " + strings.Join(parts, ", ")
}

// mergeChecks adds up the shards' checks into m: the shards share startTime and
// verifyInterval, so their i-th checks are one moment; each checked its own targets. The
// held scrapes are each shard's own state, not a merged file's.
func mergeChecks(m *Verify, vs []*Verify) {
	for _, v := range vs {
		for i, c := range v.Checks {
			if i == len(m.Checks) {
				m.Checks = append(m.Checks, Check{})
			}
			n := max(m.Checks[i].Checks, c.Checks) // one moment, however many shards
			m.Checks[i] = sumChecks(m.Checks[i], c)
			m.Checks[i].Checks = n
		}
		m.LostAfterAck += v.LostAfterAck
		if at := v.LostAfterAckAt; at != nil && (m.LostAfterAckAt == nil || at.Before(*m.LostAfterAckAt)) {
			m.LostAfterAckAt = at
		}
		if c := v.Continuous; c != nil {
			if m.Continuous == nil {
				m.Continuous = &Continuous{IntervalSeconds: c.IntervalSeconds, CheckedTo: c.CheckedTo}
			}
			mc := m.Continuous
			// Shards check at the same moments: the merged total counts each moment once.
			checks := max(mc.Total.Checks, c.Total.Checks)
			mc.Total = sumChecks(mc.Total, c.Total)
			mc.Total.Checks = checks
			mc.CheckedTo = Earlier(c.CheckedTo, mc.CheckedTo)
			mc.Examples = append(mc.Examples, c.Examples[:min(len(c.Examples), maxMergedExamples-len(mc.Examples))]...)
		}
	}
}
