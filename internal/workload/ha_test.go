package workload

import (
	"strings"
	"testing"
	"time"
)

// TestHASchedule: exact counts of an HA pair over a span. 3 targets, 2 replicas, seed 7,
// 10 s interval, offset 10s/3 = 3333 ms, 6 scrapes each, 1% churn every 30 s: every copy
// writes what its original writes (839 values a scrape, markers when churn renews it), 3333
// ms later, with the replica label the one thing apart; without a replica label, the copies
// write the very same series and create none.
func TestHASchedule(t *testing.T) {
	const per, scrapes = 839, 6
	base := Options{Seed: 7, Hosts: 3, ScrapeInterval: 10 * time.Second, ChurnPercent: 34, ChurnInterval: 30 * time.Second}
	single := countSpan(t, newGen(t, base), scrapes)
	// round(3 × 34 / 100) = 1 target churned at 30 s: a new revision and 839 markers.
	if single.values != 3*scrapes*per || single.markers != per || single.series != 4*per || single.created != 4*per {
		t.Fatalf("without HA: %+v", single)
	}
	for _, c := range []struct {
		name        string
		ha          HA
		series      int // distinct label sets
		created     int
		replicaSeen string
	}{
		{"replica label", HA{Replicas: 2, Offset: 3333 * time.Millisecond, ClusterName: "cluster", ClusterValue: "bench", ReplicaName: "__replica__", ReplicaValue: []string{"a", "b"}}, 8 * per, 8 * per, `__replica__=b,`},
		{"no replica label", HA{Replicas: 2, Offset: 3333 * time.Millisecond}, 4 * per, 4 * per, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := base
			o.HA = c.ha
			g := newGen(t, o)
			if g.Targets() != 6 || g.ChurnedTargets() != 2 {
				t.Fatalf("targets %d, churned %d: want 6 and 2", g.Targets(), g.ChurnedTargets())
			}
			if got, want := g.Part(0, 1).ActiveSeries(g.ScrapeTime(0, 1)), int64(c.series/4*3); got != want {
				t.Errorf("active series %d, want %d", got, want)
			}
			got := countSpan(t, g, scrapes)
			want := span{values: 2 * single.values, markers: 2 * single.markers, series: c.series, created: c.created}
			if got != want {
				t.Errorf("span %+v, want %+v", got, want)
			}
			for orig := range 3 {
				cp := orig + 3
				if o, r := g.HAOriginal(cp); o != orig || r != 1 {
					t.Errorf("HAOriginal(%d) = %d, %d", cp, o, r)
				}
				for k := range int64(scrapes) {
					if d := g.ScrapeTime(cp, k) - g.ScrapeTime(orig, k); d != 3333 {
						t.Errorf("target %d scrape %d: copy %d ms after, want 3333", orig, k, d)
					}
				}
				var a, b collector
				g.Scrape(&a, orig, 2)
				g.Scrape(&b, cp, 2)
				for s := range a.samples {
					sa, sb := a.samples[s], b.samples[s]
					if want := g.Value(orig, s, sb.t); sb.v != want && !(sb.v != sb.v && want != want) {
						t.Fatalf("copy's series %d = %v, want the original's at its own time %v", s, sb.v, want)
					}
					if !strings.Contains(sb.labels, c.replicaSeen) || strings.Contains(sa.labels, "cluster=") != (c.ha.ClusterName != "") {
						t.Fatalf("labels %s / %s", sa.labels, sb.labels)
					}
					if c.replicaSeen == "" && sa.labels != sb.labels {
						t.Fatalf("without a replica label the copies differ: %s / %s", sa.labels, sb.labels)
					}
				}
			}
		})
	}
}

// TestHAScrapeDoesNotAllocate: an HA copy's scrape, its labels included, allocates nothing.
func TestHAScrapeDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector; `go test` without -race checks them")
	}
	g := newGen(t, Options{
		Seed: 1, Hosts: 100, ChurnPercent: 10, ChurnInterval: time.Minute,
		HA: HA{Replicas: 2, Offset: time.Second, ClusterName: "cluster", ClusterValue: "x", ReplicaName: "__replica__", ReplicaValue: []string{"a", "b"}},
	})
	var d discard
	g.Scrape(&d, 107, 0)
	if allocs := testing.AllocsPerRun(20, func() { g.Scrape(&d, 107, 30) }); allocs > 0 {
		t.Errorf("an HA copy's Scrape allocates %.1f times per call", allocs)
	}
}
