package bench

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"
)

// TestWaitForStart: a run waits until startTime, gives up when interrupted first, and starts
// at once when startTime has passed.
func TestWaitForStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &run{start: time.Now().Add(90 * time.Second), log: slog.New(slog.DiscardHandler)}
		t0 := time.Now()
		if !r.waitForStart(t.Context()) {
			t.Fatal("gave up without an interrupt")
		}
		if waited := time.Since(t0); waited != 90*time.Second {
			t.Errorf("waited %v, want until startTime: 90s", waited)
		}

		r.start = time.Now().Add(time.Minute)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		t0 = time.Now()
		if r.waitForStart(ctx) || time.Since(t0) != time.Second {
			t.Errorf("interrupted after 1s: want false at once, waited %v", time.Since(t0))
		}

		r.start = time.Now().Add(-time.Hour)
		t0 = time.Now()
		if !r.waitForStart(t.Context()) || time.Since(t0) != 0 {
			t.Error("a startTime in the past must start at once")
		}
	})
}
