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
	for k, v := range f.WriteErrors {
		p.wErrors[k] += v
	}
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
	if from.Seconds.Histogram != "" {
		h, err := hdrhistogram.Decode([]byte(from.Seconds.Histogram))
		if err != nil {
			return fmt.Errorf("decode histogram: %w", err)
		}
		p.h.Merge(h)
	}
	if from.Seconds.Max != nil {
		p.longest = max(p.longest, time.Duration(*from.Seconds.Max*float64(time.Second)))
	}
	if from.LowerBoundSeconds.Histogram != "" { // absent from a checkpoint written before issue 29
		h, err := hdrhistogram.Decode([]byte(from.LowerBoundSeconds.Histogram))
		if err != nil {
			return fmt.Errorf("decode lower-bound histogram: %w", err)
		}
		p.lower.Merge(h)
	}
	if from.LowerBoundSeconds.Max != nil {
		p.longestLower = max(p.longestLower, time.Duration(*from.LowerBoundSeconds.Max*float64(time.Second)))
	}
	p.visible += from.Visible
	p.neverVisible += from.NeverVisible
	p.abandoned += from.Pending + from.Abandoned
	p.queries += from.Queries
	p.merged += from.MergedPolls
	for k, v := range from.Errors {
		p.errors[k] += v
	}
	if p.firstErr == "" {
		p.firstErr = from.FirstError
	}
	p.tl.points.Restore(from.Timeline)
	for _, s := range from.LastPollSeconds { // until this run places a sample of its own
		p.last = append(p.last, time.Duration(s*float64(time.Second)))
	}
	return nil
}
