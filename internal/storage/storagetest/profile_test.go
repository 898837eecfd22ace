package storagetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The cut keeps the first n series in order, leaves out the kinds skipped, and says so when
// the profile holds too few.
func TestSmallProfile(t *testing.T) {
	src := filepath.Join("..", "..", "..", "profiles", "node_exporter.json")
	path, err := SmallProfile(src, t.TempDir(), 150, "nan")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Series []struct {
			Shape struct {
				Kind string `json:"kind"`
			} `json:"shape"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Series) != 150 {
		t.Errorf("%d series, want 150", len(p.Series))
	}
	for i, s := range p.Series {
		if s.Shape.Kind == "nan" {
			t.Errorf("series %d is of the kind skipped", i)
		}
	}
	if _, err := SmallProfile(src, t.TempDir(), 100000); err == nil {
		t.Error("no error for more series than the profile holds")
	}
}
