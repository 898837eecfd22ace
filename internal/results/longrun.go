package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"
)

// Partial marks a results.json written before the run ended (issue 19): a checkpoint, rewritten
// every checkpointInterval while the run goes on, holds the figures up to At.
type Partial struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"` // "checkpoint"
}

// Gap is a stretch of the workload's time a resumed run did not account for: from the oldest
// sample the last checkpoint had not settled (acked or dropped; issue 29) to the restart. Some
// of its samples may have reached the storages before the crash and no one can know which, so
// the read-back leaves it out, and the account keeps only what was acked or dropped by the
// checkpoint.
type Gap struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Checkpoint is the checkpoint the run resumed from: From is earlier by the samples it
	// had not settled. Zero in a file written before tsbench recorded it.
	Checkpoint time.Time `json:"checkpoint,omitzero"`
	Reason     string    `json:"reason"`
}

// Earlier is the earlier of a and b, b when they are the same instant: spans are clipped to
// gaps with it and Later, by the read-back and by a liar's window alike.
func Earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Later is the later of a and b, b when they are the same instant.
func Later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// TimelinePoints is how many points a timeline keeps at most: a 24-hour run at the default 10 s
// interval (8,640 observations) keeps 270 to 540 points of 32 observations each, so
// results.json and the report's charts stay the same size however long the run.
const TimelinePoints = 540

// Point is a timeline point that can stand for several neighbouring ones.
type Point[P any] interface {
	// Merge is the point that stands for this one and the later one: rates and gauges
	// averaged, counts the later one's, extremes kept.
	Merge(later P) P
	// Count is how many observations the point stands for.
	Count() int
}

// Timeline keeps a series that grows with run time in at most TimelinePoints points: when
// full, each two neighbours become one and every later point stands for as many observations,
// so the whole run is covered at one resolution that halves as it grows. The caller guards it.
type Timeline[P Point[P]] struct {
	points []P
	width  int // observations per point
}

// Add appends p, or merges it into the newest point while that stands for fewer observations
// than the others.
func (t *Timeline[P]) Add(p P) {
	t.width = max(t.width, 1)
	if n := len(t.points); n > 0 && t.points[n-1].Count()+p.Count() <= t.width {
		t.points[n-1] = t.points[n-1].Merge(p)
		return
	}
	t.points = append(t.points, p)
	if len(t.points) <= TimelinePoints {
		return
	}
	half := t.points[:0]
	for i := 0; i < len(t.points); i += 2 {
		if i+1 == len(t.points) {
			half = append(half, t.points[i])
			break
		}
		half = append(half, t.points[i].Merge(t.points[i+1]))
	}
	clear(t.points[len(half):])
	t.points = half
	t.width *= 2
}

// Points is a copy of the points.
func (t *Timeline[P]) Points() []P { return append([]P(nil), t.points...) }

// Last is the newest point, for a caller that corrects it; nil when there is none.
func (t *Timeline[P]) Last() *P {
	if len(t.points) == 0 {
		return nil
	}
	return &t.points[len(t.points)-1]
}

// Restore starts the timeline from points read back from a checkpoint.
func (t *Timeline[P]) Restore(points []P) {
	t.points = append([]P(nil), points...)
	t.width = 1
	for _, p := range points {
		t.width = max(t.width, p.Count())
	}
}

// count is a point's N: 0 in a file means one observation.
func count(n int) int { return max(n, 1) }

// mean is the weighted mean of two figures, either unknown (nil); the known one when only one
// is; unknown when neither weighs anything.
func mean(a *float64, na int, b *float64, nb int) *float64 {
	switch {
	case na+nb == 0:
		return nil
	case a == nil:
		return b
	case b == nil:
		return a
	}
	v := (*a*float64(na) + *b*float64(nb)) / float64(na+nb)
	return &v
}

// extreme is the smaller (pick = math.Min) or larger (math.Max) of the known figures.
func extreme(pick func(a, b float64) float64, figs ...*float64) *float64 {
	var out *float64
	for _, f := range figs {
		switch {
		case f == nil:
		case out == nil:
			out = new(*f)
		default:
			*out = pick(*out, *f)
		}
	}
	return out
}

// Count is how many observations the point stands for.
func (p ResourcePoint) Count() int { return count(p.N) }

// Merge averages rates and gauges, keeps the later counts (ingested, acked, bytes per sample
// since the start) and the extremes of each gauge in Min and Max, so a spike survives.
func (p ResourcePoint) Merge(later ResourcePoint) ResourcePoint {
	na, nb := p.Count(), later.Count()
	out := later
	out.N = na + nb
	out.CPUCores = mean(p.CPUCores, na, later.CPUCores, nb)
	out.RSSBytes = mean(p.RSSBytes, na, later.RSSBytes, nb)
	out.DiskBytes = mean(p.DiskBytes, na, later.DiskBytes, nb)
	out.DiskReadBytesPerSecond = mean(p.DiskReadBytesPerSecond, na, later.DiskReadBytesPerSecond, nb)
	out.DiskWriteBytesPerSecond = mean(p.DiskWriteBytesPerSecond, na, later.DiskWriteBytesPerSecond, nb)
	out.ActiveSeries = mean(p.ActiveSeries, na, later.ActiveSeries, nb)
	out.HeapLiveBytes = mean(p.HeapLiveBytes, na, later.HeapLiveBytes, nb)
	out.Min = p.bound(later, math.Min)
	out.Max = p.bound(later, math.Max)
	return out
}

// bound is the extremes of two points' gauges, each point's own Min or Max where it has one.
func (p ResourcePoint) bound(later ResourcePoint, pick func(a, b float64) float64) *ResourceExtremes {
	a, b := p.extremes(pick), later.extremes(pick)
	return &ResourceExtremes{
		CPUCores:                extreme(pick, a.CPUCores, b.CPUCores),
		RSSBytes:                extreme(pick, a.RSSBytes, b.RSSBytes),
		DiskBytes:               extreme(pick, a.DiskBytes, b.DiskBytes),
		DiskReadBytesPerSecond:  extreme(pick, a.DiskReadBytesPerSecond, b.DiskReadBytesPerSecond),
		DiskWriteBytesPerSecond: extreme(pick, a.DiskWriteBytesPerSecond, b.DiskWriteBytesPerSecond),
		ActiveSeries:            extreme(pick, a.ActiveSeries, b.ActiveSeries),
		HeapLiveBytes:           extreme(pick, a.HeapLiveBytes, b.HeapLiveBytes),
	}
}

// extremes is the point's Min (pick = math.Min) or Max, or its own figures for one observation.
func (p ResourcePoint) extremes(pick func(a, b float64) float64) ResourceExtremes {
	e := p.Max
	if pick(0, 1) == 0 {
		e = p.Min
	}
	if e != nil {
		return *e
	}
	return ResourceExtremes{
		CPUCores: p.CPUCores, RSSBytes: p.RSSBytes, DiskBytes: p.DiskBytes,
		DiskReadBytesPerSecond: p.DiskReadBytesPerSecond, DiskWriteBytesPerSecond: p.DiskWriteBytesPerSecond,
		ActiveSeries: p.ActiveSeries, HeapLiveBytes: p.HeapLiveBytes,
	}
}

// Count is how many progress intervals the point stands for.
func (p WritePoint) Count() int { return count(p.N) }

// Merge keeps the later counters, the largest lag, and the mean ingestion rate with its
// smallest and largest.
func (p WritePoint) Merge(later WritePoint) WritePoint {
	na, nb := p.Count(), later.Count()
	out := later
	out.N = na + nb
	out.LagSeconds = max(p.LagSeconds, later.LagSeconds)
	out.SamplesPerSecs = *mean(&p.SamplesPerSecs, na, &later.SamplesPerSecs, nb)
	out.SamplesPerSecondMin = min(p.rateMin(), later.rateMin())
	out.SamplesPerSecondMax = max(p.rateMax(), later.rateMax())
	return out
}

func (p WritePoint) rateMin() float64 {
	if p.N > 1 {
		return p.SamplesPerSecondMin
	}
	return p.SamplesPerSecs
}

func (p WritePoint) rateMax() float64 {
	if p.N > 1 {
		return p.SamplesPerSecondMax
	}
	return p.SamplesPerSecs
}

// Count is how many intervals the point stands for.
func (p QueryPoint) Count() int { return count(p.N) }

// Merge adds the completions and errors, weighs p50 by completions and keeps the largest p99.
func (p QueryPoint) Merge(later QueryPoint) QueryPoint {
	out := later
	out.N = p.Count() + later.Count()
	out.Errors += p.Errors
	out.Completed += p.Completed
	out.P50 = mean(p.P50, int(p.Completed), later.P50, int(later.Completed))
	out.P99 = extreme(math.Max, p.P99, later.P99)
	return out
}

// writeAtomic writes b to path through a temporary file in the same directory and a rename,
// so a reader, or a run killed while writing, sees the old file or the new one, never half.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// MinSlopeSpan is the least stretch of a run, after its warm-up, over which tsbench states
// the slopes of its own memory (issue 29). The live heap after GC moves by a few MiB from one
// GC to the next, so over minutes a slope is that noise extrapolated to an hour: a `make run`
// fitted over 2.6 minutes after its catch-up read +27 MiB/h, where one real hour of the same
// load grew 1.36 MiB/h.
const MinSlopeSpan = 30 * time.Minute

// SetSlopes fits HeapLiveBytesPerHour and RSSBytesPerHour over the timeline from `from`, the
// end of a warm-up of `after`, when at least MinSlopeSpan of it follows; else leaves them null
// with the reason in Reasons.
func (g *Generator) SetSlopes(from time.Time, after time.Duration) {
	g.SlopeAfterSeconds = after.Seconds()
	g.HeapLiveBytesPerHour, g.RSSBytesPerHour = nil, nil
	var last time.Time
	for _, p := range g.Timeline {
		if t, err := time.Parse(time.RFC3339Nano, p.Time); err == nil && t.After(last) {
			last = t
		}
	}
	if span := last.Sub(from); span < MinSlopeSpan {
		why := fmt.Sprintf("not meaningful: %s of the run after the first %s (the warm-up), less than the %s a slope needs: over minutes the live heap's move from one GC to the next reads as a trend",
			max(span, 0).Round(time.Second), after.Round(time.Second), MinSlopeSpan)
		if g.Reasons == nil {
			g.Reasons = map[string]string{}
		}
		g.Reasons["heapLiveBytesPerHour"], g.Reasons["rssBytesPerHour"] = why, why
		return
	}
	g.HeapLiveBytesPerHour = SlopePerHour(g.Timeline, from, func(p ResourcePoint) *float64 { return p.HeapLiveBytes })
	g.RSSBytesPerHour = SlopePerHour(g.Timeline, from, func(p ResourcePoint) *float64 { return p.RSSBytes })
}

// SlopePerHour is the least-squares slope, per hour, of a figure over the points at or after
// from, each weighed by the observations it stands for; nil with fewer than two points or
// less than a minute between them.
func SlopePerHour(points []ResourcePoint, from time.Time, get func(ResourcePoint) *float64) *float64 {
	var n, st, sy, stt, sty float64
	var first, last time.Time
	for _, p := range points {
		t, err := time.Parse(time.RFC3339Nano, p.Time)
		v := get(p)
		if err != nil || v == nil || t.Before(from) {
			continue
		}
		if first.IsZero() {
			first = t
		}
		last = t
		w, x := float64(p.Count()), t.Sub(from).Hours()
		n, st, sy, stt, sty = n+w, st+w*x, sy+w*(*v), stt+w*x*x, sty+w*x*(*v)
	}
	den := n*stt - st*st
	if last.Sub(first) < time.Minute || den == 0 {
		return nil
	}
	s := (n*sty - st*sy) / den
	return &s
}

// mergeLongRun is what the shards' files say of their own coverage: the merged file is
// partial when any shard's is, as of the earliest checkpoint (the figures of every shard
// reach that far), and it carries every shard's gaps, each naming its shard.
func mergeLongRun(shards []*Run) (*Partial, []Gap) {
	var partial *Partial
	var gaps []Gap
	for _, r := range shards {
		if p := r.Partial; p != nil && (partial == nil || p.At.Before(partial.At)) {
			partial = &Partial{At: p.At, Reason: p.Reason}
		}
		for _, g := range r.Gaps {
			g.Reason = fmt.Sprintf("shard %d/%d: %s", r.Shard.Index, r.Shard.Count, g.Reason)
			gaps = append(gaps, g)
		}
	}
	return partial, gaps
}

// CombineVerify is the read-back of several spans of one run (a resumed run reads back
// around its gaps): counts added up, as the shards' are.
func CombineVerify(vs ...*Verify) *Verify { return mergeVerifies(vs, true) }
