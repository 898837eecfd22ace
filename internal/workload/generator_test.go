package workload

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tsbench "github.com/tsbench/tsbench"
)

func defaultProfile(t testing.TB) *Profile {
	t.Helper()
	p, err := LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newGen(t testing.TB, o Options) *Generator {
	t.Helper()
	if o.Start.IsZero() {
		o.Start = time.UnixMilli(1_700_000_000_000)
	}
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = 10 * time.Second
	}
	g, err := New(defaultProfile(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// sample is one appended sample, labels copied.
type sample struct {
	labels string
	t      int64
	v      float64
}

type collector struct{ samples []sample }

func (c *collector) Append(labels []Label, t int64, v float64) {
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(l.Name + "=" + l.Value + ",")
	}
	c.samples = append(c.samples, sample{b.String(), t, v})
}

func TestDefaultProfile(t *testing.T) {
	p := defaultProfile(t)
	if n := len(p.Series); n < 800 || n > 1000 {
		t.Errorf("%d series per target, want 800–1000 like a typical host", n)
	}
	if diff := slices.Compare(p.Kinds(), []string{Constant, Counter, Gauge, NaN, Remainder}); diff != 0 {
		t.Errorf("shape kinds %v, want every kind", p.Kinds())
	}
}

func TestScrapeLabelsSortedAndComplete(t *testing.T) {
	g := newGen(t, Options{Seed: 1, Hosts: 3, Replicas: 2})
	var c collector
	values, stale := g.Scrape(&c, 4, 0)
	if values != g.SeriesPerTarget() || stale != 0 || len(c.samples) != values {
		t.Fatalf("scrape gave %d values %d stale, %d appended", values, stale, len(c.samples))
	}
	seen := map[string]bool{}
	for _, s := range c.samples {
		if seen[s.labels] {
			t.Errorf("duplicate series %s", s.labels)
		}
		seen[s.labels] = true
		parts := strings.Split(strings.TrimSuffix(s.labels, ","), ",")
		names := make([]string, len(parts))
		for i, p := range parts {
			names[i], _, _ = strings.Cut(p, "=")
		}
		if !slices.IsSorted(names) {
			t.Errorf("labels not sorted: %s", s.labels)
		}
		for _, want := range []string{"instance=host-000001:9100,", "job=node_exporter,", "replica=1,", "revision=0,"} {
			if !strings.Contains(s.labels, want) {
				t.Errorf("%s lacks %s", s.labels, want)
			}
		}
	}
}

func TestValuesArePureAndSeeded(t *testing.T) {
	a := newGen(t, Options{Seed: 7, Hosts: 10})
	b := newGen(t, Options{Seed: 7, Hosts: 10})
	c := newGen(t, Options{Seed: 8, Hosts: 10})
	differ := 0
	for s := range a.SeriesPerTarget() {
		ts := a.ScrapeTime(3, 100)
		va, vb, vc := a.Value(3, s, ts), b.Value(3, s, ts), c.Value(3, s, ts)
		if math.Float64bits(va) != math.Float64bits(vb) {
			t.Fatalf("series %d: same seed gave %v and %v", s, va, vb)
		}
		if math.Float64bits(va) != math.Float64bits(vc) {
			differ++
		}
	}
	if differ < a.SeriesPerTarget()/3 {
		t.Errorf("another seed changed only %d of %d values", differ, a.SeriesPerTarget())
	}
}

func TestShapeProperties(t *testing.T) {
	g := newGen(t, Options{Seed: 3, Hosts: 5})
	p := g.profile
	for target := range 5 {
		for s, ser := range p.Series {
			prev := math.Inf(-1)
			for k := int64(0); k < 200; k += 7 {
				ts := g.ScrapeTime(target, k)
				v := g.Value(target, s, ts)
				switch ser.Shape.Kind {
				case NaN:
					if !math.IsNaN(v) || IsStaleNaN(v) {
						t.Fatalf("%s: NaN series gave %v", ser.Name, v)
					}
				case Counter:
					if v < prev {
						t.Fatalf("%s target %d: counter went from %v to %v", ser.Name, target, prev, v)
					}
					prev = v
				case Gauge:
					if v < ser.Shape.Min || v > ser.Shape.Max {
						t.Fatalf("%s: gauge %v outside [%v, %v]", ser.Name, v, ser.Shape.Min, ser.Shape.Max)
					}
				}
				if r := ser.Shape.Resolution; r > 0 && !math.IsNaN(v) {
					if q := v / r; math.Abs(q-math.Round(q)) > 1e-6*math.Max(1, math.Abs(q)) {
						t.Fatalf("%s: %v is not a multiple of %v", ser.Name, v, r)
					}
				}
			}
		}
	}
}

func TestPhasesWithinInterval(t *testing.T) {
	g := newGen(t, Options{Seed: 2, Hosts: 1000, ScrapeInterval: 15 * time.Second})
	start := g.startMs
	distinct := map[int64]bool{}
	for target := range 1000 {
		t0 := g.ScrapeTime(target, 0)
		if t0 < start || t0 >= start+15000 {
			t.Fatalf("target %d first scrape at +%dms, outside the interval", target, t0-start)
		}
		if g.ScrapeTime(target, 3)-t0 != 45000 {
			t.Fatalf("target %d not scraped every 15s", target)
		}
		distinct[t0] = true
	}
	if len(distinct) < 900 {
		t.Errorf("only %d distinct phases for 1000 targets: scrapes are not spread", len(distinct))
	}
}

// TestChurnCountsExact pins the churn rule: every churn round, each replica gives a new
// revision to exactly round(targetsCount × percent / 100) of its own targets, so
// writeReplicas × round(targetsCount × percent / 100) targets in all, as each replica of the
// prometheus-benchmark chart runs its own config updater.
func TestChurnCountsExact(t *testing.T) {
	const targets, replicas, interval = 200, 2, 10 * time.Second
	g := newGen(t, Options{
		Seed: 9, Hosts: targets, Replicas: replicas, ScrapeInterval: interval,
		ChurnPercent: 1.25, ChurnInterval: time.Minute,
	})
	// round(200 × 1.25 / 100) = round(2.5) = 3 targets per replica (half away from zero),
	// 2 × 3 = 6 per round; not round(400 × 1.25 / 100) = 5 over both replicas at once.
	if g.ChurnedTargets() != 6 {
		t.Fatalf("churned targets %d, want 6", g.ChurnedTargets())
	}
	rounds := int64(30)
	// Scrapes per minute: 6; look at each target's scrapes over 30 rounds.
	totalChanges := 0
	for target := range replicas * targets {
		for k := int64(1); k <= rounds*6; k++ {
			if g.Revision(target, k) != g.Revision(target, k-1) {
				totalChanges++
			}
		}
	}
	// Every scrape of a target falls in one round; each round picks 6 targets. Round r's
	// changes show in the first scrape after r minutes, which exists for rounds 1..29 at least
	// and for round 30 only for targets whose phase puts a scrape at or after 30 minutes.
	if totalChanges < 29*6 || totalChanges > 30*6 {
		t.Errorf("%d revision changes over 30 rounds of 6 targets", totalChanges)
	}
	differ := 0
	for j := int64(1); j <= rounds; j++ {
		perReplica := make([]int, replicas)
		for target := range replicas * targets {
			if g.churned(target, j) {
				perReplica[target/targets]++
			}
			if g.churned(target, j) != g.churned((target+targets)%(replicas*targets), j) {
				differ++
			}
		}
		if diff := slices.Compare(perReplica, []int{3, 3}); diff != 0 {
			t.Errorf("round %d churned %v targets per replica, want exactly 3 in each", j, perReplica)
		}
	}
	if differ == 0 {
		t.Error("both replicas churned the same targets in every round: want each replica's own pick")
	}
}

// TestRevisionKeepsChurnChoices checks Revision, in any call order, against a count of the
// rounds that picked the target, each drawn as a single replica always drew it: a seeded
// offset, then the next round(targetsCount × percent / 100) targets.
func TestRevisionKeepsChurnChoices(t *testing.T) {
	const targets = 50
	g := newGen(t, Options{Seed: 5, Hosts: targets, ChurnPercent: 7, ChurnInterval: time.Minute})
	naive := func(target int, k int64) int64 {
		var rev int64
		for j := int64(1); j <= (g.ScrapeTime(target, k)-g.startMs)/60_000; j++ {
			off := int(hash(5, 2, uint64(j)) % targets)
			if (target-off+targets)%targets < 4 { // round(50 × 7 / 100) = 4
				rev++
			}
		}
		return rev
	}
	// Forward, then far back, then forward again, in a seeded order.
	for i := range 3000 {
		target := int(hash(1, uint64(i)) % targets)
		k := int64(hash(2, uint64(i)) % 3000)
		if i%3 == 0 {
			k = int64(i)
		}
		if got, want := g.Revision(target, k), naive(target, k); got != want {
			t.Fatalf("call %d: Revision(%d, %d) = %d, want %d", i, target, k, got, want)
		}
	}
}

func TestStaleMarkersOnChurn(t *testing.T) {
	g := newGen(t, Options{
		Seed: 4, Hosts: 20, ScrapeInterval: 10 * time.Second,
		ChurnPercent: 10, ChurnInterval: 30 * time.Second,
	})
	changed := 0
	for target := range 20 {
		for k := int64(1); k < 30; k++ {
			var c collector
			values, stale := g.Scrape(&c, target, k)
			old, rev := g.Revision(target, k-1), g.Revision(target, k)
			if old == rev {
				if stale != 0 {
					t.Fatalf("target %d k=%d: %d stale markers without churn", target, k, stale)
				}
				continue
			}
			changed++
			if stale != g.SeriesPerTarget() || len(c.samples) != values+stale {
				t.Fatalf("target %d k=%d: %d stale markers, want one per series (%d)", target, k, stale, g.SeriesPerTarget())
			}
			for _, s := range c.samples[values:] {
				if !IsStaleNaN(s.v) || !strings.Contains(s.labels, "revision="+itoa(old)+",") || s.t != g.ScrapeTime(target, k) {
					t.Fatalf("bad stale marker %+v", s)
				}
			}
		}
	}
	if changed == 0 {
		t.Fatal("no churn happened")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestLabelsMatchScrape(t *testing.T) {
	g := newGen(t, Options{Seed: 1, Hosts: 3})
	var c collector
	g.Scrape(&c, 2, 5)
	for s := range g.SeriesPerTarget() {
		var b strings.Builder
		for _, l := range g.Labels(2, s, 0) {
			b.WriteString(l.Name + "=" + l.Value + ",")
		}
		if b.String() != c.samples[s].labels {
			t.Fatalf("Labels %s, Scrape %s", b.String(), c.samples[s].labels)
		}
		if math.Float64bits(g.Value(2, s, c.samples[s].t)) != math.Float64bits(c.samples[s].v) && !math.IsNaN(c.samples[s].v) {
			t.Fatalf("Value differs from Scrape for series %d", s)
		}
	}
}

func TestConcurrentScrapes(t *testing.T) {
	g := newGen(t, Options{Seed: 1, Hosts: 8, ChurnPercent: 25, ChurnInterval: 20 * time.Second})
	var wg sync.WaitGroup
	results := make([][]sample, 8)
	for target := range 8 {
		wg.Go(func() {
			var c collector
			for k := range int64(20) {
				g.Scrape(&c, target, k)
			}
			results[target] = c.samples
		})
	}
	wg.Wait()
	for target := range 8 {
		var c collector
		for k := range int64(20) {
			g.Scrape(&c, target, k)
		}
		for i := range c.samples {
			if c.samples[i].labels != results[target][i].labels {
				t.Fatalf("target %d: concurrent scrape gave %s, serial %s", target, results[target][i].labels, c.samples[i].labels)
			}
		}
	}
}

type discard struct{ n int }

func (d *discard) Append(labels []Label, _ int64, _ float64) { d.n += len(labels) }

func TestScrapeDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector; `go test` without -race checks them")
	}
	g := newGen(t, Options{Seed: 1, Hosts: 100, ChurnPercent: 10, ChurnInterval: time.Minute})
	var d discard
	g.Scrape(&d, 0, 0)
	allocs := testing.AllocsPerRun(20, func() { g.Scrape(&d, 7, 30) })
	if allocs > 0 {
		t.Errorf("Scrape allocates %.1f times per call", allocs)
	}
}

func BenchmarkScrape(b *testing.B) {
	benchScrape(b, &discard{})
}

// benchScrape scrapes 1000 targets with 1% churn into a, one target per iteration, and
// reports samples generated per second.
func benchScrape(b *testing.B, a Appender) {
	g := newGen(b, Options{Seed: 1, Hosts: 1000, ChurnPercent: 1, ChurnInterval: 10 * time.Minute})
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		g.Scrape(a, n%1000, int64(n/1000))
		n++
	}
	b.ReportMetric(float64(b.N*g.SeriesPerTarget())/b.Elapsed().Seconds(), "samples/s")
}

// checkHistograms checks, on every target and many scrapes, that buckets never decrease with
// le and that _count equals the +Inf bucket; it returns how many families it checked.
func checkHistograms(t *testing.T, g *Generator) int {
	t.Helper()
	type b struct {
		le float64
		s  int
	}
	fams := map[string][]b{}
	counts := map[string]int{}
	for s, ser := range g.profile.Series {
		switch {
		case strings.HasSuffix(ser.Name, "_bucket"):
			le, _ := labelValue(ser.Labels, "le")
			fams[ser.Name] = append(fams[ser.Name], b{parseLe(le), s})
		case strings.HasSuffix(ser.Name, "_count"):
			counts[strings.TrimSuffix(ser.Name, "_count")] = s
		}
	}
	for name, bs := range fams {
		slices.SortFunc(bs, func(x, y b) int { return int(math.Copysign(1, x.le-y.le)) })
		count, ok := counts[strings.TrimSuffix(name, "_bucket")]
		if !ok {
			t.Fatalf("%s has no _count", name)
		}
		for target := range g.Targets() {
			for k := int64(0); k < 1000; k += 37 {
				ts := g.ScrapeTime(target, k)
				for i := 1; i < len(bs); i++ {
					if lo, hi := g.Value(target, bs[i-1].s, ts), g.Value(target, bs[i].s, ts); lo > hi {
						t.Fatalf("%s: bucket le=%v is %v > le=%v bucket %v", name, bs[i-1].le, lo, bs[i].le, hi)
					}
				}
				if inf, c := g.Value(target, bs[len(bs)-1].s, ts), g.Value(target, count, ts); inf != c {
					t.Fatalf("%s: +Inf bucket %v, _count %v", name, inf, c)
				}
			}
		}
	}
	return len(fams)
}

// BenchmarkRevision calls Revision as the writer does, each target's scrapes in turn, early
// in a run (churn round 10) and late (round 10,000): the cost per call must not grow with
// the run's length.
func BenchmarkRevision(b *testing.B) {
	for _, round := range []int64{10, 10_000} {
		b.Run("round="+itoa(round), func(b *testing.B) {
			const targets = 1000
			g := newGen(b, Options{Seed: 1, Hosts: targets, ChurnPercent: 1, ChurnInterval: time.Minute})
			k0 := round * 6 // 6 scrapes of 10 s per one-minute churn round
			for target := range targets {
				g.Revision(target, k0)
			}
			n := 0
			for b.Loop() {
				g.Revision(n%targets, k0+int64(n/targets))
				n++
			}
		})
	}
}

// TestCPUSecondsWithinWallTime: a CPU spends each second in exactly one mode, so per target and
// CPU the modes' node_cpu_seconds_total rates add up to at most 1 s/s: idle is the remainder
// of the captured total (≈ 0.998 s/s), counted tick by tick, at most one 1 s tick ahead of the
// wall clock (1/3600 over this hour). A factor above 1 once made idle alone run at 1.44 s/s:
// a CPU utilisation below zero in the default rules.
func TestCPUSecondsWithinWallTime(t *testing.T) {
	g := newGen(t, Options{Seed: 1, Hosts: 200})
	const k = 360 // an hour of scrapes: quantization adds at most 0.01 s per mode
	for target := range 200 {
		sum := map[string]float64{} // cpu label → s/s over all modes
		t0, t1 := g.ScrapeTime(target, 0), g.ScrapeTime(target, k)
		for s, ser := range g.profile.Series {
			if ser.Name != "node_cpu_seconds_total" {
				continue
			}
			cpu := ""
			for _, l := range ser.Labels {
				if l.Name == "cpu" {
					cpu = l.Value
				}
			}
			sum[cpu] += (g.Value(target, s, t1) - g.Value(target, s, t0)) / (float64(t1-t0) / 1000)
		}
		if len(sum) != 16 {
			t.Fatalf("target %d: %d CPUs, want the default profile's 16", target, len(sum))
		}
		for cpu, rate := range sum {
			if rate > 1+1.0/3600 || rate < 0.49 {
				t.Errorf("target %d cpu %s: modes add up to %.4f s/s, want at most 1 (and one tick)", target, cpu, rate)
			}
		}
	}
}
