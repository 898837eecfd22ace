package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

func TestFreshnessTable(t *testing.T) {
	probe := func(p50, p99, mx float64, never int64) *results.FreshnessProbe {
		p90 := (p50 + p99) / 2
		return &results.FreshnessProbe{Seconds: results.Latency{P50: &p50, P90: &p90, P99: &p99, Max: &mx}, NeverVisible: never, Queries: 10}
	}
	r := &results.Run{Storages: []results.Storage{
		{Name: "prom", Freshness: &results.Freshness{
			IntervalSeconds: 0.1, WriteIntervalSeconds: 1, Written: 60, Acked: 60, QueriesPerSecond: 3,
			Instant: probe(0.1, 0.1, 0.2, 0), Range: probe(0.1, 0.2, 0.2, 0), Series: probe(0.1, 0.1, 0.1, 0),
		}},
		{Name: "noread"}, // no query API: no canary
		{Name: "vm", Freshness: &results.Freshness{
			IntervalSeconds: 0.1, WriteIntervalSeconds: 1, Written: 60, Acked: 58, QueriesPerSecond: 29.94,
			Instant: probe(5.1, 6, 6.1, 0), Range: probe(15, 15.1, 15.1, 0),
			Series: &results.FreshnessProbe{NeverVisible: 58, Queries: 600, Errors: map[string]int64{"http_503": 3}},
		}},
	}}
	r.Storages[2].Freshness.Range.Abandoned = 2 // pending at the checkpoint a resumed run began from
	want := `
freshness: seconds from a write's ack to the first query that returns it, p50 / p90 / p99 / max (canary written every 1s, looked for every 100ms)
  query                                        prom                                                           vm
  instant query         0.10 / 0.10 / 0.10 / 0.20 s                                  5.10 / 5.55 / 6.00 / 6.10 s
  range query, last 5m  0.10 / 0.15 / 0.20 / 0.20 s  15.00 / 15.05 / 15.10 / 15.10 s, 2 unwatched over a restart
  /api/v1/series        0.10 / 0.10 / 0.10 / 0.10 s            none seen, 58 never seen, 3 of 600 queries failed
  canary writes acked                      60 of 60                                                     58 of 60
  polling load                        3.0 queries/s                                               29.9 queries/s
`
	var b strings.Builder
	writeFreshness(&b, r)
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b.Reset()
	writeFreshness(&b, &results.Run{Storages: []results.Storage{{Name: "x"}}})
	if b.Len() != 0 {
		t.Errorf("a run without a canary printed %q", b.String())
	}
}

// TestFreshnessCharts: a chart per probe with each storage's slowest sample per interval,
// and one of the samples never seen, every probe's added up per interval; none without a
// canary.
func TestFreshnessCharts(t *testing.T) {
	pt := func(sec int, mx float64, never int64) results.FreshnessPoint {
		return results.FreshnessPoint{Time: time.Unix(int64(sec), 0).UTC().Format(time.RFC3339), Max: &mx, NeverVisible: never}
	}
	f := &results.Freshness{
		IntervalSeconds: 0.1,
		Instant:         &results.FreshnessProbe{Timeline: []results.FreshnessPoint{pt(10, 1, 0), pt(20, 7, 2)}},
		Range:           &results.FreshnessProbe{Timeline: []results.FreshnessPoint{pt(20, 15, 1)}},
		Series:          &results.FreshnessProbe{Timeline: []results.FreshnessPoint{pt(30, 2, 0)}},
	}
	r := &results.Run{StartTime: time.Unix(0, 0), Storages: []results.Storage{{Name: "vm", Freshness: f}, {Name: "noread"}}}
	cs := freshnessCharts(r)
	var titles []string
	for _, c := range cs {
		titles = append(titles, c.Title)
	}
	want := []string{
		"freshness, instant query: slowest per interval", "freshness, range query, last 5m: slowest per interval",
		"freshness, /api/v1/series: slowest per interval", "freshness: samples never seen, all probes",
	}
	if diff := cmp.Diff(want, titles); diff != "" {
		t.Fatalf("charts (-want +got):\n%s", diff)
	}
	values := func(s chartSeries) []float64 {
		var out []float64
		for _, p := range s.Points {
			out = append(out, p.V)
		}
		return out
	}
	if got := values(cs[0].Series[0]); !slices.Equal(got, []float64{1, 7}) {
		t.Errorf("instant: %v, want each interval's slowest, 1 and 7", got)
	}
	if got := values(cs[3].Series[0]); !slices.Equal(got, []float64{0, 3, 0}) {
		t.Errorf("never seen: %v, want 0, 2+1, 0 at 10, 20, 30 s", got)
	}
	if len(cs[0].Series) != 2 || len(cs[0].Series[1].Points) != 0 {
		t.Errorf("series %+v: want one per storage, none drawn for the one without a canary", cs[0].Series)
	}
	r.Storages[0].Freshness = nil
	if cs := freshnessCharts(r); cs != nil {
		t.Errorf("%d freshness charts without a canary, want none", len(cs))
	}
}

// TestFreshnessTableResolution: with the schedule of issue 29, each figure reads as the poll
// before it and the one that returned it, the title names the polls, and the load row its
// share of the workload's read load; merged polls are said.
func TestFreshnessTableResolution(t *testing.T) {
	probe := func(lo, hi float64) *results.FreshnessProbe {
		return &results.FreshnessProbe{
			Seconds:           results.Latency{P50: &hi, P90: &hi, P99: &hi, Max: &hi},
			LowerBoundSeconds: results.Latency{P50: &lo, P90: &lo, P99: &lo, Max: &lo},
			Queries:           40,
		}
	}
	polls := []float64{0.1, 0.234, 0.549, 1.285, 3.011, 7.054, 16.525, 38.71}
	fresh := func(lo, hi float64) *results.Freshness {
		return &results.Freshness{
			IntervalSeconds: 0.1, WriteIntervalSeconds: 38.71, PollSeconds: polls, ReadLoadQueriesPerSecond: 6.2,
			Written: 5, Acked: 5, QueriesPerSecond: 0.52,
			Instant: probe(lo, hi), Range: probe(lo, hi), Series: probe(lo, hi),
		}
	}
	r := &results.Run{Storages: []results.Storage{{Name: "prom", Freshness: fresh(0, 0.1)}, {Name: "vm", Freshness: fresh(0.549, 1.285)}}}
	r.Storages[1].Freshness.Series.MergedPolls = 2
	want := `
freshness: seconds from a write's ack to the last query that did not return it - the first that did, p50 / p90 / p99 / max (a canary sample every 38.71s; each probe asks for each sample 8 times on every storage, 0.1, 0.234, 0.549, 1.285, 3.011, 7.054, 16.525, 38.71 s after its ack)
  query                                                            prom                                                                             vm
  instant query         0.00-0.10 / 0.00-0.10 / 0.00-0.10 / 0.00-0.10 s                                0.55-1.28 / 0.55-1.28 / 0.55-1.28 / 0.55-1.28 s
  range query, last 5m  0.00-0.10 / 0.00-0.10 / 0.00-0.10 / 0.00-0.10 s                                0.55-1.28 / 0.55-1.28 / 0.55-1.28 / 0.55-1.28 s
  /api/v1/series        0.00-0.10 / 0.00-0.10 / 0.00-0.10 / 0.00-0.10 s  0.55-1.28 / 0.55-1.28 / 0.55-1.28 / 0.55-1.28 s, 2 polls merged into the next
  canary writes acked                                            5 of 5                                                                         5 of 5
  polling load               0.52 queries/s, 8.4% of the workload's 6.2                                     0.52 queries/s, 8.4% of the workload's 6.2
`
	var b strings.Builder
	writeFreshness(&b, r)
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestFreshnessTitleStaircase: when the probes placed their later polls from the earlier
// samples (lastPollSeconds, issue 37), the title says the ladder was the first sample's and
// where the later ones' went.
func TestFreshnessTitleStaircase(t *testing.T) {
	f := &results.Freshness{
		IntervalSeconds: 0.1, WriteIntervalSeconds: 38.71, PollSeconds: []float64{0.1, 0.234, 0.549, 1.285, 3.011, 7.054, 16.525, 38.71},
		Instant: &results.FreshnessProbe{LastPollSeconds: []float64{0.1, 0.549, 3.011, 3.999, 5.311, 7.054, 16.525, 38.71}},
	}
	want := "freshness: seconds from a write's ack to the last query that did not return it - the first that did, p50 / p90 / p99 / max " +
		"(a canary sample every 38.71s; each probe asks for each sample 8 times on every storage, its first at 0.1, 0.234, 0.549, 1.285, 3.011, 7.054, 16.525, 38.71 s after its ack, " +
		"every later one at 0.1 and 38.71 s and 6 times between, where its latest samples showed)"
	if got := FreshnessTitle(&results.Run{Storages: []results.Storage{{Name: "vm", Freshness: f}}}); got != want {
		t.Errorf("title\n%s\nwant\n%s", got, want)
	}
}
