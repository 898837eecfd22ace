package e2e

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// TestOTLPLabelMapping writes OTLP into Prometheus' own OTLP handler with its job and
// instance translation turned off (resource attributes kept as service_name and
// service_instance_id): without otlpLabels, the read-back finds every sample under those
// labels and reports the mapping, counted as renamed, not missing; with otlpLabels:
// underscore, it reads them there directly, and the query load's rules and panels ask for them
// there and find series, as on a third storage written in remote write 1.0.
func TestOTLPLabelMapping(t *testing.T) {
	parallel(t)
	var storages strings.Builder
	for _, name := range []string{"mapped", "unmapped", "rw"} {
		r, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{OTLPResourceLabels: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := r.Close(); err != nil {
				t.Error(err)
			}
		})
		mapping := ""
		if name == "mapped" {
			mapping = ", otlpLabels: underscore"
		}
		if name == "rw" { // job and instance as written: what the others' rules are compared with
			fmt.Fprintf(&storages, "  %s: {writeURL: %s%s, readURL: %s/}\n", name, r.URL, storagetest.WritePath, r.URL)
			continue
		}
		fmt.Fprintf(&storages, "  %s: {writeURL: %s%s, readURL: %s/, protocol: otlp-http%s}\n", name, r.URL, storagetest.OTLPPath, r.URL, mapping)
	}
	cfg := `
duration: 15s
targetsCount: 5
scrapeInterval: 5s
queryInterval: 10s
freshness: {interval: 0s}
remoteStorages:
` + storages.String()
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.results == nil || (rr.code != 0 && rr.code != 3) {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	un := storageResult(t, rr.results, "unmapped").Verify
	if un == nil || un.CheckedSamples == 0 || un.MissingSamples != 0 || un.RenamedSamples == 0 || un.RenamedSamples+un.NaNAltered != un.CheckedSamples {
		t.Fatalf("unmapped read-back %+v: want every sample found under other labels", un)
	}
	for _, want := range []results.LabelChange{{From: "instance", To: "service_instance_id"}, {From: "job", To: "service_name"}} {
		if !slices.ContainsFunc(un.LabelChanges, func(c results.LabelChange) bool { return c.From == want.From && c.To == want.To && c.Series > 0 }) {
			t.Errorf("label changes %+v: want %s", un.LabelChanges, want)
		}
	}
	if want := "read-back unmapped: stored under other labels ("; !strings.Contains(rr.stdout, want) {
		t.Errorf("the summary does not say %q", want)
	}
	m := storageResult(t, rr.results, "mapped").Verify
	if m == nil || m.CheckedSamples == 0 || m.MissingSamples != 0 || slices.ContainsFunc(m.LabelChanges, func(c results.LabelChange) bool { return c.From == "job" }) {
		t.Errorf("mapped read-back %+v: want job and instance read as service_name and service_instance_id", m)
	}
	t.Logf("unmapped: %s\nmapped: %s", un.Verdict(), m.Verdict())
	// The query load: the rules and panels select and group by job and instance. On mapped
	// they ask for service_name and service_instance_id (checked here) and find what rw finds
	// (checked below, by the rule comparison after the load; what the load's own evaluations
	// found is logged: on a busy machine they may run before the data is there); on unmapped (as
	// on every OTLP storage before otlpLabels reached the queries) they find next to nothing.
	found := map[string][2]int64{}
	for _, name := range []string{"mapped", "unmapped", "rw"} {
		q := storageResult(t, rr.results, name).Query
		if q == nil {
			t.Fatalf("%s: no query section", name)
		}
		queries, withData, series := queriesWithData(q)
		found[name] = [2]int64{int64(withData), series}
		t.Logf("query load on %s: %d of %d rules and panels returned series, %d series in all", name, withData, queries, series)
	}
	for _, q := range storageResult(t, rr.results, "mapped").Query.PerQuery {
		if q.Kind == "instant" && !strings.Contains(q.Expr, `service_name="node_exporter"`) {
			t.Errorf("mapped was sent rule %s as %s, want it under service_name", q.Name, q.Expr)
		}
	}
	// The rule comparison reads mapped's answers back under job and instance: against rw, a
	// rule differs only by the label set of each series (the otel_scope_name the receiver
	// adds, as the read-back says), never by series missing on one side.
	// This comparison runs after the load, so it holds on a busy machine, where the load's own
	// evaluations above can run before the data is there or be dropped (counted as missed).
	balanced := regexp.MustCompile(`^vs rw: (\d+) series only here, (\d+) series only there$`)
	withSeries := 0
	for _, d := range m.RuleDiffs {
		if !strings.HasPrefix(d.Detail, "vs rw: ") {
			continue
		}
		t.Logf("mapped rule diff: %s %s", d.Rule, d.Detail)
		g := balanced.FindStringSubmatch(d.Detail)
		if g == nil || g[1] != g[2] {
			t.Errorf("mapped rule %s: %s; want the same series on both, labelled alike but for otel_scope_name", d.Rule, d.Detail)
		} else if g[1] != "0" {
			withSeries++
		}
	}
	if withSeries < 2 {
		t.Errorf("mapped: %d rules found series under service_name and service_instance_id, of %d compared (rules and panels with series during the load: %v); want the rules rw answers", withSeries, m.RulesCompared, found)
	}
}

// queriesWithData counts the rules and panels of q, those whose last evaluation returned
// series, and the series they returned.
func queriesWithData(q *results.Query) (queries, withData int, series int64) {
	for _, s := range q.PerQuery {
		if s.Kind != "instant" && s.Kind != "range" {
			continue
		}
		queries++
		if s.ResultSeries != nil && *s.ResultSeries > 0 {
			withData++
			series += *s.ResultSeries
		}
	}
	return queries, withData, series
}
