package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/report"
)

// progress prints a line every ProgressEvery until ctx ends, records each storage's write
// counters for the timeline, and checks the accounting at every line.
func (r *run) progress(ctx context.Context) {
	t := time.NewTicker(r.opts.ProgressEvery)
	defer t.Stop()
	prev := map[string]report.WritePoint{}
	for _, name := range r.cfg.StorageNames() {
		prev[name] = report.WritePoint{Time: r.start}
	}
	for {
		select {
		case <-ctx.Done():
			r.record(time.Now(), prev) // the last point, at the end of the load
			return
		case now := <-t.C:
			line := r.record(now, prev)
			r.checkAccounting(now)
			if r.opts.Progress != nil {
				fmt.Fprintln(r.opts.Progress, line)
			}
		}
	}
}

// record appends a timeline point per storage and returns the progress line.
func (r *run) record(now time.Time, prev map[string]report.WritePoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%6s]", now.Sub(r.start).Round(time.Second))
	for _, name := range r.cfg.StorageNames() {
		fmt.Fprintf(&b, " %s:", name)
		if w := r.writer.Results(name); w != nil {
			p := report.WritePoint{
				Time: now.UTC(), Generated: w.GeneratedSamples, Acked: w.AckedSamples, Dropped: w.Dropped(),
				Pending: w.PendingSamples, Retries: w.Retries, LagSeconds: w.LagSeconds,
			}
			if secs := now.Sub(prev[name].Time).Seconds(); secs > 0 {
				p.SamplesPerSecs = float64(p.Acked-prev[name].Acked) / secs
			}
			prev[name] = p
			r.mu.Lock()
			r.timeline[name] = append(r.timeline[name], p)
			r.mu.Unlock()
			fmt.Fprintf(&b, " %.0f samples/s, lag %.1fs, pending %d", p.SamplesPerSecs, p.LagSeconds, p.Pending)
			if p.Dropped > 0 {
				fmt.Fprintf(&b, ", dropped %d", p.Dropped)
			}
		}
		if q := r.runners[name]; q != nil {
			res := q.Results()
			fmt.Fprintf(&b, ", query p99 %.3fs, errors %d", res.LatencySeconds.P99, sumValues(res.Errors))
		}
		b.WriteString(";")
	}
	return strings.TrimSuffix(b.String(), ";")
}

func sumValues(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
