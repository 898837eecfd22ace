package workload

import (
	"maps"
	"slices"
	"testing"
	"time"
)

// TestShardTargetsPartition checks that the shards of any workload size are disjoint, cover
// every target (replicas included) and are balanced, for n = 1..64.
func TestShardTargetsPartition(t *testing.T) {
	sizes := []int{1000, 4097}
	for n := 1; n <= 130; n++ { // every size up to twice the largest shard count, and beyond
		sizes = append(sizes, n)
	}
	for _, targets := range sizes {
		for _, replicas := range []int{1, 2, 3} {
			total := targets * replicas
			for n := 1; n <= 64; n++ {
				owner := make([]int, total)
				for i := range owner {
					owner[i] = -1
				}
				lo, hi := total, 0
				for i := range n {
					part := ShardTargets(total, i, n)
					lo, hi = min(lo, len(part)), max(hi, len(part))
					for _, tg := range part {
						if tg < 0 || tg >= total {
							t.Fatalf("targets %d×%d, shard %d/%d: target %d out of range", targets, replicas, i, n, tg)
						}
						if owner[tg] >= 0 {
							t.Fatalf("targets %d×%d: target %d in shards %d and %d of %d", targets, replicas, tg, owner[tg], i, n)
						}
						owner[tg] = i
					}
				}
				if j := slices.Index(owner, -1); j >= 0 {
					t.Fatalf("targets %d×%d, %d shards: target %d in no shard", targets, replicas, n, j)
				}
				if hi-lo > 1 {
					t.Errorf("targets %d×%d, %d shards: parts of %d to %d targets, want sizes within one", targets, replicas, n, lo, hi)
				}
			}
		}
	}
}

// TestPartsAddUpToWorkload checks, sample by sample, that the parts' scrapes are the whole
// workload's: the same series, values and staleness markers, churn included.
func TestPartsAddUpToWorkload(t *testing.T) {
	o := Options{Seed: 7, Hosts: 5, Replicas: 2, ScrapeInterval: time.Second, ChurnPercent: 20, ChurnInterval: 3 * time.Second}
	const scrapes = 8 // churn rounds at 3 s and 6 s
	whole := map[sample]int{}
	g := newGen(t, o)
	var c collector
	for tg := range g.Targets() {
		for k := range int64(scrapes) {
			g.Scrape(&c, tg, k)
		}
	}
	for _, s := range c.samples {
		whole[key(s)]++
	}
	stale := 0
	for _, s := range c.samples {
		if IsStaleNaN(s.v) {
			stale++
		}
	}
	if stale == 0 {
		t.Fatal("no staleness markers in the whole workload: the test would not cover churn")
	}
	for _, n := range []int{2, 3, 7} {
		parts := map[sample]int{}
		for i := range n {
			p := newGen(t, o).Part(i, n) // a fresh generator per shard, as in separate processes
			var c collector
			for j := range p.Targets() {
				for k := range int64(scrapes) {
					p.Scrape(&c, j, k)
				}
			}
			for _, s := range c.samples {
				parts[key(s)]++
			}
		}
		if !maps.Equal(whole, parts) {
			t.Errorf("%d shards: %d distinct samples, the whole workload %d", n, len(parts), len(whole))
		}
	}
}

// key makes a sample comparable: NaN values by their bits.
func key(s sample) sample {
	if s.v != s.v {
		if IsStaleNaN(s.v) {
			s.labels += " stale"
		}
		s.v = 0
	}
	return s
}
