package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// A storage's status, the first thing a reader is told of it (issue 35).
const (
	StatusOK       = "ok"
	StatusDegraded = "degraded"
	StatusFailed   = "failed"
)

// The shares that set a status. A storage that acked under half of what it was sent, or
// answered under half of its queries, did not take part in the benchmark: its figures
// describe a failure, so it is ranked on nothing. One that lost more than 1 % of either is
// degraded: its figures stand, but a loss of that size is the first thing to read.
const (
	FailedShare   = 0.5
	DegradedShare = 0.01
)

// SetStatuses sets every storage's Status and StatusReasons from its figures.
func (r *Run) SetStatuses() {
	for i := range r.Storages {
		s := &r.Storages[i]
		s.Status, s.StatusReasons = s.judge()
	}
}

// Failed is the storages whose status is failed, in name order.
func (r *Run) Failed() []string {
	var names []string
	for _, s := range r.Storages {
		if s.Status == StatusFailed {
			names = append(names, s.Name)
		}
	}
	return names
}

// judge is the storage's status and its reasons, each a phrase a reader acts on.
func (s *Storage) judge() (string, []string) {
	status := StatusOK
	var reasons []string
	note := func(st, reason string) {
		reasons = append(reasons, reason)
		if st == StatusFailed || status == StatusOK {
			status = st
		}
	}
	if st, reason := s.writeStatus(); st != StatusOK {
		note(st, reason)
	}
	if st, reason := s.queryStatus(); st != StatusOK {
		note(st, reason)
	}
	if reason := s.readBackStatus(); reason != "" {
		note(StatusDegraded, reason)
	}
	if reason := s.diedStatus(); reason != "" {
		note(StatusFailed, reason)
	}
	return status, reasons
}

// writeStatus judges the write account: the share of the samples sent that were acked.
func (s *Storage) writeStatus() (string, string) {
	w := s.Write
	if w == nil || w.GeneratedSamples == 0 {
		return StatusOK, ""
	}
	lost := float64(w.GeneratedSamples-w.AckedSamples) / float64(w.GeneratedSamples)
	var st string
	switch {
	case lost > FailedShare:
		st = StatusFailed
	case lost > DegradedShare:
		st = StatusDegraded
	default:
		return StatusOK, ""
	}
	return st, fmt.Sprintf("acked %d of %d samples%s", w.AckedSamples, w.GeneratedSamples, w.lossCause())
}

// lossCause names where the unacked samples went: the largest drop reasons and the
// requests' answers, e.g. ": 33,560 dropped retry_timeout; every request refused
// (network_error)".
func (w *Write) lossCause() string {
	var parts []string
	for _, reason := range slices.Sorted(maps.Keys(w.DroppedSamples)) {
		if n := w.DroppedSamples[reason]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d dropped %s", n, reason))
		}
	}
	if w.PendingSamples > 0 {
		parts = append(parts, fmt.Sprintf("%d still pending at the end", w.PendingSamples))
	}
	if answers := requestAnswers(w.RequestsByStatus); answers != "" {
		parts = append(parts, answers)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// requestAnswers says how the storage answered when none of its answers was a 2xx, "" when
// some were: "every request refused (network_error ×120)".
func requestAnswers(byStatus map[string]int64) string {
	var parts []string
	for _, status := range slices.Sorted(maps.Keys(byStatus)) {
		if strings.HasPrefix(status, "2") && byStatus[status] > 0 {
			return ""
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", status, byStatus[status]))
	}
	if len(parts) == 0 {
		return ""
	}
	return "no request succeeded (" + strings.Join(parts, ", ") + ")"
}

// queryStatus judges the read load: the share of the queries that failed.
func (s *Storage) queryStatus() (string, string) {
	q := s.Query
	if q == nil || q.Executed == 0 {
		return StatusOK, ""
	}
	failed := q.Executed - q.OK
	share := float64(failed) / float64(q.Executed)
	var st string
	switch {
	case share > FailedShare:
		st = StatusFailed
	case share > DegradedShare:
		st = StatusDegraded
	default:
		return StatusOK, ""
	}
	kinds := slices.Sorted(maps.Keys(q.Errors))
	return st, fmt.Sprintf("%d of %d queries failed (%s)", failed, q.Executed, strings.Join(kinds, ", "))
}

// RankedOnLatency reports whether the storage's latency quantiles may be compared with the
// others': they are over its successful queries only, so a storage that failed more than
// DegradedShare of them would win on the fast failures it did not count.
func (s *Storage) RankedOnLatency() bool {
	if s.Status == StatusFailed {
		return false
	}
	q := s.Query
	return q == nil || q.Executed == 0 || float64(q.Executed-q.OK)/float64(q.Executed) <= DegradedShare
}

// readBackStatus is why the read-back checked nothing though the storage acked samples, ""
// when it checked some or had nothing to check.
func (s *Storage) readBackStatus() string {
	v := s.Verify
	if v == nil || v.CheckedSamples > 0 || s.Write == nil || s.Write.AckedSamples == 0 {
		return ""
	}
	if c := v.Continuous; c != nil && c.Total.Checked > 0 {
		return ""
	}
	return "the read-back could not read: " + v.NotCheckedReason()
}

// NotCheckedReason says why a read-back checked no sample.
func (v *Verify) NotCheckedReason() string {
	switch {
	case len(v.Errors) > 0:
		return v.Errors[0]
	case v.ReadErrors > 0:
		return fmt.Sprintf("%d reads failed", v.ReadErrors)
	case v.UncheckedSamples > 0:
		return fmt.Sprintf("%d samples planned, none read", v.UncheckedSamples)
	}
	return "no sample was acked in the window it reads"
}

// diedStatus is why the storage is taken for dead at the end, "" when it is not: its process
// exited (a storage tsbench started), or it acked nothing over the last quarter of the run
// while samples were sent to it.
func (s *Storage) diedStatus() string {
	if s.ExitedAt != nil {
		return fmt.Sprintf("its process exited at %s, during the run", s.ExitedAt.UTC().Format("15:04:05Z"))
	}
	w := s.Write
	if w == nil || w.AckedSamples == 0 || len(w.Timeline) < 4 {
		return ""
	}
	tl := w.Timeline
	last := tl[len(tl)-1]
	from := tl[len(tl)-1-len(tl)/4]
	if last.Acked > from.Acked || last.Generated == from.Generated {
		return ""
	}
	stopped := from.Time
	for i := len(tl) - 1 - len(tl)/4; i > 0 && tl[i-1].Acked == from.Acked; i-- {
		stopped = tl[i-1].Time
	}
	return fmt.Sprintf("acked nothing from %s to the end (%s): it died or stalled and did not come back",
		stopped.UTC().Format("15:04:05Z"), last.Time.Sub(stopped).Round(time.Second))
}

// StatusLine is the storage's status in words, "" when it is ok: "dead: FAILED — acked 0 of
// 33560 samples: …; 125 of 125 queries failed (network)".
func (s *Storage) StatusLine() string {
	if s.Status == "" || s.Status == StatusOK {
		return ""
	}
	return fmt.Sprintf("%s: %s — %s", s.Name, strings.ToUpper(s.Status), strings.Join(s.StatusReasons, "; "))
}
