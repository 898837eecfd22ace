package storagetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// SmallProfile writes to dir the profile at src cut to its first n series whose shape kind is
// none of skip, and returns its path: a test's samples in the thousands, all of them read
// back, where the whole profile's 839 series a target would be CPU under -race on 2 cores.
func SmallProfile(src, dir string, n int, skip ...string) (string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	var p struct {
		Source string            `json:"source"`
		Series []json.RawMessage `json:"series"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	var kept []json.RawMessage
	for _, s := range p.Series {
		var shape struct {
			Shape struct {
				Kind string `json:"kind"`
			} `json:"shape"`
		}
		if err := json.Unmarshal(s, &shape); err != nil {
			return "", fmt.Errorf("%s: %w", src, err)
		}
		if len(kept) < n && !slices.Contains(skip, shape.Shape.Kind) {
			kept = append(kept, s)
		}
	}
	if len(kept) < n {
		return "", fmt.Errorf("%s: %d series to keep, want %d", src, len(kept), n)
	}
	p.Series = kept
	if b, err = json.Marshal(p); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "profile.json")
	return path, os.WriteFile(path, b, 0o644)
}
