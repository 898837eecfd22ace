package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// histogramProfile is one classic histogram family, counters, and a gauge.
func histogramProfile() *Profile {
	bucket := func(le string, rate float64) Series {
		return Series{
			Name: "req_seconds_bucket", Labels: []Label{{"le", le}}, Type: "histogram",
			Shape: Shape{Kind: Counter, Value: rate * 100, Rate: rate, Resolution: 1},
		}
	}
	return &Profile{Series: []Series{
		{Name: "load", Type: "gauge", Shape: Shape{Kind: Gauge, Min: 0, Max: 4, PeriodSeconds: 60}},
		bucket("+Inf", 40), bucket("0.1", 10), bucket("0.5", 25), bucket("2.5", 38),
		{Name: "req_seconds_count", Type: "histogram", Shape: Shape{Kind: Counter, Value: 4000, Rate: 40, Resolution: 1}},
		{Name: "req_seconds_sum", Type: "histogram", Shape: Shape{Kind: Counter, Value: 900, Rate: 9, Resolution: 0.001}},
	}}
}

// nativeSample is one appended native histogram, copied.
type nativeSample struct {
	labels string
	t      int64
	h      Histogram
}

// both records floats and native histograms.
type both struct {
	collector
	natives []nativeSample
}

func (b *both) AppendHistogram(labels []Label, t int64, h *Histogram) {
	var sb strings.Builder
	for _, l := range labels {
		sb.WriteString(l.Name + "=" + l.Value + ",")
	}
	c := *h
	c.Buckets = slices.Clone(h.Buckets)
	b.natives = append(b.natives, nativeSample{sb.String(), t, c})
}

func newHistogramGen(t *testing.T, p *Profile, n NativeOptions) *Generator {
	t.Helper()
	g, err := New(p, Options{
		Seed: 3, Start: time.UnixMilli(1_700_000_000_000), Hosts: 3, ScrapeInterval: 10 * time.Second,
		ChurnPercent: 50, ChurnInterval: time.Minute, Native: n,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestNativeHistogramsConsistent checks every native point: buckets add up to the count,
// count and sum are the classic _count and _sum at the same time, no bucket decreases from
// one scrape to the next (no counter reset the profile has not), and the schema is the
// coarsest that keeps 0.1, 0.5 and 2.5 apart.
func TestNativeHistogramsConsistent(t *testing.T) {
	g := newHistogramGen(t, histogramProfile(), NativeOptions{Mode: NativeBoth})
	if g.NativeFamilies() != 1 {
		t.Fatalf("native families %d, want 1", g.NativeFamilies())
	}
	if got := g.NativeSchemas()["req_seconds"]; got != -1 {
		t.Errorf("schema %d, want -1 (buckets of ×4: 0.1 in (1/16, 1/4], 0.5 in (1/4, 1], 2.5 in (1, 4])", got)
	}
	for target := range g.Targets() {
		var prev *Histogram
		for k := range int64(200) {
			var b both
			values, _ := g.Scrape(&b, target, k)
			if values != 8 || len(b.natives) == 0 {
				t.Fatalf("scrape %d: %d values, %d natives; want 7 floats and 1 native", k, values, len(b.natives))
			}
			n := b.natives[0]
			if n.h.Stale() {
				continue
			}
			floats := map[string]float64{}    // by name: one target's scrape has one series of each
			for _, s := range b.samples[:7] { // the staleness markers of a churned revision follow
				floats[s.labels[:strings.Index(s.labels, ",")]] = s.v
			}
			if got, want := float64(n.h.Count), floats["__name__=req_seconds_count"]; got != want {
				t.Fatalf("scrape %d: count %v, _count %v", k, got, want)
			}
			if got, want := n.h.Sum, floats["__name__=req_seconds_sum"]; got != want {
				t.Fatalf("scrape %d: sum %v, _sum %v", k, got, want)
			}
			total := n.h.ZeroCount
			for _, c := range n.h.Buckets {
				total += c
			}
			if total != n.h.Count {
				t.Fatalf("scrape %d: buckets add up to %d, count %d", k, total, n.h.Count)
			}
			if prev != nil && (n.h.Offset != prev.Offset || len(n.h.Buckets) != len(prev.Buckets)) {
				t.Fatalf("scrape %d: span moved", k)
			}
			for i := range n.h.Buckets {
				if prev != nil && n.h.Buckets[i] < prev.Buckets[i] {
					t.Fatalf("scrape %d: bucket %d went from %d to %d", k, i, prev.Buckets[i], n.h.Buckets[i])
				}
			}
			prev = &n.h
		}
	}
}

// TestNativeOnlyLeavesClassicOut: with nativeHistograms true the family's classic series are
// not sent, the other series are; a churned target's native series gets a staleness marker.
func TestNativeOnlyLeavesClassicOut(t *testing.T) {
	g := newHistogramGen(t, histogramProfile(), NativeOptions{Mode: NativeOnly})
	var b both
	for k := range int64(30) {
		for target := range g.Targets() {
			g.Scrape(&b, target, k)
		}
	}
	for _, s := range b.samples {
		if strings.HasPrefix(s.labels, "__name__=req_seconds") {
			t.Fatalf("classic series sent: %s", s.labels)
		}
	}
	stale := 0
	for _, n := range b.natives {
		if !strings.HasPrefix(n.labels, "__name__=req_seconds,") {
			t.Fatalf("native series %s", n.labels)
		}
		if n.h.Stale() {
			stale++
		}
	}
	if stale == 0 {
		t.Error("no staleness marker for a churned target's native series")
	}
}

// TestNativeFromSummaries turns the default profile's go_gc_duration_seconds summary into a
// native histogram only when asked.
func TestNativeFromSummaries(t *testing.T) {
	if n := newGen(t, Options{Seed: 1, Hosts: 1, Native: NativeOptions{Mode: NativeBoth}}).NativeFamilies(); n != 0 {
		t.Fatalf("%d native families without fromSummaries, want 0 (the profile has no histogram)", n)
	}
	g := newGen(t, Options{Seed: 1, Hosts: 1, Native: NativeOptions{Mode: NativeBoth, FromSummaries: true}})
	schema, ok := g.NativeSchemas()["go_gc_duration_seconds"]
	if !ok {
		t.Fatalf("no native go_gc_duration_seconds: %v", g.NativeSchemas())
	}
	h := g.NativeHistogram(0, 0, g.ScrapeTime(0, 100))
	if h.Schema != schema || h.Count == 0 || h.Sum <= 0 {
		t.Errorf("histogram %+v", h)
	}
}

// TestApportionHouseMonotone: the counts add up to c and none decreases as c grows.
func TestApportionHouseMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		w := make([]float64, 1+r.IntN(12))
		total := 0.0
		for i := range w {
			if r.IntN(4) > 0 {
				w[i] = r.Float64()
				total += w[i]
			}
		}
		if total == 0 {
			continue
		}
		for i := range w {
			w[i] /= total
		}
		prev := make([]uint64, len(w))
		cur := make([]uint64, len(w))
		for _, c := range []uint64{0, 1, 2, 3, 5, 8, 13, 100, 101, 1000, 1 << 20, 1<<20 + 1, 1<<40 + 7} {
			for cc := c; cc < c+50; cc++ {
				apportion(cc, w, cur)
				var sum uint64
				for i, n := range cur {
					sum += n
					if cc > c && n < prev[i] {
						t.Fatalf("c=%d: bucket %d decreased %d -> %d", cc, i, prev[i], n)
					}
				}
				if sum != cc {
					t.Fatalf("c=%d: counts add up to %d", cc, sum)
				}
				copy(prev, cur)
			}
		}
	}
}

// TestBucketIndex checks the bounds of a few buckets against Prometheus' definition.
func TestBucketIndex(t *testing.T) {
	for _, tc := range []struct {
		v      float64
		schema int32
		want   int32
	}{
		{1, 0, 0},
		{1.5, 0, 1},
		{2, 0, 1},
		{2.1, 0, 2},
		{0.5, 0, -1},
		{0.1, -1, -1},
		{2.5, -1, 1},
		{1, 3, 0},
		{math.Exp2(1.0 / 8), 3, 1},
		{math.Exp2(1.0/8) * 1.0000001, 3, 2},
		{1000, -4, 1},
	} {
		if got := bucketIndex(tc.v, tc.schema); got != tc.want {
			t.Errorf("bucketIndex(%v, %d) = %d, want %d", tc.v, tc.schema, got, tc.want)
		}
	}
}

// TestScrapeWithNativesDoesNotAllocate: the native histograms cost no allocation either.
func TestScrapeWithNativesDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	g := newGen(t, Options{
		Seed: 1, Hosts: 100, ChurnPercent: 10, ChurnInterval: time.Minute,
		Native: NativeOptions{Mode: NativeBoth, FromSummaries: true},
	})
	var d discardNative
	g.Scrape(&d, 0, 0)
	if allocs := testing.AllocsPerRun(20, func() { g.Scrape(&d, 7, 30) }); allocs > 0 {
		t.Errorf("Scrape allocates %.1f times per call", allocs)
	}
	if d.n == 0 {
		t.Error("no native histogram appended")
	}
}

type discardNative struct{ discard }

func (d *discardNative) AppendHistogram([]Label, int64, *Histogram) { d.n++ }

// TestExemplars: about percent of counter samples and native histograms carry an exemplar
// with a 32-hex-digit trace id, a counter's its increase since the previous scrape, a
// histogram's an upper bound of one of its buckets; the same scrape gives the same exemplars.
func TestExemplars(t *testing.T) {
	g, err := New(histogramProfile(), Options{
		Seed: 3, Start: time.UnixMilli(1_700_000_000_000), Hosts: 50,
		ScrapeInterval: 10 * time.Second, Native: NativeOptions{Mode: NativeBoth}, ExemplarPct: 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	counters, natives := 0, 0
	for target := range g.Targets() {
		for k := int64(1); k < 20; k++ {
			exs := g.Exemplars(target, k)
			if diff := cmp.Diff(exs, g.Exemplars(target, k)); diff != "" {
				t.Fatalf("exemplars not pure (-first +second):\n%s", diff)
			}
			for _, e := range exs {
				if len(e.TraceID) != 32 || e.T != g.ScrapeTime(target, k) || e.Value < 0 {
					t.Fatalf("exemplar %+v", e)
				}
				if e.Labels[0].Value == "req_seconds" {
					natives++
				} else {
					counters++
				}
			}
		}
	}
	// None of histogramProfile's series is of type counter: the exemplars are the natives'.
	if counters != 0 || natives < 50*19*20/100/2 || natives > 50*19*20/100*2 {
		t.Errorf("%d counter and %d native exemplars of 950 histograms at 20%%", counters, natives)
	}
	d := newGen(t, Options{Seed: 1, Hosts: 2, ExemplarPct: 5})
	n := 0
	for k := int64(1); k < 5; k++ {
		for _, e := range d.Exemplars(0, k) {
			if !strings.HasSuffix(e.Labels[0].Value, "_total") {
				t.Errorf("exemplar on %v", e.Labels)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("no counter exemplar in 4 scrapes of the default profile at 5%")
	}
}

// TestProcessStart: a target's process start is 1 h to a week and 1 h before the run's
// start, in whole seconds, the same for every revision and replica, and given to a
// CreatedAppender before each scrape's samples.
func TestProcessStart(t *testing.T) {
	g := newGen(t, Options{Seed: 1, Hosts: 20, Replicas: 2, ChurnPercent: 50, ChurnInterval: time.Minute})
	start := g.ScrapeTime(0, 0) - g.phase(0)
	for target := range g.Targets() {
		ps := g.ProcessStart(target)
		if age := time.Duration(start-ps) * time.Millisecond; age < time.Hour || age > time.Hour+maxUptime || ps%1000 != 0 {
			t.Fatalf("target %d: process start %d, %v before the run's", target, ps, age)
		}
		if ps != g.ProcessStart(target%20) {
			t.Fatalf("target %d: replica starts at another time", target)
		}
	}
	var c createdRecorder
	g.Scrape(&c, 3, 7)
	if c.created != g.ProcessStart(3) || !c.beforeSamples {
		t.Errorf("created %d (before samples %v), want %d", c.created, c.beforeSamples, g.ProcessStart(3))
	}
}

type createdRecorder struct {
	discard
	created       int64
	beforeSamples bool
}

func (c *createdRecorder) SetCreated(ms int64) { c.created, c.beforeSamples = ms, c.n == 0 }

// TestSamplesPerScrape: true sends the natives instead of their families' series, both beside.
func TestSamplesPerScrape(t *testing.T) {
	for mode, want := range map[NativeMode]int{NativeOff: 7, NativeOnly: 2, NativeBoth: 8} {
		g := newHistogramGen(t, histogramProfile(), NativeOptions{Mode: mode})
		var b both
		if values, _ := g.Scrape(&b, 0, 0); g.SamplesPerScrape() != want || values != want {
			t.Errorf("mode %d: SamplesPerScrape %d, Scrape %d values; want %d", mode, g.SamplesPerScrape(), values, want)
		}
	}
}
