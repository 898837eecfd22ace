package bench

import (
	"context"
	"time"
)

// every calls f with each tick's time, every d, until ctx ends: the one loop behind the
// checkpoints, the continuous checks, the progress lines (of both modes) and the series
// timeline. A call that outlasts d makes no ticks pile up: time.Ticker drops the ones
// nobody waited for.
func every(ctx context.Context, d time.Duration, f func(now time.Time)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			f(now)
		}
	}
}
