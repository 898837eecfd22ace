package workload

import (
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// span is what scrapes 0..scrapes-1 of every target wrote: values, markers, series created,
// and distinct label sets.
type span struct {
	values, markers, created int
	series                   int
}

func countSpan(t *testing.T, g *Generator, scrapes int64) span {
	t.Helper()
	var sp span
	var c collector
	for target := range g.Targets() {
		for k := range scrapes {
			v, m := g.Scrape(&c, target, k)
			sp.values += v
			sp.markers += m
			sp.created += g.Created(target, k)
		}
	}
	seen := map[string]bool{}
	for _, s := range c.samples {
		seen[s.labels] = true
	}
	sp.series = len(seen)
	return sp
}

// TestEventSchedules: exact counts of each event over a span, at a 10 s interval (every
// target's scrape k lies in [10k, 10k+10) s after the start, whatever its phase, so the counts
// follow from the schedule alone). 839 series per target.
func TestEventSchedules(t *testing.T) {
	const per = 839
	cases := []struct {
		name    string
		targets int
		events  Events
		scrapes int64
		want    span // in target-scrapes (series: in targets); multiplied by per below
	}{
		{
			// Active 2,3,4,5 then 6 targets at scrapes 0..4: targets 2..5 join at 1..4.
			name: "ramp up", targets: 1, events: Events{Ramp: &Ramp{From: 2, To: 6, Over: 40 * time.Second}}, scrapes: 10,
			want: span{values: 10 + 10 + 9 + 8 + 7 + 6, markers: 0, series: 6},
		},
		{
			// Active 6,5,4,3 then 2: targets 5,4,3,2 leave at scrapes 1..4 with their markers.
			name: "ramp down", targets: 1, events: Events{Ramp: &Ramp{From: 6, To: 2, Over: 40 * time.Second}}, scrapes: 10,
			want: span{values: 10 + 10 + 4 + 3 + 2 + 1, markers: 4, series: 6},
		},
		{
			// 4 targets, 10 in spikes at scrapes 6-7 and 12-13: 6 extra join twice, leave twice,
			// each time new instances (host-000004-s1, then -s2).
			name: "spike", targets: 4, events: Events{Spike: &Spike{For: 20 * time.Second, Every: time.Minute, Factor: 2.5}}, scrapes: 18,
			want: span{values: 4*18 + 6*4, markers: 12, series: 4 + 6 + 6},
		},
		{
			// 3 targets, 6 at scrapes 3-5 and 9-11, the extra 3 new instances each time; they
			// leave at 6 (12 is past the span).
			name: "double-halve", targets: 3, events: Events{DoubleHalve: 30 * time.Second}, scrapes: 12,
			want: span{values: 3*12 + 3*6, markers: 3, series: 3 + 3 + 3},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGen(t, Options{Seed: 1, Hosts: tc.targets, Events: tc.events})
			if g.SeriesPerTarget() != per {
				t.Fatalf("profile has %d series, the counts assume %d", g.SeriesPerTarget(), per)
			}
			got := countSpan(t, g, tc.scrapes)
			// Created counts the first scrape's series too: every series written, once.
			want := span{values: tc.want.values * per, markers: tc.want.markers * per, created: tc.want.series * per, series: tc.want.series * per}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(span{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodChurn: every target is replaced after its lifetime, at a seeded moment: over 12
// scrapes of 10 s with a 30 s lifetime, each target runs as 4 or 5 pods, each pod a new
// instance; every replacement writes one marker per series and creates as many.
func TestPodChurn(t *testing.T) {
	g := newGen(t, Options{Seed: 1, Hosts: 5, Events: Events{PodLifetime: 30 * time.Second}})
	got := countSpan(t, g, 12)
	var c collector
	pods := 0
	for target := range g.Targets() {
		c.samples = c.samples[:0]
		instances := map[string]bool{}
		for k := range int64(12) {
			g.Scrape(&c, target, k)
		}
		for _, s := range c.samples {
			_, rest, _ := strings.Cut(s.labels, "instance=")
			inst, _, _ := strings.Cut(rest, ",")
			instances[inst] = true
		}
		if n := len(instances); n < 4 || n > 5 {
			t.Errorf("target %d ran as %d pods over 110 s of 30 s lifetimes, want 4 or 5", target, n)
		}
		pods += len(instances)
	}
	const per = 839
	want := span{values: 5 * 12 * per, markers: (pods - 5) * per, created: pods * per, series: pods * per}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(span{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if pods != 24 { // seed 1: pinned, so that a change of the schedule shows
		t.Errorf("%d pods for seed 1, want 24", pods)
	}
}

// TestHeldSchedule: 10 % late by one scrape and 10 % out of order by two, of 839 series:
// 84 and 84 of each scrape held; what Scrape and Held send over a span is, by timestamp,
// exactly what a generator without them writes, minus the held samples not yet due; late
// samples arrive in order per series, out-of-order ones after a newer sample of theirs.
func TestHeldSchedule(t *testing.T) {
	o := Options{Seed: 1, Hosts: 2, Late: Held{Percent: 10, By: 10 * time.Second}, OutOfOrder: Held{Percent: 10, By: 20 * time.Second}}
	g := newGen(t, o)
	plain := newGen(t, Options{Seed: 1, Hosts: 2})
	const scrapes = 10
	var sent, lateC, oooC, want collector
	var nLate, nOOO, onTime, created int
	type key struct {
		labels string
		t      int64
	}
	newest := map[string]int64{}
	for target := range g.Targets() {
		for k := range int64(scrapes) {
			v, _ := g.Scrape(&sent, target, k)
			onTime += v
			created += g.Created(target, k)
			lateC.samples, oooC.samples = lateC.samples[:0], oooC.samples[:0]
			l, o := g.Held(&lateC, &oooC, target, k)
			nLate, nOOO = nLate+l, nOOO+o
			for _, s := range sent.samples[len(sent.samples)-v:] {
				newest[s.labels] = max(newest[s.labels], s.t)
			}
			for _, s := range lateC.samples {
				if s.t < newest[s.labels] {
					t.Fatalf("late sample %s at %d after a newer one at %d", s.labels, s.t, newest[s.labels])
				}
				newest[s.labels] = s.t
			}
			for _, s := range oooC.samples {
				if s.t >= newest[s.labels] {
					t.Fatalf("out-of-order sample %s at %d is the newest of its series", s.labels, s.t)
				}
			}
			sent.samples = append(sent.samples, lateC.samples...)
			sent.samples = append(sent.samples, oooC.samples...)
			plain.Scrape(&want, target, k)
		}
	}
	if onTime != 2*scrapes*(839-168) || nLate != 2*(scrapes-1)*84 || nOOO != 2*(scrapes-2)*84 {
		t.Errorf("on time %d, late %d, out of order %d; want %d, %d, %d", onTime, nLate, nOOO, 2*scrapes*(839-168), 2*(scrapes-1)*84, 2*(scrapes-2)*84)
	}
	series := map[string]bool{}
	for _, s := range sent.samples {
		series[s.labels] = true
	}
	if created != len(series) || created != 2*839 {
		t.Errorf("Created adds up to %d, %d series sent; want both %d", created, len(series), 2*839)
	}
	// Everything sent is in the plain workload with the same value; the plain samples not
	// sent are the held ones not due yet: the last scrape's late, the last two's out of order.
	values := map[key]uint64{}
	for _, s := range want.samples {
		values[key{s.labels, s.t}] = math.Float64bits(s.v)
	}
	for _, s := range sent.samples {
		k := key{s.labels, s.t}
		v, ok := values[k]
		if !ok || v != math.Float64bits(s.v) {
			t.Fatalf("sent %s at %d = %v: not in the plain workload", s.labels, s.t, s.v)
		}
		delete(values, k)
	}
	if n := len(values); n != 2*(84+2*84) {
		t.Errorf("%d plain samples not sent, want %d (held, not due yet)", n, 2*(84+2*84))
	}
}

// BenchmarkSeriesSection is the generator's cost per sample with the series section beside
// today's churn, in one run, as the writer calls it (Scrape, Held, Created; fast path):
// "churn" is the default workload's shape (1 % churn), "events" adds a ramp, spikes,
// double-halve and pod churn (inactive targets' scrapes included in the cost), "held" 5 %
// late and 5 % out of order.
func BenchmarkSeriesSection(b *testing.B) {
	churn := Options{Seed: 1, Hosts: 1000, ChurnPercent: 1, ChurnInterval: 10 * time.Minute}
	events := churn
	events.Events = Events{
		Ramp:        &Ramp{From: 500, To: 1000, Over: 10 * time.Minute},
		Spike:       &Spike{For: time.Minute, Every: 5 * time.Minute, Factor: 2},
		DoubleHalve: 3 * time.Minute, PodLifetime: 10 * time.Minute,
	}
	held := churn
	held.Late, held.OutOfOrder = Held{Percent: 5, By: 30 * time.Second}, Held{Percent: 5, By: 30 * time.Second}
	ha := churn // an HA pair with both labels, as for the Cortex/Mimir HA tracker
	ha.HA = HA{Replicas: 2, Offset: 5 * time.Second, ClusterName: "cluster", ClusterValue: "bench", ReplicaName: "__replica__", ReplicaValue: []string{"a", "b"}}
	for _, c := range []struct {
		name string
		o    Options
	}{{"churn", churn}, {"events", events}, {"held", held}, {"ha", ha}} {
		b.Run(c.name, func(b *testing.B) {
			g := newGen(b, c.o)
			app := &discardSeries{}
			b.ReportAllocs()
			n, samples := 0, 0
			cpu0 := cpuSeconds(b)
			for b.Loop() {
				target, k := n%g.Targets(), int64(n/g.Targets())
				v, m := g.Scrape(app, target, k)
				if g.SeriesOn() {
					l, o := g.Held(app, app, target, k)
					v += l + o
					_ = g.Created(target, k)
				}
				samples += v + m
				n++
			}
			b.ReportMetric(float64(samples)/(cpuSeconds(b)-cpu0), "samples/cpu-s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(1, samples)), "ns/sample")
		})
	}
}

// cpuSeconds is the process's CPU time, user and system: on a busy machine a benchmark's
// wall time counts other processes' time too.
func cpuSeconds(tb testing.TB) float64 {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
