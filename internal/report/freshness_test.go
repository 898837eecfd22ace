package report

import (
	"strings"
	"testing"

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
	want := `
freshness: seconds from a write's ack to the first query that returns it, p50 / p90 / p99 / max (canary written every 1s, looked for every 100ms)
  query                                        prom                                                 vm
  instant query         0.10 / 0.10 / 0.10 / 0.20 s                        5.10 / 5.55 / 6.00 / 6.10 s
  range query, last 5m  0.10 / 0.15 / 0.20 / 0.20 s                    15.00 / 15.05 / 15.10 / 15.10 s
  /api/v1/series        0.10 / 0.10 / 0.10 / 0.10 s  none seen, 58 never seen, 3 of 600 queries failed
  canary writes acked                      60 of 60                                           58 of 60
  polling load                        3.0 queries/s                                     29.9 queries/s
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
