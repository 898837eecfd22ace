package remotewrite

import "time"

// Settled is the time before which every sample scheduled so far for the storage name has
// been acked or dropped: the scheduled time of the oldest sample due and not generated yet,
// in an open batch, queued or in flight, or now when there is none (issue 19: the read-back
// during the run reads only what is settled).
//
// It looks where a sample goes, in the order it goes there, backwards: first each worker's
// cursor (its next scrape not generated: a starved machine's generator runs late, issue 29),
// then the open batches (the scrape's samples are appended before the cursor moves), then the
// queues and requests in flight (a batch is queued before its open batch is cleared). A
// sample that moves on while Settled looks is found at its next place; looked at in the
// other order, a batch queued between the two looks was in neither.
func (w *Writer) Settled(name string, now time.Time) time.Time {
	oldest := now.UnixMilli()
	s, ok := w.byName[name]
	if !ok {
		return now
	}
	ln := w.laneOf[name]
	for i := range ln.cursor {
		oldest = min(oldest, ln.cursor[i].Load()) // 0 before the worker starts: nothing settled
	}
	for i := range ln.openOldest {
		if o := ln.openOldest[i].Load(); o > 0 {
			oldest = min(oldest, o)
		}
	}
	s.mu.Lock()
	if o := s.oldestQueuedLocked(); o >= 0 {
		oldest = min(oldest, o)
	}
	s.mu.Unlock()
	return time.UnixMilli(oldest)
}

// oldestQueuedLocked is the scheduled time of the oldest sample queued or in flight, -1 when
// none is. Every queued batch is looked at, not each queue's first (oldestLocked): with more
// generate workers than shards, a shard's queue takes batches of several workers, whose
// oldest samples need not come in order.
func (s *sink) oldestQueuedLocked() int64 {
	return s.oldestAmongLocked(func(q []*batch) []*batch { return q })
}

// oldestAmongLocked is the oldest scheduled time of the batches in flight and those of look
// of each queue, -1 when there are none.
func (s *sink) oldestAmongLocked(look func(queue []*batch) []*batch) int64 {
	oldest := int64(-1)
	older := func(b *batch) {
		if b != nil && (oldest < 0 || b.oldest < oldest) {
			oldest = b.oldest
		}
	}
	for _, ep := range s.endpoints {
		for i := range ep.queues {
			older(ep.inflight[i])
			for _, b := range look(ep.queues[i]) {
				older(b)
			}
		}
	}
	return oldest
}
