package verify

import (
	"slices"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// epochs is a Workload with series events (issue 22): a target's label set changes with its
// pod, and an inactive target writes nothing. *workload.Part.
type epochs interface {
	Epoch(target int, k int64) int64
}

// heldSource is a Workload that sends some samples late or out of order: the read-back
// expects each at its own timestamp once it was sent. *workload.Part.
type heldSource interface {
	HeldKinds() (late, outOfOrder bool)
	HeldDelay(kind int) int64
	HeldOf(app workload.Appender, kind, target int, k int64) int
}

// state is what makes a target's series at one scrape: its revision and epoch (-1: inactive).
type state struct{ rev, epoch int64 }

func stateOf(wl Workload, target int, k int64) state {
	st := state{rev: wl.Revision(target, k)}
	if e, ok := wl.(epochs); ok {
		st.epoch = e.Epoch(target, k)
	}
	return st
}

// changes reports whether target's label set changes between scrapes first and last.
func changes(wl Workload, target int, first, last int64) bool {
	if _, ok := wl.(epochs); !ok {
		return wl.Revision(target, first) != wl.Revision(target, last)
	}
	st := stateOf(wl, target, first)
	for k := first + 1; k <= last; k++ {
		if stateOf(wl, target, k) != st {
			return true
		}
	}
	return false
}

// expectHeld collects the held samples of target's scrape k, each kind with the time it is
// sent: HeldDelay scrapes later.
func expectHeld(wl Workload, c *collector, target int, k int64) {
	hs, ok := wl.(heldSource)
	if !ok {
		return
	}
	late, ooo := hs.HeldKinds()
	for kind, on := range map[int]bool{workload.Late: late, workload.OutOfOrder: ooo} {
		if !on {
			continue
		}
		c.held, c.sentAt = uint8(kind), wl.ScrapeTime(target, k+hs.HeldDelay(kind))
		hs.HeldOf(c, kind, target, k)
	}
	c.held, c.sentAt = 0, 0
}

// sortHeld puts the samples of series with held ones in time order, as the rest are.
func sortHeld(u *unit) {
	for _, s := range u.series {
		if s.held {
			slices.SortStableFunc(s.samples, func(a, b expSample) int { return int(a.t - b.t) })
		}
	}
}

// heldTally counts one held kind's samples checked and found stored.
type heldTally struct{ checked, stored int64 }

// fillHeld adds the held kinds' counts to v.
func (t *tally) fillHeld(v *results.Verify) {
	for kind, dst := range map[int]**results.VerifyHeld{workload.Late: &v.Late, workload.OutOfOrder: &v.OutOfOrder} {
		h := t.held[kind]
		if h.checked == 0 {
			continue
		}
		if *dst == nil {
			*dst = &results.VerifyHeld{}
		}
		(*dst).Checked += h.checked
		(*dst).Stored += h.stored
	}
}
