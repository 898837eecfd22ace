package remotewrite

import (
	"context"
	"sync/atomic"
	"time"
)

// lane is one walk of the workload's scrape schedule by generateWorkers workers, and the
// storages it feeds. With no history, one lane feeds every storage: each batch is made once
// and shared. With history (issue 12), each storage has a lane of its own, so that it
// catches up at its own pace: a fast storage is never held back by a slow one, for the cost
// of generating the workload once per storage.
//
// A lane catching up generates every scrape due, oldest first, as fast as its storage takes
// them: before each scrape a worker waits (waitRoom) until the storage has room, instead of
// dropping. Once nothing is due, the same cursor goes on at the wall clock's pace: history
// and live phase meet with no gap and no overlap.
type lane struct {
	sinks      []*sink
	use        [wires]bool    // the wire encodings its storages take
	catchUp    bool           // history: wait for the storage instead of dropping until caught up
	openOldest []atomic.Int64 // per appender (worker × shard): oldest timestamp not yet in a batch, 0 if none
	// due is, per worker, the scrape it waits for room to make while the lane catches up (0:
	// none): a worker nothing of which is in flight still bounds how far the others run ahead.
	due []atomic.Int64
	// cursor is, per worker, the scheduled time (ms) of its next scrape not yet generated (0
	// before the worker starts, MaxInt64 without targets): every scrape due before it is in
	// an open batch, queued, in flight or settled. Settled reads it, so that a scrape due and
	// not generated (a starved machine's generator runs late) is never taken as settled.
	cursor []atomic.Int64
	// produced counts the samples Scrape reports it produced (values + staleness markers), at
	// the source and apart from the queues' own count: see Writer.Results.
	produced atomic.Int64
	stale    atomic.Int64 // staleness markers, one per series a churned target left
	// Of a workload with a series section (series.go): held samples by kind, series created.
	heldProduced [heldKinds]atomic.Int64
	created      atomic.Int64 // after each target's first scrape
	initial      atomic.Int64 // by each target's first scrape
	behind       atomic.Int32 // workers still catching up
	// end, when set, is where generation stops: no scrape due at or after it is made. A lane
	// catching up gets it when it has caught up: duration counts from there.
	end atomic.Int64
	// stopped is when generation stopped (unix ms, 0 before); nextDue then is the earliest
	// scheduled time (ms) of a scrape some worker did not make.
	stopped, nextDue atomic.Int64
	caughtUp         chan struct{} // closed when the lane's history is generated and settled
	caughtUpAt       atomic.Int64  // unix ms
	onCaughtUp       func()        // called once, when caughtUp closes
	// maxDrift is the largest delay (ms), over live batches, from the scheduled time of a
	// batch's oldest sample to the moment the batch was queued to send (issue 19).
	maxDrift atomic.Int64
}

// noteDrift records a live batch queued at nowMs whose oldest sample was due at oldest.
func (ln *lane) noteDrift(nowMs, oldest int64) {
	d := nowMs - oldest
	for {
		cur := ln.maxDrift.Load()
		if d <= cur || ln.maxDrift.CompareAndSwap(cur, d) {
			return
		}
	}
}

// catchUpSkew bounds, in data time, how far the samples a lane has handed to its storage and
// not yet seen settled (plus those in open batches) may lie apart, and how far its workers'
// next scrapes may: a sample never reaches the storage more than this older than the newest
// one it was sent. A TSDB head (Prometheus, Thanos receive, Cortex and Mimir ingesters)
// refuses samples older than what it may already have compacted: its newest sample minus
// half a block range, 1 h by default, and the end of its last compacted block. A minute, or
// two scrape intervals when longer, keeps far inside that and still lets a minute (two
// scrapes of every target) of the workload be in flight at once; 15 minutes at most, a
// quarter of that hour, whatever the scrape interval.
func catchUpSkew(interval time.Duration) int64 {
	return min(max(time.Minute, 2*interval), 15*time.Minute).Milliseconds()
}

// HistorySkew is the bound catchUpSkew puts on the catch-up of a workload scraped every
// interval: a setting of the run, for its log and results.
func HistorySkew(interval time.Duration) time.Duration {
	return time.Duration(catchUpSkew(interval)) * time.Millisecond
}

// waitRoom waits, while the lane catches up, until its storage has room for a scrape of need
// samples due at t: its pending samples within maxPendingSamples (open batches come on top,
// at most generateWorkers × writeConcurrency × maxSamplesPerRequest, as in the live phase),
// and the oldest sample pending or in an open batch no more than skew older than t. Before
// waiting it flushes the worker's own open batches, so that a worker never waits for itself.
// It returns false when ctx ended.
func (ln *lane) waitRoom(ctx context.Context, worker int, apps []*shardAppender, t, need, skew int64) bool {
	s := ln.sinks[0] // a lane catching up feeds one storage
	if !ln.advance(s, worker, t, need, skew) {
		return true
	}
	for _, a := range apps {
		if a != nil {
			a.flush()
		}
	}
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.settled.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for ln.fullLocked(s, t, need, skew) {
		if ctx.Err() != nil {
			return false
		}
		s.settled.Wait()
	}
	return ctx.Err() == nil
}

// advance publishes the worker's next scrape at t, before anyone can look for room after
// it, wakes the workers that wait for it to move on, and says whether it must wait itself.
func (ln *lane) advance(s *sink, worker int, t, need, skew int64) (full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ln.setDueLocked(s, worker, t)
	return ln.fullLocked(s, t, need, skew)
}

// setDue publishes the worker's next scrape, 0 when it has none left to make.
func (ln *lane) setDue(worker int, t int64) {
	s := ln.sinks[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	ln.setDueLocked(s, worker, t)
}

func (ln *lane) setDueLocked(s *sink, worker int, t int64) {
	ln.due[worker].Store(t)
	s.settled.Broadcast()
}

// holdUntilStarted makes every worker of a lane catching up count as due at the oldest time
// there is until it publishes its first scrape: none runs ahead of one not started yet.
func (ln *lane) holdUntilStarted() {
	for i := range ln.due {
		ln.due[i].Store(1)
	}
}

func (ln *lane) fullLocked(s *sink, t, need, skew int64) bool {
	if s.pending > 0 && s.pending+need > s.maxPending {
		return true
	}
	oldest := s.oldestLocked()
	for i := range ln.openOldest {
		if o := ln.openOldest[i].Load(); o > 0 && (oldest < 0 || o < oldest) {
			oldest = o
		}
	}
	if oldest >= 0 && t-oldest > skew {
		return true
	}
	for i := range ln.due {
		if d := ln.due[i].Load(); d > 0 && t-d > skew {
			return true
		}
	}
	return false
}

// workerCaughtUp is called once by each worker of a lane catching up when it first finds
// nothing due; the last one ends the lane's history.
func (ln *lane) workerCaughtUp(duration time.Duration) {
	if ln.behind.Add(-1) != 0 {
		return
	}
	for _, s := range ln.sinks {
		s.mu.Lock()
		s.catchingUp = false
		s.onHistoryDone = func(at int64) {
			s.log.Info("storage caught up with the wall clock: live phase and query load start",
				"history_samples", s.histGenerated, "acked", s.histAcked)
			ln.caughtUpAt.Store(at)
			if duration > 0 {
				ln.end.Store(at + duration.Milliseconds())
			}
			close(ln.caughtUp)
			ln.onCaughtUp()
		}
		s.checkHistoryDoneLocked()
		s.mu.Unlock()
	}
}

// checkHistoryDoneLocked marks the history done once no history batch can come and every one
// has settled (acked or dropped).
func (s *sink) checkHistoryDoneLocked() {
	if s.catchingUp || s.histDone != 0 || s.histSettled != s.histGenerated || s.onHistoryDone == nil {
		return
	}
	s.histDone = time.Now().UnixMilli()
	s.onHistoryDone(s.histDone)
}

// oldestLocked is the scheduled time of the oldest sample pending (queued or in flight), -1
// when none is. Only each queue's first batch is looked at.
func (s *sink) oldestLocked() int64 {
	return s.oldestAmongLocked(func(q []*batch) []*batch { return q[:min(len(q), 1)] })
}

// liveLocked reports whether the storage is in its live phase: it has no history, or has
// caught up.
func (s *sink) liveLocked() bool {
	return s.histDone != 0 || (!s.catchingUp && s.onHistoryDone == nil)
}
