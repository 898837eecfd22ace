package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
)

// progress prints a line every ProgressEvery until ctx ends, records each storage's write
// counters for the timeline, checks the accounting at every line, and updates the live page
// with it unless the checkpoints come as often.
func (r *run) progress(ctx context.Context) {
	every(ctx, r.opts.ProgressEvery, func(now time.Time) {
		line := r.record(now)
		r.checkAccounting(now)
		if r.opts.Progress != nil {
			fmt.Fprintln(r.opts.Progress, line)
		}
		if !r.checkpointsUpdateLive() {
			r.liveNow(now, nil)
		}
	})
	r.record(time.Now()) // the end of the load
}

// record appends a timeline point per storage and returns the progress line. A point less
// than a second after the previous one replaces its counts and keeps its rate: a rate over a
// few milliseconds would be noise. It holds r.mu throughout: results assembled meanwhile (a
// checkpoint, the live page) have this moment's point for every storage or for none.
func (r *run) record(now time.Time) string {
	var b strings.Builder
	b.WriteString(r.progressHead(now))
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.last
	r.last = now
	replace := now.Sub(prev) < time.Second
	for _, name := range r.cfg.StorageNames() {
		fmt.Fprintf(&b, " %s:", name)
		if w := r.writer.Results(name); w != nil {
			p := results.WritePoint{
				Time: now.UTC(), Generated: w.GeneratedSamples, Acked: w.AckedSamples, Dropped: w.Dropped(),
				Pending: w.PendingSamples, Retries: w.Retries, LagSeconds: w.LagSeconds,
			}
			tl := r.timeline[name]
			if tl == nil {
				tl = &results.Timeline[results.WritePoint]{}
				r.timeline[name] = tl
			}
			switch last := tl.Last(); {
			case replace && last != nil:
				// The newest point takes the counts; it keeps its rate, count and extremes.
				p.SamplesPerSecs, p.N = last.SamplesPerSecs, last.N
				p.SamplesPerSecondMin, p.SamplesPerSecondMax = last.SamplesPerSecondMin, last.SamplesPerSecondMax
				if last.N > 1 { // a merged point holds the largest lag of its intervals
					p.LagSeconds = max(p.LagSeconds, last.LagSeconds)
				}
				*last = p
			case last != nil:
				p.SamplesPerSecs = float64(p.Acked-last.Acked) / now.Sub(prev).Seconds()
				tl.Add(p)
			default:
				p.SamplesPerSecs = float64(p.Acked) / now.Sub(prev).Seconds()
				tl.Add(p)
			}
			if h := w.History; h != nil && !h.CaughtUp {
				b.WriteString(" catching up,") // the lag is how far behind the wall clock it still is
			}
			fmt.Fprintf(&b, " %.0f samples/s, lag %.1fs, pending %d", p.SamplesPerSecs, p.LagSeconds, p.Pending)
			if p.Dropped > 0 {
				fmt.Fprintf(&b, ", dropped %d", p.Dropped)
			}
		} else {
			b.WriteString(" no writes") // only queried: no writeURL, or disableWrite
		}
		if q := r.runners[name]; q != nil {
			b.WriteString(queryProgress(q.Progress()))
		}
		b.WriteString(";")
	}
	return strings.TrimSuffix(b.String(), ";")
}

// queryProgress is the read part of a progress line: the p99 of the queries completed since the
// line before, so that a storage that degrades late shows at once (results keep the cumulative
// one), or "-" when none completed (a storage that stopped answering must not show 0), and the
// errors since the start.
func queryProgress(p query.Progress) string {
	p99 := "-"
	if p.Completed > 0 {
		p99 = fmt.Sprintf("%.3fs", p.P99)
	}
	return fmt.Sprintf(", query p99 %s, errors %d", p99, p.Errors)
}
