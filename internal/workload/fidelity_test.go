package workload

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// movingPage is scrape n of an exporter whose series move in known ways: a counter that
// steps 12 every fourth scrape, a counter in 0.01 s steps alternating 2.37 and 1.63 (mean 2,
// spread 0.37: jitter 0.37/2/0.408 ≈ 0.45), a gauge in 4096-byte pages that changes every other
// scrape by 8192, one CPU's modes adding up to the 5 ms between scrapes, and a summary whose
// quantiles step every fifth scrape.
func movingPage(n int) string {
	user := 0.0015*float64(n) + 0.0002*float64(n%2)
	system := 0.0005 * float64(n)
	idle := 0.005*float64(n) - user - system
	gc := n / 5
	return fmt.Sprintf(`# TYPE slow_total counter
slow_total %d
# TYPE cpu_busy_seconds_total counter
cpu_busy_seconds_total %.2f
# TYPE mem_free_bytes gauge
mem_free_bytes %d
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} %.4f
node_cpu_seconds_total{cpu="0",mode="system"} %.4f
node_cpu_seconds_total{cpu="0",mode="user"} %.4f
# TYPE gc_seconds summary
gc_seconds{quantile="0"} %g
gc_seconds{quantile="0.5"} %g
gc_seconds{quantile="1"} %g
gc_seconds_sum %g
gc_seconds_count %d
`, 1000+12*(n/4), 50+2*float64(n)+0.37*float64(n%2),
		1<<30-4096*(101+2*((n/2)%11)),
		1000+idle, 200+system, 300+user,
		1e-5+1.37e-7*float64(gc%17), 2e-5+2.11e-7*float64(gc%13), 5e-5+3.3e-7*float64(gc%19), 1e-4*float64(gc), gc)
}

func captureMoving(t *testing.T, scrapes int) *Profile {
	t.Helper()
	var n atomic.Int64
	client := exporterClient(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, movingPage(int(n.Add(1)-1)))
	})
	var p *Profile
	synctest.Test(t, func(t *testing.T) {
		var err error
		p, err = Capture(context.Background(), client, CaptureOptions{
			URL: exporterURL, Scrapes: scrapes, Interval: 5 * time.Millisecond,
			Expand: []Expansion{{Prefix: "node_cpu_", Label: "cpu", Count: 3}},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	return p
}

func seriesByKey(p *Profile) map[string]Shape {
	m := map[string]Shape{}
	for _, s := range p.Series {
		m[strings.ReplaceAll(s.key(), "\xff", " ")] = s.Shape
	}
	return m
}

func TestCaptureRecoversMovement(t *testing.T) {
	p := captureMoving(t, 120)
	got := seriesByKey(p)
	near := func(name string, what string, g, want, tol float64) {
		t.Helper()
		if math.Abs(g-want) > tol {
			t.Errorf("%s: %s %v, want %v ± %v", name, what, g, want, tol)
		}
	}
	slow := got["slow_total"]
	near("slow_total", "changes", slow.Changes, 0.25, 0.02)
	if slow.Kind != Counter || slow.TickSeconds != 0.005 || slow.Resolution != 1 {
		t.Errorf("slow_total: %+v, want a counter in whole steps on 5 ms ticks", slow)
	}
	busy := got["cpu_busy_seconds_total"]
	near("cpu_busy_seconds_total", "changes", busy.Changes, 1, 0)
	near("cpu_busy_seconds_total", "jitter", busy.Jitter, 0.37/2/0.408, 0.05)
	if busy.Resolution != 0.01 {
		t.Errorf("cpu_busy_seconds_total: resolution %v, want 0.01", busy.Resolution)
	}
	mem := got["mem_free_bytes"]
	near("mem_free_bytes", "changes", mem.Changes, 0.5, 0.02)
	if mem.Kind != Gauge || mem.Multiple != 4096 || mem.Step < 8192 || mem.Step > 6*8192 {
		t.Errorf("mem_free_bytes: %+v, want a gauge in 4096-byte pages stepping 8192 or more", mem)
	}
	// The CPU's idle became the rest of its modes, and each expanded CPU has its own group.
	for _, cpu := range []string{"0", "1", "2"} {
		idle := got["node_cpu_seconds_total cpu "+cpu+" mode idle"]
		user := got["node_cpu_seconds_total cpu "+cpu+" mode user"]
		sum := `node_cpu_seconds_total{cpu="` + cpu + `"}`
		if idle.Kind != Remainder || idle.Sum != sum || user.Sum != sum {
			t.Errorf("cpu %s: idle %+v, user %+v, want idle the remainder of group %s", cpu, idle, user, sum)
		}
	}
	// The quantiles share one event stream with _count, every fifth scrape.
	q0, q1, count := got["gc_seconds quantile 0"], got["gc_seconds quantile 1"], got["gc_seconds_count"]
	if q0.Events == "" || q0.Events != q1.Events || count.Events != q0.Events {
		t.Errorf("quantiles and _count do not share events: %q %q %q", q0.Events, q1.Events, count.Events)
	}
	near("gc_seconds_count", "changes", count.Changes, 0.2, 0.02)
	near("gc_seconds quantile 1", "changes", q1.Changes, 0.2, 0.02)
}

// TestGeneratedMovementFollowsCapture generates from a captured profile at the capture's
// interval and measures what the capture measured: changes, steps, digits.
func TestGeneratedMovementFollowsCapture(t *testing.T) {
	p := captureMoving(t, 120)
	g, err := New(p, Options{Seed: 5, Start: time.UnixMilli(0), Hosts: 20, ScrapeInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for s, ser := range p.Series {
		sh := ser.Shape
		if sh.TickSeconds == 0 {
			continue
		}
		var changed, steps int
		var sum, sumSq float64
		for target := range 20 {
			prev := g.Value(target, s, g.ScrapeTime(target, 0))
			for k := int64(1); k < 2000; k++ {
				v := g.Value(target, s, g.ScrapeTime(target, k))
				if sh.Multiple > 0 {
					if q := v / (sh.Resolution * sh.Multiple); math.Abs(q-math.Round(q)) > 1e-6 {
						t.Fatalf("%s: %v is not a whole multiple of %v", ser.Name, v, sh.Resolution*sh.Multiple)
					}
				}
				if v != prev {
					changed++
					d := v - prev
					sum += d
					sumSq += d * d
					steps++
				}
				prev = v
			}
		}
		frac := float64(changed) / (20 * 1999)
		if sh.Kind != Remainder && math.Abs(frac-sh.Changes) > 0.05 {
			t.Errorf("%s %v: generated changes %.3f, captured %.3f", ser.Name, ser.Labels, frac, sh.Changes)
		}
		if sh.Kind == Counter && ser.Name == "cpu_busy_seconds_total" {
			mean := sum / float64(steps)
			sd := math.Sqrt(sumSq/float64(steps) - mean*mean)
			// The captured steps: 2.37 and 1.63, mean 2, spread 0.37/2.
			if math.Abs(mean-2) > 0.05 || math.Abs(sd/mean-0.185) > 0.05 {
				t.Errorf("%s: generated steps mean %.3f spread %.3f, want 2 and 0.185", ser.Name, mean, sd/mean)
			}
		}
	}
}

// randomProfile is a profile of tick-model shapes drawn from seed: counters and gauges of
// every change rate, jitter, resolution and multiple, a CPU whose idle is the remainder of
// three modes, a histogram and a summary.
func randomProfile(seed uint64) *Profile {
	r := func(i uint64) float64 { return unit(hash(seed, 100, i)) }
	tick := []float64{1, 0.5, 10}[seed%3]
	res := []float64{0.01, 1, 0.001, 0}[seed%4]
	changes := func(i uint64) float64 { return max(0.01, math.Round(r(i)*100)/100) }
	p := &Profile{}
	for i := range uint64(6) {
		p.Series = append(p.Series, Series{Name: fmt.Sprintf("c%d_total", i), Type: "counter", Shape: Shape{
			Kind: Counter, Value: math.Round(r(i)*1e4) * max(res, 0.01), Rate: r(i+10) * 1e3 * max(res, 0.01), Resolution: res,
			TickSeconds: tick, Changes: changes(i + 20), Jitter: r(i + 30), Multiple: float64(seed % 5),
		}})
		lo := r(i+40) * 1e6
		p.Series = append(p.Series, Series{Name: fmt.Sprintf("g%d", i), Type: "gauge", Shape: Shape{
			Kind: Gauge, Min: lo, Max: lo + r(i+50)*1e5, Resolution: res, TickSeconds: tick,
			Changes: changes(i + 60), Step: r(i+70) * 1e4, Multiple: float64(seed % 3),
		}})
	}
	sum := `cpu{cpu="0"}`
	for i, mode := range []string{"iowait", "system", "user"} {
		rate := r(uint64(80+i)) * 0.15
		p.Series = append(p.Series, Series{
			Name: "node_cpu_seconds_total", Type: "counter",
			Labels: []Label{{"cpu", "0"}, {"mode", mode}}, Shape: Shape{
				Kind: Counter, Value: 100, Rate: rate, Resolution: 0.01, TickSeconds: tick,
				Changes: 0.8 + 0.2*r(uint64(90+i)), Jitter: r(uint64(95+i)) * 0.3, Sum: sum,
			},
		})
	}
	p.Series = append(p.Series, Series{
		Name: "node_cpu_seconds_total", Type: "counter",
		Labels: []Label{{"cpu", "0"}, {"mode", "idle"}}, Shape: Shape{
			Kind: Remainder, Value: 5000, Rate: 1, Resolution: 0.01, TickSeconds: tick, Sum: sum,
		},
	})
	hc := changes(200)
	for i, le := range []string{"0.1", "1", "+Inf"} {
		p.Series = append(p.Series, Series{Name: "h_bucket", Type: "histogram", Labels: []Label{{"le", le}}, Shape: Shape{
			Kind: Counter, Value: float64(10 * (i + 1)), Rate: float64(i+1) * r(201) * 5, Resolution: 1,
			TickSeconds: tick, Changes: hc, Jitter: 0.5, Events: "h",
		}})
	}
	for i, q := range []string{"0", "0.5", "1"} {
		p.Series = append(p.Series, Series{Name: "s", Type: "summary", Labels: []Label{{"quantile", q}}, Shape: Shape{
			Kind: Gauge, Min: float64(i+1) * 1e-5, Max: float64(i+1) * 3e-5, Resolution: 1e-9,
			TickSeconds: tick, Changes: hc, Events: "s",
		}})
	}
	return p
}

// TestTickShapesKeepInvariants: over many seeds, targets and times, counters never decrease,
// a CPU's modes add up to at most the elapsed time and idle is monotone, buckets stay
// cumulative, quantiles ordered, gauges within range, values on their quantum.
func TestTickShapesKeepInvariants(t *testing.T) {
	for seed := range uint64(60) {
		p := randomProfile(seed)
		if err := p.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		g, err := New(p, Options{
			Seed: seed, Start: time.UnixMilli(1_700_000_000_000), Hosts: 4,
			ScrapeInterval: time.Duration(1+seed%7) * 700 * time.Millisecond, HostLoad: []float64{1, 0.5, 0.2}[(seed/3)%3],
		})
		if err != nil {
			t.Fatal(err)
		}
		for target := range 4 {
			prev := make([]float64, len(p.Series))
			for i := range prev {
				prev[i] = math.Inf(-1)
			}
			var cpu0 float64
			t0 := g.ScrapeTime(target, 0)
			for k := range int64(400) {
				ts := g.ScrapeTime(target, k)
				vals := make([]float64, len(p.Series))
				var cpu float64
				for s, ser := range p.Series {
					v := g.Value(target, s, ts)
					vals[s] = v
					sh := ser.Shape
					switch sh.Kind {
					case Counter, Remainder:
						if v < prev[s] {
							t.Fatalf("seed %d target %d %s %v: counter went from %v to %v", seed, target, ser.Name, ser.Labels, prev[s], v)
						}
					case Gauge:
						if v < sh.Min || v > sh.Max {
							t.Fatalf("seed %d %s: gauge %v outside [%v, %v]", seed, ser.Name, v, sh.Min, sh.Max)
						}
					}
					if q := sh.Resolution * max(1, sh.Multiple); q > 0 && sh.Kind != Gauge {
						if u := v / q; math.Abs(u-math.Round(u)) > 1e-6*math.Max(1, math.Abs(u)) {
							t.Fatalf("seed %d %s: %v is not a multiple of %v", seed, ser.Name, v, q)
						}
					}
					prev[s] = v
					if ser.Name == "node_cpu_seconds_total" {
						cpu += v
					}
				}
				// The modes count the elapsed time tick by tick, as /proc/stat counts jiffies:
				// over any window at most one tick more than the wall clock.
				if k == 0 {
					cpu0 = cpu
				} else if wall := float64(ts-t0) / 1000; cpu-cpu0 > wall+p.Series[0].Shape.TickSeconds+1e-6 {
					t.Fatalf("seed %d target %d: CPU modes counted %v s in %v s", seed, target, cpu-cpu0, wall)
				}
				n := len(p.Series)
				h := vals[n-6 : n-3]
				qs := vals[n-3:]
				if !slices.IsSorted(h) || !slices.IsSorted(qs) {
					t.Fatalf("seed %d: buckets %v or quantiles %v out of order", seed, h, qs)
				}
			}
		}
	}
}

func TestValidateRejectsOverfullSum(t *testing.T) {
	p := randomProfile(1)
	for i := range p.Series {
		if sh := &p.Series[i].Shape; sh.Sum != "" && sh.Kind == Counter {
			sh.Rate = 0.5 // three modes at 0.5 s/s each: more than a CPU has
		}
	}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `sum "cpu{cpu=\"0\"}"`) {
		t.Errorf("got %v, want the overfull sum group named", err)
	}
}

// TestHostLoadQuietsValues: at hostLoad 0.5 a series changes at half the ticks and a counter
// counts half as fast, in steps of the captured size; CPU idle takes what the modes leave.
func TestHostLoadQuietsValues(t *testing.T) {
	p := captureMoving(t, 120)
	gen := func(load float64) *Generator {
		g, err := New(p, Options{Seed: 5, Start: time.UnixMilli(0), Hosts: 20, ScrapeInterval: 5 * time.Millisecond, HostLoad: load})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	busy, quiet := gen(1), gen(0.5)
	measure := func(g *Generator, name string) (changes, increase float64) {
		for s, ser := range p.Series {
			if ser.Name+fmt.Sprint(ser.Labels) != name {
				continue
			}
			for target := range 20 {
				prev := g.Value(target, s, g.ScrapeTime(target, 0))
				for k := int64(1); k <= 2000; k++ {
					v := g.Value(target, s, g.ScrapeTime(target, k))
					if v != prev {
						changes++
					}
					prev = v
				}
				increase += prev - g.Value(target, s, g.ScrapeTime(target, 0))
			}
			return changes / (20 * 2000), increase / 20
		}
		t.Fatalf("no series %s", name)
		return 0, 0
	}
	for _, name := range []string{"slow_total[]", "mem_free_bytes[]", "node_cpu_seconds_total[{cpu 0} {mode user}]"} {
		cb, ib := measure(busy, name)
		cq, iq := measure(quiet, name)
		if math.Abs(cq/cb-0.5) > 0.1 {
			t.Errorf("%s: changes %.3f at load 1, %.3f at 0.5: want half", name, cb, cq)
		}
		if strings.Contains(name, "_total") && math.Abs(iq/ib-0.5) > 0.1 {
			t.Errorf("%s: counted %v at load 1, %v at 0.5: want half", name, ib, iq)
		}
	}
	_, idleBusy := measure(busy, "node_cpu_seconds_total[{cpu 0} {mode idle}]")
	_, idleQuiet := measure(quiet, "node_cpu_seconds_total[{cpu 0} {mode idle}]")
	if idleQuiet <= idleBusy {
		t.Errorf("idle counted %v at load 0.5, %v at 1: a quieter host idles more", idleQuiet, idleBusy)
	}
}

// TestCaptureFitsBusyCPU: on a CPU busy 85% of the time, user (the busiest mode) is the
// remainder, so its uneven steps come from the other modes', and idle keeps its own.
func TestCaptureFitsBusyCPU(t *testing.T) {
	synctest.Test(t, testCaptureFitsBusyCPU)
}

func testCaptureFitsBusyCPU(t *testing.T) {
	var n atomic.Int64
	client := exporterClient(func(w http.ResponseWriter, _ *http.Request) {
		i := float64(n.Add(1) - 1)
		user := 0.004*i + 0.001*float64(int(i)%2) // steps 0.005, 0.003: 0.8 s/s in 5 ms ticks
		system := 0.0005 * float64(int(i)/2)      // 0.05 s/s, every other tick
		idle := 0.005*i - user - system
		fmt.Fprintf(w, "# TYPE node_cpu_seconds_total counter\n"+
			"node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} %.4f\n"+
			"node_cpu_seconds_total{cpu=\"0\",mode=\"system\"} %.4f\n"+
			"node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} %.4f\n", 100+idle, 10+system, 50+user)
	})
	p, err := Capture(context.Background(), client, CaptureOptions{URL: exporterURL, Scrapes: 60, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := seriesByKey(p)
	idle, user := got["node_cpu_seconds_total cpu 0 mode idle"], got["node_cpu_seconds_total cpu 0 mode user"]
	if user.Kind != Remainder || idle.Kind != Counter || idle.Sum != user.Sum {
		t.Fatalf("user %+v, idle %+v: want user the remainder of idle's group", user, idle)
	}
	if idle.Changes < 0.4 || idle.Changes > 0.6 || idle.Rate < 0.05 {
		t.Errorf("idle %+v: want it changing at half the ticks at about 0.15 s/s", idle)
	}
	// At half the load user counts half as much, idle takes the rest, neither decreases.
	counted := func(load float64) map[string]float64 {
		g, err := New(p, Options{Seed: 2, Start: time.UnixMilli(0), Hosts: 10, ScrapeInterval: 5 * time.Millisecond, HostLoad: load})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for s, ser := range g.profile.Series {
			mode, _ := labelValue(ser.Labels, "mode")
			for target := range 10 {
				prev := g.Value(target, s, g.ScrapeTime(target, 0))
				for k := int64(1); k <= 1000; k++ {
					v := g.Value(target, s, g.ScrapeTime(target, k))
					if v < prev {
						t.Fatalf("load %v: %s went from %v to %v", load, mode, prev, v)
					}
					out[mode] += v - prev
					prev = v
				}
			}
		}
		return out
	}
	busy, quiet := counted(1), counted(0.5)
	if r := quiet["user"] / busy["user"]; math.Abs(r-0.5) > 0.05 {
		t.Errorf("user counted %.3f of its load-1 time at load 0.5, want 0.5", r)
	}
	if quiet["idle"] <= busy["idle"] {
		t.Errorf("idle counted %v at load 0.5, %v at 1: want more", quiet["idle"], busy["idle"])
	}
}
