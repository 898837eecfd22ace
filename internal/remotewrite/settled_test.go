package remotewrite

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestSettledFollowsTheOldestPending: a storage answering in 2 s a batch due every second is
// 10 s behind at 20 s: every sample before the oldest pending one is settled, nothing after;
// a storage that keeps up is settled up to now, less the batch being written.
func TestSettledFollowsTheOldestPending(t *testing.T) {
	for name, tc := range map[string]struct {
		answer   time.Duration
		min, max time.Duration // of now − Settled at 20 s
	}{
		"behind":     {2 * time.Second, 9 * time.Second, 11 * time.Second},
		"keeping up": {0, 0, 1100 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := memWriter(t, answerAfter(tc.answer))
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second+500*time.Millisecond)
				defer cancel()
				done := make(chan struct{})
				go func() { _ = w.Run(ctx); close(done) }()
				time.Sleep(20 * time.Second)
				synctest.Wait()
				now := time.Now()
				if behind := now.Sub(w.Settled("s", now)); behind < tc.min || behind > tc.max {
					t.Errorf("settled %v before now, want %v to %v (lag %.1fs)", behind, tc.min, tc.max, w.Results("s").LagSeconds)
				}
				if got := w.Settled("unknown", now); !got.Equal(now) {
					t.Errorf("an unknown storage: settled at %v, want now", got)
				}
				cancel()
				<-done
			})
		})
	}
}
