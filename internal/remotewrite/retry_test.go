package remotewrite

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// checkWaits fails unless every wait is within [min, max] and none is shorter than the one
// before it (so each is also ≥ 0.8 × the one before, the community sender suite's rule).
func checkWaits(t *testing.T, waits []time.Duration, lo, hi time.Duration) {
	t.Helper()
	for i, d := range waits {
		if d < lo || d > hi {
			t.Errorf("wait %d = %v, want within [%v, %v]; waits %v", i+1, d, lo, hi, waits)
		}
		if i > 0 && d < waits[i-1] {
			t.Errorf("wait %d = %v is shorter than wait %d = %v; waits %v", i+1, d, i, waits[i-1], waits)
		}
	}
}

// TestBackoffNeverShrinks: 20 waits, from 30 ms to the 5 s cap, never shrink, in every one
// of 1,000 sequences (issue 37: jitter below the base made them shrink at the cap).
func TestBackoffNeverShrinks(t *testing.T) {
	for range 1000 {
		b := backoff{min: 30 * time.Millisecond, max: 5 * time.Second}
		waits := make([]time.Duration, 20)
		for i := range waits {
			waits[i] = b.next(0)
		}
		checkWaits(t, waits, 30*time.Millisecond, 5*time.Second)
		if waits[19] != 5*time.Second {
			t.Errorf("20th wait %v, want the 5 s cap", waits[19])
		}
		if t.Failed() {
			return
		}
	}
}

// TestBackoffAfterRetryAfter: the server's Retry-After is waited as given, and the backoff
// after it does not go below it (up to the cap).
func TestBackoffAfterRetryAfter(t *testing.T) {
	b := backoff{min: 30 * time.Millisecond, max: 5 * time.Second}
	if d := b.next(0); d > 40*time.Millisecond {
		t.Fatalf("first wait %v", d)
	}
	if d := b.next(2 * time.Second); d != 2*time.Second {
		t.Errorf("Retry-After 2 s waited %v", d)
	}
	if d := b.next(0); d < 2*time.Second || d > 5*time.Second {
		t.Errorf("wait after a 2 s Retry-After: %v, want within [2 s, 5 s]", d)
	}
	if d := b.next(10 * time.Second); d != 10*time.Second {
		t.Errorf("Retry-After 10 s waited %v", d)
	}
	if d := b.next(0); d != 5*time.Second {
		t.Errorf("wait after a 10 s Retry-After: %v, want the 5 s cap", d)
	}
}

// TestServerErrorsRetriedWithNonDecreasingDelays: a batch answered 503 twenty times, on the
// only connection, is sent again after waits that never shrink and stay within the cap;
// then it is acked, 20 retries counted.
func TestServerErrorsRetriedWithNonDecreasingDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []time.Time // of the first batch
		rc := memReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
			if n <= 20 {
				attempts = append(attempts, time.Now())
			}
			if n < 20 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return false
			}
			return true
		})
		w := newWriter(t, map[string]config.Storage{"s": writeTo("http://s.test")}, nil, func(c *config.Config) {
			c.WriteConcurrency, c.MaxRetryDuration = 1, 2*time.Minute
		})
		w.DrainTimeout = 2 * time.Minute
		inMemory(w, memNet{"s.test": rc})
		runFor(t, w, 200*time.Millisecond)
		r := w.Results("s")
		if r.AckedSamples != r.GeneratedSamples || r.Retries != 20 || r.RequestsByStatus["503"] != 20 || len(attempts) != 21 {
			t.Fatalf("account %+v, %d attempts: want 20 retries then all acked", r, len(attempts))
		}
		waits := make([]time.Duration, 20)
		for i := range waits {
			waits[i] = attempts[i+1].Sub(attempts[i])
		}
		checkWaits(t, waits, 30*time.Millisecond, 5*time.Second)
		t.Logf("waits %v", waits)
	})
}

// TestAnswerAtTheDeadlineCounts: an answer read as the drain's deadline ends ctx is the
// storage's answer, not a request given up on: a 204 that arrived with the deadline was
// counted pending, though the storage had stored the batch; a failed try then is canceled.
func TestAnswerAtTheDeadlineCounts(t *testing.T) {
	cfg := senderConfig{maxRetryDuration: time.Minute, minBackoff: time.Millisecond, maxBackoff: time.Second, requestTimeout: time.Second}
	for _, tc := range []struct {
		name string
		err  error
		want retried
	}{{"answered", nil, answered}, {"failed", context.Canceled, canceled}} {
		ctx, cancel := context.WithCancel(t.Context())
		ans, how := cfg.deliver(ctx, func(time.Duration) (answer, error) {
			cancel() // the deadline, as the answer is read
			return answer{status: http.StatusNoContent, written: -1}, tc.err
		}, func() {})
		if how != tc.want || (how == answered && ans.status != http.StatusNoContent) {
			t.Errorf("%s: %v with status %d, want %v", tc.name, how, ans.status, tc.want)
		}
	}
}
