package remotewrite

import (
	"cmp"
	"slices"
	"time"
)

// maxNotAckedSpans bounds the spans a storage's record keeps over a run of days: past it, the
// two closest spans become one (a sample between them is then taken as not acked too: the
// read-back looks for less, never for more than was acked).
const maxNotAckedSpans = 4096

// notAcked is the record of the sample times of the batches a storage did not ack in full:
// dropped (queue full, refused, retries given up) or acked in part. The read-back does not
// look for those samples: the storage may or may not hold them, and neither is its doing
// (issue 37: a starved run's dropped samples read as missing). Spans are sorted and apart.
type notAcked struct{ spans [][2]int64 }

// add records the span [from, to], ms.
func (n *notAcked) add(from, to int64) {
	i, _ := slices.BinarySearchFunc(n.spans, from, func(s [2]int64, t int64) int { return cmp.Compare(s[1], t) })
	j := i
	for j < len(n.spans) && n.spans[j][0] <= to {
		from, to = min(from, n.spans[j][0]), max(to, n.spans[j][1])
		j++
	}
	n.spans = slices.Replace(n.spans, i, j, [2]int64{from, to})
	if len(n.spans) > maxNotAckedSpans {
		n.mergeClosest()
	}
}

// mergeClosest makes the two spans with the smallest gap between them one.
func (n *notAcked) mergeClosest() {
	best := 0
	for i := 1; i+1 < len(n.spans); i++ {
		if n.spans[i+1][0]-n.spans[i][1] < n.spans[best+1][0]-n.spans[best][1] {
			best = i
		}
	}
	n.spans[best][1] = n.spans[best+1][1]
	n.spans = slices.Delete(n.spans, best+1, best+2)
}

// has reports whether t (ms) is in a span.
func (n *notAcked) has(t int64) bool {
	i, _ := slices.BinarySearchFunc(n.spans, t, func(s [2]int64, t int64) int { return cmp.Compare(s[1], t) })
	return i < len(n.spans) && n.spans[i][0] <= t
}

// NotAcked reports whether a sample of the storage name at t was in a batch it did not ack in
// full (dropped, or acked in part): the read-back neither expects it nor counts it if found.
func (w *Writer) NotAcked(name string, t time.Time) bool {
	s, ok := w.byName[name]
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notAcked.has(t.UnixMilli())
}
