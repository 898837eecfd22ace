package remotewrite

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// backoff gives the waits before the retries of one request: from min, doubled after each
// wait up to max, each jittered above its base by up to a quarter and capped at max. A wait
// is never shorter than the one before it (issue 37: jitter below the base made the waits at
// the cap shrink, 4.52 → 3.77 → 3.06 s): with the base doubling, a wait of at most 1.25 ×
// its base is below the next base, and from the cap on every wait is max.
type backoff struct {
	min, max time.Duration
	base     time.Duration // before jitter; 0 before the first wait
	last     time.Duration // the previous wait, the server's Retry-After included
}

// next is the wait before the next retry: retryAfter when the server gave one (it is
// honoured as given, even shorter than the waits before it), else the backoff.
func (b *backoff) next(retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		b.last = max(b.last, min(retryAfter, b.max)) // later waits do not undercut it
		return retryAfter
	}
	if b.base == 0 {
		b.base = b.min
	}
	wait := min(max(b.base+rand.N(b.base/4+1), b.last), b.max)
	b.last = wait
	b.base = min(2*b.base, b.max)
	return wait
}

// retried is how a request's tries ended.
type retried uint8

const (
	answered retried = iota // with a status that is not retried: a 2xx, 3xx or 4xx but 429
	gaveUp                  // the next retry would have ended past maxRetryDuration
	canceled                // ctx ended first: neither answered nor given up
)

// retryable reports whether an answer's status is tried again: a 5xx or 429, as Prometheus
// does (and anything else that is not 2xx, 3xx or 4xx). A 4xx would fail again, and a
// redirect is not followed.
func retryable(status int) bool {
	switch status / 100 {
	case 2, 3:
		return false
	case 4:
		return status == http.StatusTooManyRequests
	}
	return true
}

// deliver tries a request until it is answered with a status that is not retried, retrying
// network errors, 5xx and 429 after the backoff or the server's Retry-After, until the next
// retry would end past maxRetryDuration. try makes one attempt within timeout; onRetry is
// called before each retry. Samples and remote write 1.0's metadata are sent by it alike.
func (cfg senderConfig) deliver(ctx context.Context, try func(timeout time.Duration) (answer, error), onRetry func()) (answer, retried) {
	first := time.Now()
	bo := backoff{min: cfg.minBackoff, max: cfg.maxBackoff}
	for attempt := 0; ; attempt++ {
		timeout := cfg.requestTimeout
		if attempt > 0 { // a retry ends by maxRetryDuration, so retry_timeout comes on time
			onRetry()
			timeout = min(timeout, cfg.maxRetryDuration-time.Since(first))
		}
		ans, err := try(timeout)
		if err == nil && !retryable(ans.status) {
			// Answered, even if ctx ended just after: the storage said what it did with the
			// batch (at a drain's deadline, an ack counted pending read as never written).
			return ans, answered
		}
		if ctx.Err() != nil {
			return ans, canceled
		}
		wait := bo.next(ans.retryAfter)
		if time.Since(first)+wait > cfg.maxRetryDuration {
			return ans, gaveUp
		}
		select {
		case <-ctx.Done():
			return ans, canceled
		case <-time.After(wait):
		}
	}
}
