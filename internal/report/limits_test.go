package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
)

// A storage that refused writes at one of its limits: the summary names the limit, the
// storage and what raises it, in one line (issue 31).
func TestSummaryNamesLimit(t *testing.T) {
	r := writeOnly()
	r.Storages[0].Write.RequestsByStatus = map[string]int64{"204": 10, "429": 7}
	r.Storages[0].Write.Limits = []results.WriteLimit{{
		Limit: "ingestion rate (samples/s per tenant)", Family: "Mimir", Value: "10000",
		Raise: "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size", Status: 429, Requests: 7,
		Message: "the request has been rejected because the tenant exceeded the ingestion rate limit, set to 10000 items/s",
	}}
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "\nlimit " + r.Storages[0].Name + ": Mimir refused 7 requests (HTTP 429) at its ingestion rate (samples/s per tenant) limit (10000); " +
		"raise -distributor.ingestion-rate-limit and -distributor.ingestion-burst-size\n"
	if got := b.String(); strings.Count(got, want) != 1 || strings.Contains(got, "limit "+r.Storages[1].Name+":") {
		t.Errorf("summary lacks %q once, for %s alone:\n%s", want, r.Storages[0].Name, got)
	}
	var h bytes.Buffer
	if err := WriteHTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if want := "Limit of " + r.Storages[0].Name + ": Mimir refused 7 requests (HTTP 429) at its ingestion rate (samples/s per tenant) limit (10000); raise -distributor.ingestion-rate-limit"; !strings.Contains(h.String(), want) {
		t.Errorf("report.html lacks %q", want)
	}
}
