package observe

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHistoryMatchesAllObservations: a history that folds its old observations gives the same
// summary as every observation kept, the load's end learned only when it comes (issue 19).
func TestHistoryMatchesAllObservations(t *testing.T) {
	loadEnd := t0.Add(995 * time.Second)
	var all []rates
	var h history
	for i := range 120 {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		r := rates{at: at, missing: map[string]string{}, cpu: new(float64(i % 7)), rss: new(float64(1000 + i)), disk: new(float64(i * i))}
		if i == 0 {
			r.cpu, r.missing[figCPU] = nil, needsTwo
		}
		known := time.Time{}
		if at.After(loadEnd) {
			known = loadEnd
		}
		all = append(all, r)
		h.add(r, known)
	}
	s := h.summary(loadEnd)
	if diff := cmp.Diff(summarise(all, loadEnd), s.result()); diff != "" {
		t.Errorf("(-all kept +history):\n%s", diff)
	}
	if len(h.recent) != keepRecent || h.count() != 120 {
		t.Errorf("history keeps %d of %d observations, want %d of 120", len(h.recent), h.count(), keepRecent)
	}
}
