package cli

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// A run whose write accounting did not balance is an error (exit 1), not a threshold
// failure: its numbers cannot be trusted. The results are still written.
func TestFinishExitsOneOnAccountingErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		errors []string
		want   int
	}{
		{"balanced", nil, ExitOK},
		{"unbalanced", []string{"vm at 2025-01-01T00:00:00Z: generated 10 != acked 9 + dropped 0 + pending 0 (off by 1)"}, ExitError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &results.Run{
				SchemaVersion: results.SchemaVersion,
				StartTime:     time.Unix(1_700_000_000, 0).UTC(),
				EndTime:       time.Unix(1_700_000_060, 0).UTC(),
				Storages: []results.Storage{{Name: "vm", Write: &results.Write{
					GeneratedSamples: 10, AckedSamples: 9, DroppedSamples: map[string]int64{}, RequestsByStatus: map[string]int64{},
				}}},
				AccountingErrors: tc.errors,
			}
			dir := t.TempDir()
			code, err := finish(res, dir, io.Discard)
			if code != tc.want {
				t.Errorf("exit code %d (err %v), want %d", code, err, tc.want)
			}
			if tc.errors != nil && (err == nil || !strings.Contains(err.Error(), "off by 1")) {
				t.Errorf("error %v, want the accounting error named", err)
			}
			if _, err := results.ReadFile(dir + "/results.json"); err != nil {
				t.Errorf("results not written: %v", err)
			}
		})
	}
}
