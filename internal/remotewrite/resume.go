package remotewrite

import (
	"maps"
	"slices"

	"github.com/tsbench/tsbench/internal/results"
)

// Resume continues a storage's account from a checkpoint (issue 19): Results and Acked add
// base to what this process counts. The samples base had pending are left out (generated
// less its pending): what became of them between the checkpoint and the restart no one
// knows, and the run's gap says so. Call it before Run, with From set to the restart.
func (w *Writer) Resume(name string, base *results.Write) {
	if w.bases == nil {
		w.bases = map[string]*results.Write{}
	}
	b := *base
	b.GeneratedSamples -= b.PendingSamples
	b.PendingSamples = 0
	b.DroppedSamples, b.RequestsByStatus = maps.Clone(b.DroppedSamples), maps.Clone(b.RequestsByStatus)
	w.bases[name] = &b
}

// withBase adds the checkpoint's account of name to r, this process's.
func (w *Writer) withBase(name string, r *results.Write) {
	b := w.bases[name]
	if b == nil {
		return
	}
	// The rate over both parts: each part's acked over its own time.
	secs := func(w *results.Write) float64 {
		if w.AchievedSamplesPerSecond <= 0 {
			return 0
		}
		return float64(w.AckedSamples) / w.AchievedSamplesPerSecond
	}
	if total := secs(b) + secs(r); total > 0 {
		r.AchievedSamplesPerSecond = float64(b.AckedSamples+r.AckedSamples) / total
	}
	r.GeneratedSamples += b.GeneratedSamples
	r.AckedSamples += b.AckedSamples
	r.DroppedSamples = results.AddCounts(r.DroppedSamples, b.DroppedSamples)
	r.RequestsByStatus = results.AddCounts(r.RequestsByStatus, b.RequestsByStatus)
	r.Retries += b.Retries
	r.BytesSent += b.BytesSent
	r.UnconfirmedSamples += b.UnconfirmedSamples
	r.MaxLagSeconds = max(r.MaxLagSeconds, b.MaxLagSeconds)
	r.MaxScheduleDriftSeconds = max(r.MaxScheduleDriftSeconds, b.MaxScheduleDriftSeconds)
	r.Limits = results.AddLimits(slices.Clone(b.Limits), r.Limits) // a clone: Results runs at every checkpoint
}

// ackedBase is what the checkpoint counted name as having acked.
func (w *Writer) ackedBase(name string) int64 {
	if b := w.bases[name]; b != nil {
		return b.AckedSamples
	}
	return 0
}

// skipBefore is the first scrape position at or after from (unix ms; 0: none skipped) of a
// worker whose targets, in phase order, are scheduled by at(pos, k).
func skipBefore(from int64, n int, at func(pos int, k int64) int64) (pos int, k int64) {
	if from <= 0 || n == 0 {
		return 0, 0
	}
	for at(n-1, k) < from { // whole cycles first: a restart at hour 20 skips 7,200, not millions
		k++
	}
	for at(pos, k) < from {
		if pos++; pos == n {
			pos, k = 0, k+1
		}
	}
	return pos, k
}
