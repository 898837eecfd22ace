package e2e

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/promreceiver"
)

// TestOTLPLabelMapping writes OTLP into Prometheus' own OTLP handler with its job and
// instance translation turned off (resource attributes kept as service_name and
// service_instance_id): without otlpLabels, the read-back finds every sample under those
// labels and reports the mapping, counted as renamed, not missing; with otlpLabels:
// underscore, it reads them there directly.
func TestOTLPLabelMapping(t *testing.T) {
	t.Parallel()
	var storages strings.Builder
	for _, name := range []string{"mapped", "unmapped"} {
		r, err := promreceiver.Start(t.TempDir(), slog.New(slog.DiscardHandler), promreceiver.Options{OTLPResourceLabels: true})
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
		fmt.Fprintf(&storages, "  %s: {writeURL: %s%s, readURL: %s/, protocol: otlp-http%s}\n", name, r.URL, promreceiver.OTLPPath, r.URL, mapping)
	}
	cfg := `
duration: 15s
targetsCount: 10
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
	// The query load asks the mapped storage under its names: its rules and panels that select
	// or group by job and instance find the data the unmapped one's miss.
	mq, uq := answered(t, rr.results, "mapped"), answered(t, rr.results, "unmapped")
	if mq < uq+5 {
		t.Errorf("queries with series in their last answer: mapped %d, unmapped %d; want the mapped storage's well above", mq, uq)
	}
	t.Logf("queries with series in their last answer: mapped %d, unmapped %d", mq, uq)
}

// answered counts the storage's rules and panels whose last answer held a series.
func answered(t *testing.T, r *results.Run, name string) int {
	t.Helper()
	q := storageResult(t, r, name).Query
	if q == nil {
		t.Fatalf("%s: no query section", name)
	}
	n := 0
	for _, p := range q.PerQuery {
		if (p.Kind == "instant" || p.Kind == "range") && p.ResultSeries != nil && *p.ResultSeries > 0 {
			n++
		}
	}
	return n
}
