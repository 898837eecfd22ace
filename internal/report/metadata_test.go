package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

func TestWriteMetadata(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "prom", Write: &results.Write{Metadata: &results.WriteMetadata{
			Families: 300, RequestsByStatus: map[string]int64{"204": 2, "500": 1}, BytesSent: 3 * 9000,
		}}, Verify: &results.Verify{Metadata: &results.Metadata{Families: 300, Missing: 300, Verdict: "dropped", Examples: []string{"a: missing"}}}},
		{Name: "plain", Write: &results.Write{}},
		{Name: "refused", Write: &results.Write{Metadata: &results.WriteMetadata{
			Families: 300, RequestsByStatus: map[string]int64{"503": 9, "400": 1}, BytesSent: 10 * 9000,
			Retries: 7, Dropped: map[string]int64{"retry_timeout": 1, "http_400": 1}, Pending: 1,
		}}},
		{Name: "rw2", Verify: &results.Verify{Created: &results.Created{Checked: 40, Missing: 40, Verdict: "dropped", Examples: []string{"x"}}, Metadata: &results.Metadata{Families: 300, Kept: 299, Changed: 1, Verdict: "changed", Errors: []string{"x"}}}},
	}}
	var b strings.Builder
	writeMetadata(&b, r)
	want := `
metadata sent prom: 300 families, requests 204=2 500=1, 26.4KiB (not samples)
metadata prom: dropped: 0 of 300 families kept, 0 changed, 300 missing
  a: missing
metadata sent refused: 300 families, requests 400=1 503=9, 7 retries, sends dropped http_400=1 retry_timeout=1, 1 pending, 87.9KiB (not samples)
created timestamps rw2: dropped: 0 of 40 series with a 0 at the start time
metadata rw2: changed: 299 of 300 families kept, 1 changed, 0 missing
  error: x
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMetadataVerdicts(t *testing.T) {
	r := &results.Run{Storages: []results.Storage{
		{Name: "prom", Verify: &results.Verify{Metadata: &results.Metadata{Families: 3, Missing: 3, Verdict: "dropped"}}},
		{Name: "rw2", Verify: &results.Verify{
			Metadata: &results.Metadata{Families: 3, Kept: 3, Verdict: "kept"},
			Created:  &results.Created{Checked: 4, Missing: 4, Verdict: "dropped"},
		}},
	}}
	want := []htmlVerdict{
		{Storage: "prom metadata", Text: "dropped: 0 of 3 families kept, 0 changed, 3 missing", Class: sevFail},
		{Storage: "rw2 metadata", Text: "kept: 3 of 3 families kept, 0 changed, 0 missing", Class: sevOK},
		{Storage: "rw2 created timestamps", Text: "dropped: 0 of 4 series with a 0 at the start time", Class: sevFail},
	}
	if diff := cmp.Diff(want, metadataVerdicts(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
