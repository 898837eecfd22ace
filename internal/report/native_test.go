package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

func TestWriteNatives(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	twenty := int64(20)
	r := &results.Run{Storages: []results.Storage{
		{Name: "prom", Verify: &results.Verify{NativeHistograms: &results.NativeHistograms{
			Verdict: "kept", Schemas: map[string]int32{"b": 3, "a": -1}, CheckedHistograms: 40, Kept: 40,
		}}, Query: &results.Query{PerQuery: []results.QueryStat{
			{Name: "Latency", Kind: "instant", LatencySeconds: results.Latency{P50: ms(0.002), P99: ms(0.0105)}, ResultSeries: &twenty},
			{Name: "Latency:native", Kind: "instant", LatencySeconds: results.Latency{P50: ms(0.001), P99: ms(0.004)}},
			{Name: "cpu", Kind: "instant"},
		}}},
		{Name: "old", Verify: &results.Verify{NativeHistograms: &results.NativeHistograms{
			Verdict: "refused", Schemas: map[string]int32{"a": -1}, CheckedHistograms: 40, Missing: 40, FailedRequests: 7,
		}, Exemplars: &results.Exemplars{Verdict: "dropped", Checked: 9, Missing: 9}}},
	}}
	var b strings.Builder
	writeNatives(&b, r)
	want := `
native histograms prom: kept: 40 of 40 kept, 0 changed, 0 missing, 0 float points (schemas a=-1 b=3)
native histograms old: refused: 0 of 40 kept, 0 changed, 40 missing, 0 float points, 7 write requests failed (schemas a=-1)
exemplars old: dropped: 0 of 9 kept, 0 changed, 9 missing
latency prom Latency: classic p50 2.0 p99 10.5 ms (20 series), native p50 1.0 p99 4.0 ms (? series)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNothingLookedForIsUnknown (issue 29, item 4): a read-back of exemplars, native
// histograms, metadata or created timestamps that looked for none is unknown, said with
// why, never "dropped: 0 of 0 kept".
func TestNothingLookedForIsUnknown(t *testing.T) {
	e := &results.Exemplars{Percent: 1, Reason: "no exemplar was sent in the window read"}
	e.Verdict = e.ExemplarVerdict()
	n := &results.NativeHistograms{Send: "true", FailedRequests: 2}
	n.Verdict = n.NativeVerdict()
	m := &results.Metadata{}
	m.Verdict = m.MetadataVerdict()
	c := &results.Created{}
	c.Verdict = c.CreatedVerdict()
	r := &results.Run{Storages: []results.Storage{{Name: "vm", Verify: &results.Verify{Exemplars: e, NativeHistograms: n, Metadata: m, Created: c}}}}
	var b strings.Builder
	writeNatives(&b, r)
	writeMetadata(&b, r)
	want := `
native histograms vm: unknown: no histogram looked for in the window read
exemplars vm: unknown: no exemplar was sent in the window read

created timestamps vm: unknown: no series looked for
metadata vm: unknown: no family looked for
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
