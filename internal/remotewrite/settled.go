package remotewrite

import "time"

// Settled is the time before which every sample generated so far for the storage name has
// been acked or dropped: the scheduled time of the oldest sample queued, in flight or in an
// open batch, or now when there is none (issue 19: the read-back during the run reads only
// what is settled). Scrapes due but not generated yet are not seen: the generators make them
// within 100 ms of their time unless the machine is starved, so a caller keeps a margin.
func (w *Writer) Settled(name string, now time.Time) time.Time {
	oldest := now.UnixMilli()
	s, ok := w.byName[name]
	if !ok {
		return now
	}
	s.mu.Lock()
	if o := s.oldestLocked(); o >= 0 {
		oldest = min(oldest, o)
	}
	s.mu.Unlock()
	ln := w.laneOf[name]
	for i := range ln.openOldest {
		if o := ln.openOldest[i].Load(); o > 0 {
			oldest = min(oldest, o)
		}
	}
	return time.UnixMilli(oldest)
}
