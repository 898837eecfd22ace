package remotewrite

import (
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// heldWorkload is a Workload that holds samples back (series.late, series.outOfOrder) and
// tells the series its cardinality events create: *workload.Part.
type heldWorkload interface {
	SeriesOn() bool // a series section is set: without, the run is the default one
	HeldKinds() (late, outOfOrder bool)
	Held(late, outOfOrder workload.Appender, target int, k int64) (nLate, nOOO int)
	Created(target int, k int64) int
}

// Batch kinds: the held samples travel in batches of their own, so that a storage that
// refuses them (Prometheus answers 400 to a request with one out-of-order sample) refuses
// only them, and their account is exact.
const (
	heldNone = iota
	heldLate
	heldOOO
	heldKinds
)

// heldAccount is a sink's account of one held kind's batches.
type heldAccount struct {
	generated, acked, pending int64
	refused                   map[string]int64
}

func (h *heldAccount) push(n int64) {
	h.generated += n
	h.pending += n
}

func (h *heldAccount) settle(acked, refused int64, reason string) {
	h.pending -= acked + refused
	h.acked += acked
	if refused > 0 {
		if h.refused == nil {
			h.refused = map[string]int64{}
		}
		h.refused[reason] += refused
	}
}

// heldResults is the account of kind; sent is the generator's own count once it stopped.
func (s *sink) heldResultsLocked(kind int, sent int64, stopped bool) *results.WriteHeld {
	h := &s.held[kind]
	r := &results.WriteHeld{Sent: h.generated, Acked: h.acked, Pending: h.pending, Refused: cloneMap(h.refused)}
	if stopped {
		r.Sent = sent
	}
	return r
}

// heldAppenders are a worker's appenders of the held kinds for one shard, made on first use.
type heldAppenders [heldKinds]*shardAppender

func (w *Writer) heldAppender(apps *heldAppenders, kind int, main *shardAppender) workload.Appender {
	if apps[kind] == nil {
		a := w.newShardAppender(main.ln, main.shard, main.openOldest, main.history)
		a.held = uint8(kind)
		apps[kind] = a
	}
	return apps[kind].appender()
}

// heldAppendersOf lists every shard's held appenders, nil where none was made.
func heldAppendersOf(held []heldAppenders) []*shardAppender {
	var out []*shardAppender
	for _, h := range held {
		out = append(out, h[heldLate], h[heldOOO])
	}
	return out
}

// held sends what is due at target's scrape k beside it (workload Held) and counts it, and
// the series the scrape created.
func (ln *lane) held(hw heldWorkload, apps heldAppenders, late, ooo workload.Appender, target int, k, due int64) {
	for _, a := range apps {
		if a != nil {
			a.due = due
		}
	}
	nLate, nOOO := hw.Held(late, ooo, target, k)
	ln.produced.Add(int64(nLate + nOOO))
	ln.heldProduced[heldLate].Add(int64(nLate))
	ln.heldProduced[heldOOO].Add(int64(nOOO))
	if c := int64(hw.Created(target, k)); k == 0 {
		ln.initial.Add(c)
	} else {
		ln.created.Add(c)
	}
}

// SeriesWritten is how many distinct series the workload wrote so far, the first scrapes'
// included (with history, the lane that got furthest); 0 without a series section.
func (w *Writer) SeriesWritten() int64 {
	var n int64
	for _, ln := range w.lanes {
		n = max(n, ln.initial.Load()+ln.created.Load())
	}
	return n
}
