package workload

import (
	"fmt"
	"time"
)

// ShardTargets returns the targets, of total (targetsCount × writeReplicas), that shard i of
// n generates: every n-th target from i on. The n parts are disjoint and their union is every
// target; their sizes differ by at most one, and each part holds its share of every replica
// and of every churn round's targets (a round picks a run of consecutive targets).
func ShardTargets(total, i, n int) []int {
	if n < 1 || i < 0 || i >= n {
		panic(fmt.Sprintf("workload: shard %d/%d", i, n))
	}
	own := make([]int, 0, (total+n-1-i)/n)
	for t := i; t < total; t += n {
		own = append(own, t)
	}
	return own
}

// Part is one shard's targets of a Generator, numbered 0..Targets()-1: target j of the part
// is target ShardTargets(...)[j] of the whole workload, with that target's labels, phase,
// values and churn. A run with shard i/n writes and verifies exactly its part; the n parts
// of one config, seed and start time add up to the one-process workload.
type Part struct {
	g       *Generator
	targets []int // global target of each part target
}

// Part returns shard i of n of g. Part(0, 1) is the whole workload.
func (g *Generator) Part(i, n int) *Part {
	return &Part{g: g, targets: ShardTargets(g.total, i, n)}
}

// Targets is the number of targets in the part.
func (p *Part) Targets() int { return len(p.targets) }

// Global is the workload's number of part target j.
func (p *Part) Global(j int) int { return p.targets[j] }

// SeriesPerTarget is the profile's number of series.
func (p *Part) SeriesPerTarget() int { return p.g.SeriesPerTarget() }

// TargetLabelNames are the labels Scrape adds to every series, as Generator.TargetLabelNames.
func (p *Part) TargetLabelNames() []string { return p.g.TargetLabelNames() }

// SeriesLabels is series s's own labels, as Generator.SeriesLabels: a part's series are the
// whole workload's, so an encoder prepares them once for every part.
func (p *Part) SeriesLabels(s int) []Label { return p.g.SeriesLabels(s) }

// Series is profile series s (its type, help and unit too), as Generator.Series: what
// remote write 2.0 and OTLP send as metadata and the OTLP read-back names by.
func (p *Part) Series(s int) Series { return p.g.Series(s) }

// ScrapeInterval is the interval between two scrapes of a target.
func (p *Part) ScrapeInterval() time.Duration { return p.g.ScrapeInterval() }

// ScrapeTime is the millisecond timestamp of part target j's scrape k.
func (p *Part) ScrapeTime(j int, k int64) int64 { return p.g.ScrapeTime(p.targets[j], k) }

// Scrape appends part target j's scrape k, as Generator.Scrape.
func (p *Part) Scrape(app Appender, j int, k int64) (values, staleMarkers int) {
	return p.g.Scrape(app, p.targets[j], k)
}

// Revision is part target j's revision label at scrape k.
func (p *Part) Revision(j int, k int64) int64 { return p.g.Revision(p.targets[j], k) }
