package results

import (
	"slices"
	"testing"
	"time"
)

// A storage whose process exited during the run fails, with when it exited, from the
// structured ExitedAt: a problem that only says so in words (an agent's, a merged shard's
// text) does not decide its status, and merged shards keep the earliest exit.
func TestExitedStorageFails(t *testing.T) {
	at := time.Date(2026, 11, 28, 7, 30, 5, 0, time.UTC)
	r := &Run{Storages: []Storage{
		{Name: "died", ExitedAt: &at, Problems: []string{"the victoriametrics process exited during the run; see log"}},
		{Name: "words", Problems: []string{"the prometheus process exited during the run; see log"}},
	}}
	r.SetStatuses()
	if s := r.Storages[0]; s.Status != StatusFailed || !slices.Contains(s.StatusReasons, "its process exited at 07:30:05Z, during the run") {
		t.Errorf("died: %s %q, want failed because its process exited at 07:30:05Z", s.Status, s.StatusReasons)
	}
	if s := r.Storages[1]; s.Status != StatusOK {
		t.Errorf("words: %s %q, want ok: no ExitedAt", s.Status, s.StatusReasons)
	}
}
