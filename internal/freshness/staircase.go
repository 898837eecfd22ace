package freshness

import (
	"math"
	"slices"
	"time"
)

// The schedule's ladder, 8 polls spaced geometrically from freshness.interval to the write
// interval, places a delay only within a factor of 2.3 of itself: VictoriaMetrics'
// -search.latencyOffset=5s read 3.0–7.1 s (issue 37, item 6). A staircase keeps the cost and
// buys back the resolution: each probe asks for every sample as many times as the ladder has
// polls, on every storage, but from its second sample on it places them where its latest
// samples showed:
//
//   - the ladder's first and last poll, kept at both ends to notice a change;
//   - four dense polls spread geometrically over the region the latest samples showed in,
//     at least three halves of the resolution sought wide, so that a sample that shows in
//     it is placed to about half the resolution sought: a tenth of its delay or
//     2 × freshness.interval (0.2 s), whichever is larger;
//   - a guard on each side of the region, halfway to the end on a log scale, so that a
//     sample that shows just outside it is placed between the region and the guard, not
//     the end (at the default ladder, 6 s after a region at 1 s reads 1.17–6.72 s, not
//     1.17–38.71 s).
//
// No two polls are closer than freshness.interval. A steady delay is placed within the
// resolution sought from the third sample on (the ladder's bracket, then the region's first
// pass over it); a delay that jumps from 1 to 6 s, from the fourth sample after the jump. A
// delay that varies from sample to sample widens the region to the latest samples' spread.

// remembered is how many of a probe's latest samples place the next one's polls: enough to
// span a delay that varies from sample to sample, few enough to follow one that changes.
const remembered = 4

// dense is how many polls go over the region: all but the two ends and the two guards.
const dense = PollsPerSample - 4

// bracket is where a sample showed, after its ack: between the last query that did not
// return it (lo; 0: none did not) and the first that did (hi).
type bracket struct{ lo, hi time.Duration }

// holds says whether c lies within b.
func (b bracket) holds(c bracket) bool { return b.lo <= c.lo && c.hi <= b.hi }

// staircase places each sample's polls from where the probe's latest samples showed.
type staircase struct {
	ladder   []time.Duration // the schedule's polls: the first sample's, and every sample's ends
	interval time.Duration   // freshness.interval: the resolution sought is at least twice it
	recent   []bracket       // the latest samples', oldest first, at most remembered
}

// seen notes where a sample showed. One that its own last poll did not find (a later
// sample's polls did) says nothing of where its own should have been. (Not one found after
// the last poll's time: a poll starts a little after its time, the last too.)
func (s *staircase) seen(b bracket) {
	if b.lo >= s.ladder[len(s.ladder)-1] {
		return
	}
	s.recent = append(s.recent, b)
	if len(s.recent) > remembered {
		s.recent = slices.Delete(s.recent, 0, 1)
	}
}

// polls are the times after its ack at which the next sample is asked for, ascending: the
// ladder for a probe that has seen no sample yet, or one whose ladder is too short to place
// (a write interval close to freshness.interval), else the ends, the guards and the dense
// polls over the region. Always as many as the ladder has, and (but for the ladder's own) no
// two closer than freshness.interval, the finest resolution sought: a poll due while the
// previous query is still in flight is merged into the next, and a storage that answers in
// 20 ms would be asked less than one that answers in 5 ms.
func (s *staircase) polls() []time.Duration {
	n := len(s.ladder)
	if n != PollsPerSample || len(s.recent) == 0 {
		return s.ladder
	}
	first, last := s.ladder[0], s.ladder[n-1]
	r := s.region()
	lo, hi := max(r.lo, first), min(r.hi, last*4/5) // room for a guard above
	if hi <= lo {
		return s.ladder // the latest samples showed close to the last poll: the ladder finds them
	}
	ps := make([]time.Duration, 0, n)
	ps = append(ps, first, geoMean(first, lo))
	for i := range dense {
		ps = append(ps, time.Duration(float64(lo)*math.Pow(float64(hi)/float64(lo), float64(i)/(dense-1))))
	}
	ps = append(ps, geoMean(hi, last))
	for i := 1; i < len(ps); i++ {
		ps[i] = max(ps[i].Round(time.Millisecond), ps[i-1]+s.interval)
	}
	if ps[len(ps)-1]+s.interval > last {
		return s.ladder // no room for the polls between the ends
	}
	return append(ps, last)
}

// region is where the next sample is expected to show: the hull of the latest samples'
// brackets, less a bracket that holds a newer one (the newer says more) and, when the newest
// lies beyond the older ones' hull by more than its width, less all the older ones (the delay
// changed); at least 3 × the resolution sought wide, around its middle.
func (s *staircase) region() bracket {
	newest := s.recent[len(s.recent)-1]
	kept := []bracket{newest}
	for _, b := range slices.Backward(s.recent[:len(s.recent)-1]) {
		if !slices.ContainsFunc(kept, b.holds) {
			kept = append(kept, b)
		}
	}
	if len(kept) > 1 {
		old := hull(kept[1:])
		if w := old.hi - old.lo; newest.lo >= old.hi+w || newest.hi <= old.lo-w {
			kept = kept[:1]
		}
	}
	h := hull(kept)
	// A dense poll every half of the resolution sought: max(delay/10, 2 × interval).
	if w := (dense - 1) * max(h.hi/20, s.interval); h.hi-h.lo < w {
		mid := (h.lo + h.hi) / 2
		h = bracket{mid - w/2, mid + w/2}
	}
	return h
}

func hull(bs []bracket) bracket {
	h := bs[0]
	for _, b := range bs[1:] {
		h = bracket{min(h.lo, b.lo), max(h.hi, b.hi)}
	}
	return h
}

// geoMean is halfway between a and b on a log scale.
func geoMean(a, b time.Duration) time.Duration {
	return time.Duration(math.Sqrt(float64(a) * float64(b)))
}
