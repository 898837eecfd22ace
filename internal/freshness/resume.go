package freshness

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tsbench/tsbench/internal/results"
)

// Resume continues the storage's freshness from a checkpoint's (issue 19): the canary's write
// counts and each probe's counts, histogram and timeline. The samples pending at the
// checkpoint were acked before the restart and no one looked for them since: they count as
// abandoned, so that every acked sample stays in exactly one count. Call it before Run.
func (p *Prober) Resume(f *results.Freshness) error {
	if f == nil {
		return nil
	}
	p.mu.Lock()
	p.written += f.Written
	p.acked += f.Acked
	p.wErrors = results.AddCounts(p.wErrors, f.WriteErrors)
	if p.firstErr == "" {
		p.firstErr = f.FirstWriteError
	}
	var queries int64
	for i, pr := range []*results.FreshnessProbe{f.Instant, f.Range, f.Series} {
		if pr == nil {
			continue
		}
		queries += pr.Queries
		if err := p.probes[i].resume(pr); err != nil {
			p.mu.Unlock()
			return fmt.Errorf("resume freshness %s: %w", pr.Query, err)
		}
	}
	if f.QueriesPerSecond > 0 {
		p.before = time.Duration(float64(queries) / f.QueriesPerSecond * float64(time.Second))
	}
	p.mu.Unlock()
	return nil
}

func (p *probe) resume(from *results.FreshnessProbe) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := resumeLatency(p.h, &p.longest, from.Seconds); err != nil {
		return fmt.Errorf("decode histogram: %w", err)
	}
	// The lower bounds are absent from a checkpoint written before issue 29.
	if err := resumeLatency(p.lower, &p.longestLower, from.LowerBoundSeconds); err != nil {
		return fmt.Errorf("decode lower-bound histogram: %w", err)
	}
	p.visible += from.Visible
	p.neverVisible += from.NeverVisible
	p.abandoned += from.Pending + from.Abandoned
	p.queries += from.Queries
	p.merged += from.MergedPolls
	p.errors = results.AddCounts(p.errors, from.Errors)
	if p.firstErr == "" {
		p.firstErr = from.FirstError
	}
	p.tl.points.Restore(from.Timeline)
	for _, s := range from.LastPollSeconds { // until this run places a sample of its own
		p.last = append(p.last, time.Duration(s*float64(time.Second)))
	}
	return nil
}

// resumeLatency adds a checkpoint's latencies to h and their maximum to longest; it returns
// the histogram's decode error.
func resumeLatency(h *hdrhistogram.Histogram, longest *time.Duration, from results.Latency) error {
	if from.Histogram != "" {
		d, err := hdrhistogram.Decode([]byte(from.Histogram))
		if err != nil {
			return err
		}
		h.Merge(d)
	}
	if from.Max != nil {
		*longest = max(*longest, time.Duration(*from.Max*float64(time.Second)))
	}
	return nil
}
