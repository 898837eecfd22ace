package remotewrite

import (
	"cmp"
	"maps"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// watchLag refreshes the lag gauges and the maximum lag every second.
func (w *Writer) watchLag(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			w.updateLag()
		}
	}
}

func (w *Writer) updateLag() {
	for _, s := range w.sinks {
		s.mu.Lock()
		lag := w.lagLocked(s)
		if s.liveLocked() {
			s.maxLag = max(s.maxLag, lag)
		}
		pending := s.pending
		s.mu.Unlock()
		w.m.lag.WithLabelValues(s.name).Set(lag)
		w.m.pending.WithLabelValues(s.name).Set(float64(pending))
	}
}

// lagLocked adds the generator's own delay to the storage's queue lag: samples generated but
// not yet in a batch, and scrapes due and not yet generated while the lane generates, are late
// for every storage alike. A checkpoint's lag so says where its unsettled samples begin
// (bench's resumeGap).
func (w *Writer) lagLocked(s *sink) float64 {
	now := time.Now().UnixMilli()
	lag := s.lagLocked(now)
	ln := w.laneOf[s.name]
	for i := range ln.openOldest {
		if o := ln.openOldest[i].Load(); o > 0 {
			lag = max(lag, float64(now-o)/1000)
		}
	}
	if ln.stopped.Load() != 0 {
		return lag
	}
	end := ln.end.Load()
	for i := range ln.cursor {
		if c := ln.cursor[i].Load(); c > 0 && (end == 0 || c < end) {
			lag = max(lag, float64(now-c)/1000)
		}
	}
	return lag
}

// Acked is how many samples the storage name has acknowledged so far (0 for an unknown name):
// the one figure the observer needs every interval, without Results' side effect on the
// maximum lag.
func (w *Writer) Acked(name string) int64 {
	s, ok := w.byName[name]
	if !ok {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked + w.ackedBase(name)
}

// Results returns a consistent snapshot of one storage's account.
//
// Once generation has stopped, GeneratedSamples is the generator's own count (the values and
// staleness markers Scrape reported, × copies), taken at the source apart from the queues: a
// sample lost between the generator and the queue then unbalances the account, which the
// run reports as an accounting error. Before that, samples still in an open batch are not
// yet anywhere in the account, so GeneratedSamples is what reached the queues.
func (w *Writer) Results(name string) *results.Write {
	s, ok := w.byName[name]
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lag := w.lagLocked(s)
	stopped := w.stop.Load() != 0
	if stopped && s.pending == 0 {
		lag = 0
	}
	if s.liveLocked() {
		s.maxLag = max(s.maxLag, lag)
	}
	r := &results.Write{
		GeneratedSamples: s.generated, AckedSamples: s.acked, PendingSamples: s.pending,
		DroppedSamples: cloneMap(s.dropped), RequestsByStatus: cloneMap(s.requests),
		Retries: s.retries, BytesSent: s.bytesSent, MaxLagSeconds: s.maxLag, LagSeconds: lag,
		Copies: w.copies[name],
		TargetSamplesPerSecond: float64(samplesPerScrape(w.work)*w.work.Targets()*w.copies[name]) /
			w.work.ScrapeInterval().Seconds(),
	}
	ln := w.laneOf[name]
	if stopped {
		r.GeneratedSamples = ln.produced.Load() * int64(w.copies[name])
	}
	r.Protocol, r.UnconfirmedSamples = string(s.proto), s.unconfirmed
	if ms := w.metaSend[name]; ms != nil {
		r.Metadata = ms.results()
	}
	r.MaxScheduleDriftSeconds = float64(ln.maxDrift.Load()) / 1000
	r.Notes, r.Limits = s.notesLocked(), s.limits.results()
	start := w.start.Load()
	if start != 0 && s.lastAck > start {
		r.AchievedSamplesPerSecond = float64(s.acked) / (float64(s.lastAck-start) / 1000)
	}
	// After this process's own rate and limits: the checkpoint's part is added to them.
	w.withBase(name, r)
	if hw, ok := w.work.(heldWorkload); ok {
		late, ooo := hw.HeldKinds()
		if late {
			r.Late = s.heldResultsLocked(heldLate, ln.heldProduced[heldLate].Load()*int64(w.copies[name]), stopped)
		}
		if ooo {
			r.OutOfOrder = s.heldResultsLocked(heldOOO, ln.heldProduced[heldOOO].Load()*int64(w.copies[name]), stopped)
		}
	}
	if ln.catchUp {
		h := &results.WriteHistory{GeneratedSamples: s.histGenerated, AckedSamples: s.histAcked, CaughtUp: s.histDone != 0}
		if h.CaughtUp {
			h.CaughtUpTime = time.UnixMilli(s.histDone).UTC()
		}
		if end := cmp.Or(s.histDone, time.Now().UnixMilli()); start != 0 && end > start {
			h.Seconds = float64(end-start) / 1000
			h.SamplesPerSecond = float64(s.histAcked) / h.Seconds
		}
		r.History = h
	}
	return r
}

func cloneMap(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	maps.Copy(c, m)
	return c
}

// WorkloadStats returns the series created by churn and the staleness markers written so
// far: one marker per series a churned target left, and as many new series.
func (w *Writer) WorkloadStats() (seriesCreated, staleMarkers int64) {
	var n, created int64
	for _, ln := range w.lanes { // with history, the lane that got furthest
		n = max(n, ln.stale.Load())
		created = max(created, ln.created.Load())
	}
	if hw, ok := w.work.(heldWorkload); ok && hw.SeriesOn() {
		// Events create series without markers (a target joins) and write markers without
		// creating (one leaves): counted apart.
		return created, n
	}
	return n, n
}
