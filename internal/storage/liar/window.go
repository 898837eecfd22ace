package liar

import (
	"fmt"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// Window is the part of a run a test expects tsbench's read-back to cover, derived from what
// the test set up (issue 37): from the run's start less its history to the load's end, less
// the gaps the test's kills and restarts made. Judged inside tsbench's own window, a cell
// would pass a bug that shrinks the window or widens a gap: the liar's count would shrink
// with what tsbench checked.
type Window struct {
	From, To time.Time
	// Gaps are what a resumed run leaves out, in time order (ResumeGap).
	Gaps []Gap
	// Interval is the scrape interval, the tolerance of each edge: the load's last scrape
	// falls within one of its end, a restarted run's first within one of its restart.
	Interval time.Duration
	// By, when set, is the latest the read-back may end: an edge the machine's load moves
	// (an agent's load ends duration after the agent started, its last scrape the newest
	// sample the storage got).
	By time.Time
	// Stopped says the load's end is known to an Interval only (an agent ends it): Count
	// then counts up to the read-back's end, once Check found it there (Upto).
	Stopped bool
}

// Gap is a stretch of a run nothing of which is read back.
type Gap struct {
	From, To time.Time
	// By, when set, is the latest a restart at To can have begun: a run's clock starts
	// after its startup, which a loaded machine stretches past an Interval, and before the
	// first sample it wrote (the newest the liar had seen when it first saw one).
	By time.Time
}

// ResumeGap is the gap a run restarted at restart from the checkpoint cp must leave out:
// from the oldest sample the checkpoint had not settled, its time less its lag, and a scrape
// interval more (or the largest schedule drift, when longer: issue 29), to the restart.
func ResumeGap(cp *results.Run, restart time.Time, interval time.Duration) Gap {
	at := cp.Partial.At
	from := at
	for _, s := range cp.Storages {
		if w := s.Write; w != nil {
			margin := max(interval, time.Duration(w.MaxScheduleDriftSeconds*float64(time.Second)))
			from = results.Earlier(from, at.Add(-time.Duration(w.LagSeconds*float64(time.Second))).Add(-margin))
		}
	}
	return Gap{From: from, To: restart}
}

// Check compares a read-back's window (its CheckedFrom and CheckedTo) and the run's gaps with
// w: "" when each edge is within Interval of w's (or of the span from it to its By, an edge
// the machine's load may move), else what differs.
func (w Window) Check(from, to time.Time, gaps []results.Gap) string {
	var msg string
	edge := func(what string, want, by, got time.Time) {
		if got.Before(want.Add(-w.Interval)) || got.After(results.Later(want, by).Add(w.Interval)) {
			msg += fmt.Sprintf("%s %s, want %s (the test's", what, got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
			if by.After(want) {
				msg += " to " + by.Format(time.RFC3339Nano)
			}
			msg += fmt.Sprintf(") to one scrape interval (%s); ", w.Interval)
		}
	}
	wantFrom, fromBy := w.From, time.Time{}
	for _, g := range w.Gaps { // a gap from before the start: the read-back begins after it
		if !g.From.After(wantFrom) {
			wantFrom, fromBy = results.Later(wantFrom, g.To), g.By
		}
	}
	edge("checkedFrom", wantFrom, fromBy, from)
	edge("checkedTo", w.To, w.By, to)
	if len(gaps) != len(w.Gaps) {
		return msg + fmt.Sprintf("gaps %+v, want %d (the test's %+v); ", gaps, len(w.Gaps), w.Gaps)
	}
	for i, g := range w.Gaps {
		edge(fmt.Sprintf("gaps[%d].from", i), g.From, time.Time{}, gaps[i].From)
		edge(fmt.Sprintf("gaps[%d].to", i), g.To, g.By, gaps[i].To)
	}
	return msg
}

// Upto is w counting up to to, the read-back's end, when the load's end is known to an
// Interval only (Stopped; Check asserts that much), and w else.
func (w Window) Upto(to time.Time) Window {
	if w.Stopped {
		w.To = to
	}
	return w
}

// Count is l's count of what it told in series keep keeps (nil: every series) in [From, To],
// less what lies strictly inside w's gaps. A gap's first instant is read back (the span
// before it ends there), its last is not written: the restarted run begins after it.
func (w Window) Count(l *Liar, keep func(series string) bool) int64 {
	n := l.Count(w.From, w.To, keep)
	for _, g := range w.Gaps {
		if from, to := g.From.Add(time.Millisecond), g.To.Add(-time.Millisecond); !to.Before(from) {
			n -= l.Count(from, to, keep)
		}
	}
	return n
}

// Last is w after its last gap: what the reads of a run's end (native histograms, exemplars)
// cover.
func (w Window) Last() Window {
	if n := len(w.Gaps); n > 0 {
		return Window{From: w.Gaps[n-1].To, To: w.To, Interval: w.Interval, Stopped: w.Stopped}
	}
	return w
}
