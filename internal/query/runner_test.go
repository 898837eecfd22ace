package query

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// inBubble serves requests with an http.Handler in the test's synctest bubble, through
// httptest's recorder: a real loopback server's goroutines would not be durably blocked, so
// the bubble's clock could not advance while a request is in flight.
type inBubble struct{ h http.Handler }

func (b inBubble) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.h.ServeHTTP(rec, r)
	}()
	select {
	case <-done:
		return rec.Result(), nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

func fakeRunner(t *testing.T, cfg config.Config, plan *Plan, h http.Handler) (*Runner, *prometheus.Registry) {
	t.Helper()
	c := newClient(t, config.Storage{})
	c.HTTP = &http.Client{Transport: inBubble{h}}
	reg := prometheus.NewRegistry()
	r := New(&cfg, plan, "s", c, "http://fake/", slog.New(slog.DiscardHandler), NewMetrics(reg))
	r.earlyWake = 0 // in the bubble, time does not pass while the scheduler yields
	return r, reg
}

func rules(interval time.Duration, names ...string) *Plan {
	p := &Plan{}
	for _, n := range names {
		p.Queries = append(p.Queries, Query{Name: n, Kind: KindInstant, Expr: n, Interval: interval})
	}
	return p
}

// runFor runs r from now until now+d, then waits for Run to return.
func runFor(t *testing.T, r *Runner, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	time.Sleep(d)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

const vector2 = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1,"1"]},{"metric":{"a":"2"},"value":[1,"2"]}]}}`

// ticks counts the evaluations of a query scheduled before d from the start.
func ticks(name string, interval, d time.Duration) int64 {
	o := offset("s", name, interval)
	if o >= d {
		return 0
	}
	return int64((d - o + interval - 1) / interval)
}

// A 2.5 s answer on a 1 s interval: each rule runs one evaluation in three, the two ticks in
// between are missed (never queued), and every latency is exactly 2.5 s.
func TestRunnerSlowAnswersMissTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.QueryConcurrency = 3 // a slot for every rule: only the rule's own previous run blocks it
		names := []string{"rule_a", "rule_b", "rule_c"}
		r, reg := fakeRunner(t, cfg, rules(time.Second, names...), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(2500 * time.Millisecond)
			_, _ = io.WriteString(w, vector2)
		}))
		runFor(t, r, 10*time.Second)
		res := r.Results()
		m := gather(t, reg)
		var wantTotal results.Query
		for i, name := range names {
			n := ticks(name, time.Second, 10*time.Second)
			exec := (n + 2) / 3
			got := res.PerQuery[i]
			if got.Executed != exec || got.OK != exec || got.Missed != n-exec || count(got.ResultSeries) != 2 {
				t.Errorf("%s: executed %d ok %d missed %d series %d, want executed=ok=%d missed %d series 2 (of %d ticks)",
					name, got.Executed, got.OK, got.Missed, count(got.ResultSeries), exec, n-exec, n)
			}
			labels := `{kind="instant",query="` + name + `",storage="s"}`
			if m["tsbench_query_missed_total"+labels] != float64(n-exec) || m["tsbench_query_executed_total"+labels] != float64(exec) {
				t.Errorf("%s on /metrics: missed %v executed %v, want %d and %d", name,
					m["tsbench_query_missed_total"+labels], m["tsbench_query_executed_total"+labels], n-exec, exec)
			}
			wantTotal.Executed += exec
			wantTotal.Missed += n - exec
		}
		if res.Executed != wantTotal.Executed || res.Missed != wantTotal.Missed || res.OK != res.Executed {
			t.Errorf("totals executed %d missed %d ok %d, want %d %d", res.Executed, res.Missed, res.OK, wantTotal.Executed, wantTotal.Missed)
		}
		want := secs{P50: 2.5, P90: 2.5, P99: 2.5, Max: 2.5}
		if res.LatencySeconds.Histogram == "" {
			t.Error("latency without its histogram: shard results would not merge")
		}
		if diff := cmp.Diff(want, seconds(res.LatencySeconds)); diff != "" {
			t.Errorf("latency (-want +got):\n%s", diff)
		}
	})
}

// A server stalls 3 s on one query in every N (counted over all queries), the others take
// 10 ms; ten rules every 2 s (not 1 s: a 3 s stall would end on the rule's own next tick, and
// which of the two the bubble runs first is the Go scheduler's choice). Everything is
// deterministic in the bubble, so executed and missed are exact. Results and Progress are read
// every 10 s all along, as the progress line does.
func TestRunnerStalls(t *testing.T) {
	for _, tc := range []struct {
		name             string
		slots            int
		every            int64
		executed, missed int64
		check            func(t *testing.T, lat, service secs)
	}{
		{
			// The case: a slot per rule, so nothing queues and latency is the service
			// time; with one answer in ten stalled, the stall is p99, not only max.
			name: "one in ten, a slot per rule", slots: 10, every: 10, executed: 547, missed: 53,
			check: func(t *testing.T, lat, service secs) {
				if lat.P99 != 3 || lat.P90 > 0.0101 {
					t.Errorf("latency %+v: want the stall as p99 (3 s) and p90 10 ms", lat)
				}
				if lat.P99 != service.P99 || lat.Max != service.Max {
					t.Errorf("latency %+v, service %+v: with nothing queued they must agree", lat, service)
				}
			},
		},
		{
			// One stall in a hundred answers is under 1%: the service time's p99 is 10 ms. But
			// with one slot the rules scheduled during a stall wait for it, and latency from the
			// scheduled time shows the stall at p99. Latency measured from the send would miss it.
			name: "one in a hundred, one slot", slots: 1, every: 100, executed: 567, missed: 33,
			check: func(t *testing.T, lat, service secs) {
				if lat.P99 < 2.9 || lat.P90 > 0.0101 {
					t.Errorf("latency %+v: want the queue behind the stalls in p99 (>= 2.9 s), p90 10 ms", lat)
				}
				if service.P99 > 0.0101 || service.Max != 3 {
					t.Errorf("service time %+v: want p99 10 ms and max 3 s", service)
				}
			},
		},
		{
			// Overloaded: one slot cannot serve a 3 s stall in ten; the queue is in p50 already,
			// and 40% of the ticks are missed.
			name: "one in ten, one slot", slots: 1, every: 10, executed: 360, missed: 240,
			check: func(t *testing.T, lat, service secs) {
				if lat.P50 < 2 || lat.P90 < 2.9 || lat.P99 < 2.9 {
					t.Errorf("latency %+v: want the queue in p50 (>= 2 s) and p90 (>= 2.9 s)", lat)
				}
				if service.P90 > 0.0101 || service.Max != 3 {
					t.Errorf("service time %+v: want p90 10 ms and max 3 s", service)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := config.Default()
				cfg.QueryConcurrency = tc.slots
				var names []string
				for i := range 10 {
					names = append(names, "rule_"+strconv.Itoa(i))
				}
				var n atomic.Int64
				r, _ := fakeRunner(t, cfg, rules(2*time.Second, names...), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					if n.Add(1)%tc.every == 0 {
						time.Sleep(3 * time.Second)
					} else {
						time.Sleep(10 * time.Millisecond)
					}
					_, _ = io.WriteString(w, vector2)
				}))
				var wg sync.WaitGroup
				stop := make(chan struct{})
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(10 * time.Second):
							_, _ = r.Results(), r.Progress()
						}
					}
				})
				runFor(t, r, 120*time.Second)
				close(stop)
				wg.Wait()
				res := r.Results()
				var scheduled int64
				for _, name := range names {
					scheduled += ticks(name, 2*time.Second, 120*time.Second)
				}
				if res.Executed != tc.executed || res.Missed != tc.missed || res.OK != res.Executed {
					t.Errorf("executed %d (ok %d) missed %d, want %d and %d", res.Executed, res.OK, res.Missed, tc.executed, tc.missed)
				}
				if res.Executed+res.Missed != scheduled || res.Executed != n.Load() {
					t.Errorf("executed %d + missed %d != %d scheduled, or != %d answered", res.Executed, res.Missed, scheduled, n.Load())
				}
				tc.check(t, seconds(res.LatencySeconds), seconds(res.ServiceSeconds))
				if len(res.Timeline) != 12 { // observeInterval 10 s over 120 s
					t.Errorf("timeline has %d points, want 12: %+v", len(res.Timeline), res.Timeline)
				}
				var completed int64
				for _, p := range res.Timeline {
					completed += p.Completed
				}
				if completed > res.Executed || completed < res.Executed-int64(len(names)) {
					t.Errorf("timeline completions %d, want the %d executed less those ending after 120 s", completed, res.Executed)
				}
			})
		})
	}
}

// Each error kind is classified and counted per query, the timeout on the client after
// queryTimeout, and the metrics agree with the results.
func TestRunnerErrorKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.QueryTimeout = time.Second
		cfg.QueryConcurrency = 8
		plan := rules(10*time.Second, "ok", "slow", "bad", "down", "garbage")
		r, reg := fakeRunner(t, cfg, plan, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			switch req.PostFormValue("query") {
			case "ok":
				_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]},"warnings":["partial"]}`)
			case "slow":
				select {
				case <-time.After(5 * time.Second):
				case <-req.Context().Done():
				}
			case "bad":
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"status":"error","errorType":"bad_data","error":"1:1: parse error"}`)
			case "down":
				http.Error(w, "down", http.StatusServiceUnavailable)
			case "garbage":
				_, _ = io.WriteString(w, "<html>")
			}
		}))
		runFor(t, r, 30*time.Second) // offsets < 10 s: ticks at o, o+10 s, o+20 s
		res := r.Results()
		type row struct {
			Name         string
			Executed, OK int64
			Warnings     int64
			Errors       map[string]int64
			HasFirst     bool
		}
		var got []row
		for _, q := range res.PerQuery {
			got = append(got, row{q.Name, q.Executed, q.OK, q.Warnings, q.Errors, q.FirstError != ""})
		}
		want := []row{
			{"ok", 3, 3, 3, map[string]int64{}, false},
			{"slow", 3, 0, 0, map[string]int64{"timeout": 3}, true},
			{"bad", 3, 0, 0, map[string]int64{"status_error:bad_data": 3}, true},
			{"down", 3, 0, 0, map[string]int64{"http_503": 3}, true},
			{"garbage", 3, 0, 0, map[string]int64{"bad_body": 3}, true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("per query (-want +got):\n%s", diff)
		}
		// Latency is over the successful evaluations: a timeout is counted as an error, and a
		// query that never succeeded has no latency (a refused connection would be fast).
		if l := seconds(res.PerQuery[1].LatencySeconds); l.Max != -1 || l.P50 != -1 {
			t.Errorf("timeout latency %+v, want none (no evaluation succeeded)", l)
		}
		wantErrs := map[string]int64{"timeout": 3, "status_error:bad_data": 3, "http_503": 3, "bad_body": 3}
		if diff := cmp.Diff(wantErrs, res.Errors); diff != "" || res.Executed != 15 || res.OK != 3 {
			t.Errorf("totals executed %d ok %d errors (-want +got):\n%s", res.Executed, res.OK, diff)
		}
		wantMetrics := map[string]float64{
			`tsbench_query_warnings_total{kind="instant",query="ok",storage="s"}`:                               3,
			`tsbench_query_errors_total{kind="instant",query="slow",reason="timeout",storage="s"}`:              3,
			`tsbench_query_errors_total{kind="instant",query="bad",reason="status_error:bad_data",storage="s"}`: 3,
			`tsbench_query_errors_total{kind="instant",query="down",reason="http_503",storage="s"}`:             3,
			`tsbench_query_errors_total{kind="instant",query="garbage",reason="bad_body",storage="s"}`:          3,
		}
		for _, q := range plan.Queries {
			wantMetrics[`tsbench_query_executed_total{kind="instant",query="`+q.Name+`",storage="s"}`] = 3
			wantMetrics[`tsbench_query_duration_seconds_count{kind="instant",query="`+q.Name+`",storage="s"}`] = 3
		}
		if diff := cmp.Diff(wantMetrics, gather(t, reg)); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
	})
}

// An evaluation still waiting for a slot when the run ends is never sent and counts as missed;
// the one in flight is accounted when its timeout ends it, and Run waits for it.
func TestRunnerShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.QueryConcurrency = 1
		cfg.QueryTimeout = 30 * time.Second
		plan := rules(10*time.Second, "first", "second")
		r, _ := fakeRunner(t, cfg, plan, http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
			<-req.Context().Done()
		}))
		o1, o2 := offset("s", "first", 10*time.Second), offset("s", "second", 10*time.Second)
		start := time.Now()
		runFor(t, r, max(o1, o2)+time.Millisecond)
		if got, want := time.Since(start), min(o1, o2)+30*time.Second; got != want {
			t.Errorf("Run returned after %v, want %v (the in-flight query's timeout)", got, want)
		}
		res := r.Results()
		if res.Executed != 1 || res.Errors["timeout"] != 1 || res.Missed != 1 {
			t.Errorf("executed %d errors %v missed %d, want 1 timeout and 1 missed", res.Executed, res.Errors, res.Missed)
		}
	})
}

// Range queries end at the scheduled time aligned to their step; index lookups send their
// matcher over the last hour; every kind is counted under its name.
func TestRunnerKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		plan := &Plan{Queries: append([]Query{{Name: "panel", Kind: KindRange, Expr: "up", Interval: 30 * time.Second, Range: time.Hour, Step: 15 * time.Second}},
			indexLookups(30*time.Second)...)}
		var mu sync.Mutex
		paths := map[string]int{}
		r, _ := fakeRunner(t, cfg, plan, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_ = req.ParseForm()
			mu.Lock()
			paths[req.URL.Path]++
			mu.Unlock()
			end, _ := strconv.ParseFloat(req.Form.Get("end"), 64)
			start, _ := strconv.ParseFloat(req.Form.Get("start"), 64)
			switch {
			case strings.HasSuffix(req.URL.Path, "query_range"):
				if int64(end)%15 != 0 || end-start != 3600 || req.Form.Get("step") != "15" {
					t.Errorf("range query start %v end %v step %v: want an hour ending on a multiple of 15 s", start, end, req.Form.Get("step"))
				}
				_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"],[2,"2"]]}]}}`)
			case strings.HasSuffix(req.URL.Path, "series"):
				if end-start != 3600 || len(req.Form["match[]"]) != 1 {
					t.Errorf("series lookup %v", req.Form)
				}
				_, _ = io.WriteString(w, `{"status":"success","data":[{"a":"1"},{"a":"2"},{"a":"3"}]}`)
			default:
				_, _ = io.WriteString(w, `{"status":"success","data":["x"]}`)
			}
		}))
		runFor(t, r, 30*time.Second)
		res := r.Results()
		for i, q := range res.PerQuery {
			if q.Executed != 1 || q.OK != 1 || q.Kind != plan.Queries[i].Kind {
				t.Errorf("%s (%s): executed %d ok %d errors %v", q.Name, q.Kind, q.Executed, q.OK, q.Errors)
			}
			want := int64(1)
			switch q.Kind {
			case KindSeries:
				want = 3
			}
			if count(q.ResultSeries) != want {
				t.Errorf("%s: resultSeries %d, want %d", q.Name, count(q.ResultSeries), want)
			}
		}
		want := map[string]int{
			"/api/v1/query_range": 1, "/api/v1/series": 6, "/api/v1/labels": 2,
			"/api/v1/label/__name__/values": 1, "/api/v1/label/instance/values": 1,
			"/api/v1/label/device/values": 1, "/api/v1/label/mountpoint/values": 1,
		}
		if diff := cmp.Diff(want, paths); diff != "" {
			t.Errorf("paths (-want +got):\n%s", diff)
		}
	})
}

// gather returns every sample of reg by name{labels} (histograms by their _count).
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+`="`+l.GetValue()+`"`)
			}
			key := "{" + strings.Join(ls, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[mf.GetName()+key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[mf.GetName()+"_count"+key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// Progress gives the p99 of each window since the previous call, not since the start: a slow
// window then a fast one shows fast; a window where nothing completes has none; errors count
// from the start.
func TestRunnerProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.QueryTimeout = 15500 * time.Millisecond // not a whole number of intervals: see TestRunnerStalls
		var mode atomic.Value
		mode.Store("slow")
		r, _ := fakeRunner(t, cfg, rules(time.Second, "r"), http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			switch mode.Load() {
			case "slow":
				time.Sleep(500 * time.Millisecond)
			case "fast":
				time.Sleep(10 * time.Millisecond)
			case "failing":
				time.Sleep(10 * time.Millisecond)
				w.WriteHeader(http.StatusServiceUnavailable)
			case "hanging":
				<-req.Context().Done()
				return
			}
			_, _ = io.WriteString(w, vector2)
		}))
		if o := offset("s", "r", time.Second); o != 532751324 {
			t.Fatalf("offset %v: the figures below are for evaluations at k s + 532.751324 ms", o)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		var got []Progress
		// The answers change at 9 s, 19 s, 29 s; Progress is read at 10 s, 20 s, ...
		for _, next := range []string{"fast", "failing", "hanging", "", ""} {
			time.Sleep(9 * time.Second)
			if next != "" {
				mode.Store(next)
			}
			time.Sleep(time.Second)
			got = append(got, r.Progress())
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want := []Progress{
			{Completed: 10, P99: 0.5},            // 9 slow, then the fast one of 9.53 s
			{Completed: 9, P99: 0.01, Errors: 1}, // all fast (the start's p99 is 0.5 s); 19.53 s fails
			{Completed: 0, Errors: 10},           // 9 fail fast (no latency counted); 29.53 s hangs
			{Completed: 0, Errors: 10},           // it holds the rule: nothing ends
			{Completed: 0, Errors: 11},           // it times out at 45.03 s: an error, no latency
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("progress windows (-want +got):\n%s", diff)
		}
	})
}

// A query keeps two histograms against each storage; the default plan has ~80 queries. Latency
// keeps 3 significant digits, service time 2: 210 KiB a query, 16 MiB a storage (3 digits for
// both took 368 KiB, 28 MiB).
func TestStatSize(t *testing.T) {
	s := newStat()
	if got := s.lat.h.ByteSize() + s.service.h.ByteSize(); got > 220<<10 {
		t.Errorf("a query's histograms take %d KiB, want at most 220", got>>10)
	}
}

// A group's concurrency caps its own queries in flight, not the others', and each group runs
// at its own interval: four rules of a group with concurrency 1 every 4 s (900 ms answers,
// which would overlap at their hashed offsets) never overlap, and four rules of a group
// without one every 1 s (700 ms answers) do. The longest wait, 2.7 s, fits in the interval, so
// every tick is executed but one still waiting when the run ends.
func TestRunnerGroupConcurrencyAndInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		cfg.QueryConcurrency = 8 // never the limit here
		p := &Plan{}
		for i := range 4 {
			p.Queries = append(p.Queries,
				Query{Name: "capped_" + strconv.Itoa(i), Kind: KindInstant, Expr: "capped_" + strconv.Itoa(i), Interval: 4 * time.Second, Group: "capped", GroupConcurrency: 1},
				Query{Name: "free_" + strconv.Itoa(i), Kind: KindInstant, Expr: "free_" + strconv.Itoa(i), Interval: time.Second, Group: "free"})
		}
		var mu sync.Mutex
		inFlight, maxInFlight := map[string]int{}, map[string]int{}
		r, _ := fakeRunner(t, cfg, p, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_ = req.ParseForm()
			group, _, _ := strings.Cut(req.Form.Get("query"), "_")
			mu.Lock()
			inFlight[group]++
			maxInFlight[group] = max(maxInFlight[group], inFlight[group])
			mu.Unlock()
			if group == "capped" {
				time.Sleep(900 * time.Millisecond)
			} else {
				time.Sleep(700 * time.Millisecond)
			}
			mu.Lock()
			inFlight[group]--
			mu.Unlock()
			_, _ = io.WriteString(w, vector2)
		}))
		runFor(t, r, 20*time.Second)
		if maxInFlight["capped"] != 1 || maxInFlight["free"] < 2 {
			t.Errorf("most in flight: capped %d, free %d; want 1 (its concurrency) and more than 1", maxInFlight["capped"], maxInFlight["free"])
		}
		for i, q := range p.Queries {
			got := r.Results().PerQuery[i]
			n := ticks(q.Name, q.Interval, 20*time.Second)
			// A capped rule still waiting for its group's slot when the run ends is missed.
			missable := int64(0)
			if q.GroupConcurrency > 0 {
				missable = 1
			}
			if got.Executed+got.Missed != n || got.Missed > missable || got.IntervalSeconds != q.Interval.Seconds() || got.Group != q.Group {
				t.Errorf("%s: executed %d missed %d, interval %vs, group %q; want %d ticks of %v, at most %d missed (at the end), group %q",
					q.Name, got.Executed, got.Missed, got.IntervalSeconds, got.Group, n, q.Interval, missable, q.Group)
			}
		}
	})
}

// secs is a latency's quantiles as numbers, -1 for an unknown one.
type secs struct{ P50, P90, P99, Max float64 }

func seconds(l results.Latency) secs {
	f := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	return secs{f(l.P50), f(l.P90), f(l.P99), f(l.Max)}
}

// count is a count's value, -1 when unknown.
func count(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestNothingCompletedHasNoLatency: before any evaluation completes, and for a query that
// never succeeded, there is no latency and no result size to tell: null, not 0 (issue 10).
// An interval of the timeline in which nothing completed has no p50 or p99 either.
func TestNothingCompletedHasNoLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config.Default()
		r, _ := fakeRunner(t, cfg, rules(time.Second, "up", "down"), http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.FormValue("query") == "down" {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, vector2)
		}))
		before := r.Results()
		if diff := cmp.Diff(secs{-1, -1, -1, -1}, seconds(before.LatencySeconds)); diff != "" {
			t.Errorf("latency before any evaluation (-want +got):\n%s", diff)
		}
		runFor(t, r, 3*time.Second)
		res := r.Results()
		if up, down := res.PerQuery[0], res.PerQuery[1]; count(up.ResultSeries) != 2 || down.ResultSeries != nil || down.Executed == 0 {
			t.Errorf("resultSeries up %d, down %d (executed %d): want 2, and unknown for a query that never succeeded",
				count(up.ResultSeries), count(down.ResultSeries), down.Executed)
		}
		if l := seconds(res.PerQuery[1].LatencySeconds); l.P99 >= 0 {
			t.Errorf("latency of the failing query %+v: no evaluation succeeded, so it has none (failures are counted apart)", l)
		}
	})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tl := &timeline{step: time.Second, lat: newLatency(), recent: newLatency()}
	tl.start(t0)
	tl.add(t0.Add(500*time.Millisecond), 20*time.Millisecond, false)
	tl.add(t0.Add(2500*time.Millisecond), 30*time.Millisecond, false) // nothing completed in (1 s, 2 s]
	got := tl.snapshot(t0.Add(3 * time.Second))
	if len(got) != 3 || got[0].P99 == nil || got[1].Completed != 0 || got[1].P50 != nil || got[1].P99 != nil || got[2].P99 == nil {
		t.Errorf("timeline %+v: want the empty second interval without p50 and p99", got)
	}
}

// A rule group's params and headers arrive with each of its queries and with no other
// group's; the storage's auth and headers arrive with every query; the group's query_offset
// sets its queries' time that far before their scheduled time, and the other group's time is
// the scheduled time. A header's value, a tenant's token here, is in no log line and nowhere
// in the results, though a query of its group fails and is logged.
func TestRunnerGroupRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const secret = "tenant-token-s3cret"
		cfg := config.Default()
		plan := &Plan{Queries: []Query{
			{
				Name: "tenant_a", Kind: KindInstant, Expr: "tenant_a", Interval: time.Second, Group: "tenant",
				Params: url.Values{"nocache": {"1"}}, Header: http.Header{"X-Scope-Orgid": {secret}}, TimeOffset: 30 * time.Second,
			},
			{
				Name: "tenant_b", Kind: KindInstant, Expr: "tenant_b", Interval: time.Second, Group: "tenant",
				Params: url.Values{"nocache": {"1"}}, Header: http.Header{"X-Scope-Orgid": {secret}}, TimeOffset: 30 * time.Second,
			},
			{Name: "plain", Kind: KindInstant, Expr: "plain", Interval: time.Second, Group: "plain"},
		}}
		type req struct {
			RawQuery, Tenant, Auth, Team string
			Millis                       int64
		}
		var mu sync.Mutex
		got := map[string][]req{}
		c := newClient(t, config.Storage{ReadBearerToken: "tok", ReadHeaders: config.Headers{"X-Team": "perf"}})
		c.HTTP = &http.Client{Transport: inBubble{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			ms, err := ParseMillis(r.PostForm.Get("time"))
			if err != nil {
				t.Error(err)
			}
			q := r.PostForm.Get("query")
			mu.Lock()
			got[q] = append(got[q], req{r.URL.RawQuery, r.Header.Get("X-Scope-OrgID"), r.Header.Get("Authorization"), r.Header.Get("X-Team"), ms})
			mu.Unlock()
			if q == "tenant_b" {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, "overloaded")
				return
			}
			_, _ = io.WriteString(w, vector2)
		})}}
		var logs bytes.Buffer
		r := New(&cfg, plan, "s", c, "http://fake/", slog.New(slog.NewTextHandler(&logs, nil)), NewMetrics(prometheus.NewRegistry()))
		r.earlyWake = 0
		start := time.Now() // Run's start: no time passes in the bubble before it reads the clock
		runFor(t, r, 5*time.Second)

		for _, q := range plan.Queries {
			var want []req
			for k := range ticks(q.Name, q.Interval, 5*time.Second) {
				at := start.Add(offset("s", q.Name, q.Interval) + time.Duration(k)*q.Interval)
				w := req{Auth: "Bearer tok", Team: "perf", Millis: at.Add(-q.TimeOffset).UnixMilli()}
				if q.Group == "tenant" {
					w.RawQuery, w.Tenant = "nocache=1", secret
				}
				want = append(want, w)
			}
			if diff := cmp.Diff(want, got[q.Name]); diff != "" {
				t.Errorf("%s: requests (-want +got):\n%s", q.Name, diff)
			}
		}
		if !strings.Contains(logs.String(), "query error") {
			t.Errorf("tenant_b's error is not logged:\n%s", logs.String())
		}
		b, err := json.Marshal(r.Results())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(logs.String(), secret) || strings.Contains(string(b), secret) {
			t.Errorf("the group's header value is in the logs or the results:\n%s\n%s", logs.String(), b)
		}
	})
}
