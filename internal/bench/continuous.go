package bench

import (
	"context"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// verifyContinuously reads back, every verifyInterval while the load runs, a sample of the
// data settled since the previous check and the scrapes earlier checks found complete
// (verify.Continuous, issue 19).
func (r *run) verifyContinuously(ctx context.Context) {
	v := r.verifier()
	if v == nil {
		return
	}
	c := v.Continuous(r.cfg.VerifyInterval, r.verifyMetrics)
	if n := len(r.gaps); n > 0 { // resumed: the checks go on after the restart, not in the gap
		c.Restore(r.resumedChecks, r.gaps[n-1].To)
	}
	r.mu.Lock()
	r.continuous = c
	r.mu.Unlock()
	if r.cfg.History > 0 {
		// Until every storage has caught up, the history is not all written: the first check
		// waits for it, then covers the history too.
		select {
		case <-ctx.Done():
			return
		case <-r.writer.AllCaughtUp():
		}
	}
	every(ctx, r.cfg.VerifyInterval, func(now time.Time) {
		// A check under way when the load ends finishes (its data was settled before),
		// bounded as the read-back at the end; ticks due meanwhile are skipped.
		checkCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.VerifyTimeout)
		defer cancel()
		c.Check(checkCtx, r.clock, r.settled(now))
	})
}

// settled is the newest data a check at now reads: older than verifyDelay, and before the
// oldest sample some storage written has not acked (or dropped) at now, scrapes due and not
// yet generated included (remotewrite.Writer.Settled). The check reads it verify's Settle
// (3 s) later: acked data has as long to become visible as at the run's end. A margin of a
// scrape interval for scrapes not generated yet, as before, was short on a starved machine
// (issue 29: one scrape of each target counted missing from an honest storage).
func (r *run) settled(now time.Time) time.Time {
	to := now.Add(-r.cfg.VerifyDelay)
	for _, name := range r.cfg.StorageNames() {
		if !r.cfg.RemoteStorages[name].DisableWrite {
			if s := r.writer.Settled(name, now); s.Before(to) {
				to = s
			}
		}
	}
	// Settled is the oldest sample not settled: the data read ends just before it.
	return to.Add(-time.Millisecond)
}

// addChecks adds the checks made during the run to the storage name's read-back v, and
// returns it: a checkpoint, whose read-back at the end has not run (v nil), gets a read-back
// of the checks alone, which a resumed run continues from. Called with r.mu held.
func (r *run) addChecks(name string, v *results.Verify) *results.Verify {
	if r.continuous == nil {
		return v
	}
	c := r.continuous.Results()[name]
	if c == nil || c.Continuous.Total.Checks == 0 { // a run shorter than verifyInterval
		return v
	}
	if v == nil {
		v = &results.Verify{}
	}
	v.Checks, v.Continuous, v.LostAfterAck, v.LostAfterAckAt = c.Checks, c.Continuous, c.LostAfterAck, c.LostAfterAckAt
	return v
}
