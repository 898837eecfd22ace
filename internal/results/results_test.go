package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWriteReadRoundTrip(t *testing.T) {
	want := &Run{
		SchemaVersion: SchemaVersion,
		StartTime:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Storages: []Storage{{
			Name:  "vm",
			Write: &Write{GeneratedSamples: 10, AckedSamples: 7, DroppedSamples: map[string]int64{"http_400": 2}, PendingSamples: 1},
		}},
	}
	path, err := want.WriteFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got.Storage("vm") != &got.Storages[0] || got.Storage("prom") != nil {
		t.Error("Storage does not find the storage by name")
	}
}

func TestReadFileRejectsOtherSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(path, []byte(`{"schemaVersion": 999}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	if err == nil || !strings.Contains(err.Error(), "schemaVersion 999") {
		t.Errorf("ReadFile = %v, want a schemaVersion error", err)
	}
}

func TestBalanced(t *testing.T) {
	tests := []struct {
		name     string
		w        Write
		ok       bool
		wantDiff int64
	}{
		{"balanced", Write{GeneratedSamples: 10, AckedSamples: 6, DroppedSamples: map[string]int64{"a": 1, "b": 2}, PendingSamples: 1}, true, 0},
		{"one lost", Write{GeneratedSamples: 10, AckedSamples: 6, DroppedSamples: map[string]int64{"a": 1, "b": 2}}, false, 1},
		{"one counted twice", Write{GeneratedSamples: 10, AckedSamples: 11}, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, diff := tt.w.Balanced()
			if ok != tt.ok || diff != tt.wantDiff {
				t.Errorf("Balanced() = %v, %d; want %v, %d", ok, diff, tt.ok, tt.wantDiff)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		v    *Verify
		want string
	}{
		{"not run", nil, "not verified"},
		{"exact", &Verify{CheckedSamples: 100, CheckedStaleMarkers: 4}, "returns exactly what it was given (100 samples, 4 staleness markers)"},
		{"nothing checked", &Verify{}, "nothing checked"},
		{
			"faults", &Verify{CheckedSamples: 100, MissingSamples: 3, ChangedValues: 2, MaxRelativeError: 1e-13, StalenessIgnored: 1, CheckedStaleMarkers: 4},
			"100 samples checked: 3 missing, 2 values changed (max relative error 1e-13), 1 of 4 staleness markers ignored",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.Verdict(); got != tt.want {
				t.Errorf("Verdict() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReadBackVerdicts: each read-back's verdict from its counts, errors first.
func TestReadBackVerdicts(t *testing.T) {
	failed := []string{"HTTP 500"}
	cases := []struct{ got, want string }{
		{(&Metadata{Kept: 3}).MetadataVerdict(), "kept"},
		{(&Metadata{Kept: 2, Changed: 1}).MetadataVerdict(), "changed"},
		{(&Metadata{Kept: 2, Missing: 1}).MetadataVerdict(), "partial"},
		{(&Metadata{Missing: 3}).MetadataVerdict(), "dropped"},
		{(&Metadata{Kept: 3, Errors: failed}).MetadataVerdict(), "error"},
		{(&Created{Kept: 1, Missing: 1}).CreatedVerdict(), "partial"},
		{(&Created{Kept: 1, Errors: failed}).CreatedVerdict(), "kept"},
		{(&Created{Errors: failed}).CreatedVerdict(), "error"},
		{(&Exemplars{Kept: 1, Changed: 1, Errors: failed}).ExemplarVerdict(), "changed"},
		{(&Exemplars{Missing: 4}).ExemplarVerdict(), "dropped"},
		{(&Exemplars{Errors: failed}).ExemplarVerdict(), "error"},
		{(&NativeHistograms{Missing: 4, FloatPoints: 8}).NativeVerdict(), "converted"},
		{(&NativeHistograms{Missing: 4, FailedRequests: 2}).NativeVerdict(), "refused"},
		{(&NativeHistograms{Missing: 4, FloatPoints: 8, Errors: failed}).NativeVerdict(), "error"},
		{(&NativeHistograms{Kept: 4, FloatPoints: 8}).NativeVerdict(), "kept"},
		{(&NativeHistograms{Missing: 4}).NativeVerdict(), "dropped"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %s, want %s", i, c.got, c.want)
		}
	}
}
