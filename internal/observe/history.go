package observe

import "time"

// keepRecent is how many of the newest observations a history keeps whole. Whether an
// observation counts in the load window is known only once the load's end is, and one made
// keepRecent observations before now surely came before it: the older ones are folded into
// the summary, so memory stays the same however long the run (issue 19).
const keepRecent = 3

// history is a source's observations so far: the summary of the old ones and the newest ones.
type history struct {
	folded summary
	recent []rates
}

// add appends r, later than every observation before; loadEnd is the load's end as known now.
func (h *history) add(r rates, loadEnd time.Time) {
	h.recent = append(h.recent, r)
	if len(h.recent) <= keepRecent {
		return
	}
	h.folded.add(h.recent[0], loadEnd)
	n := copy(h.recent, h.recent[1:])
	h.recent[n] = rates{}
	h.recent = h.recent[:n]
}

// summary is the summary of every observation, the load's window ending at loadEnd.
func (h *history) summary(loadEnd time.Time) summary {
	s := h.folded.clone()
	for _, r := range h.recent {
		s.add(r, loadEnd)
	}
	return s
}

// first is the first observation; the zero rates before any.
func (h *history) first() rates {
	if h.folded.n > 0 {
		return h.folded.first
	}
	if len(h.recent) > 0 {
		return h.recent[0]
	}
	return rates{}
}

// count is how many observations were added.
func (h *history) count() int { return h.folded.n + len(h.recent) }
