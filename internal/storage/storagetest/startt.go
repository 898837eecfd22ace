package storagetest

import (
	"log/slog"
	"testing"
)

// StartT starts a receiver for a test, in its temporary directory with a discarding log,
// and closes it when the test ends; a failure to start or to close fails the test.
func StartT(t testing.TB, opts Options) *Receiver {
	t.Helper()
	r, err := Start(t.TempDir(), slog.New(slog.DiscardHandler), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}
