package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/tsbench/tsbench/internal/observe"
)

// longRunMetrics are what a person watching a run of days needs beside the write and query
// metrics: when results were last saved, and tsbench's own schedule drift.
type longRunMetrics struct {
	checkpoint prometheus.Gauge
	drift      *prometheus.GaugeVec
}

func newLongRunMetrics(reg prometheus.Registerer) *longRunMetrics {
	f := promauto.With(reg)
	return &longRunMetrics{
		checkpoint: f.NewGauge(prometheus.GaugeOpts{
			Name: "tsbench_bench_checkpoint_timestamp_seconds",
			Help: "When results.json was last rewritten as a checkpoint (checkpointInterval); 0 before the first.",
		}),
		drift: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tsbench_bench_schedule_drift_max_seconds",
			Help: "The largest delay so far from a live sample's scheduled time to its batch queued to send (write.maxScheduleDriftSeconds).",
		}, []string{"storage"}),
	}
}

// progressHead begins a progress line with what a person watching a long or endless run needs
// of tsbench itself: the time since the start, its largest schedule drift over the storages,
// its live heap, and how long ago results.json was last saved.
func (r *run) progressHead(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%6s] tsbench", now.Sub(r.start).Round(time.Second))
	drift := 0.0
	for _, name := range r.cfg.StorageNames() {
		if w := r.writer.Results(name); w != nil {
			drift = max(drift, w.MaxScheduleDriftSeconds)
			r.m.drift.WithLabelValues(name).Set(w.MaxScheduleDriftSeconds)
		}
	}
	fmt.Fprintf(&b, " drift max %.2fs", drift)
	if h := observe.HeapLive(); h != nil {
		fmt.Fprintf(&b, ", heap %.0f MiB", *h/(1<<20))
	}
	r.mu.Lock()
	at := r.checkpointAt
	r.mu.Unlock()
	if !at.IsZero() {
		fmt.Fprintf(&b, ", checkpoint %s ago", now.Sub(at).Round(time.Second))
	}
	b.WriteString(";")
	return b.String()
}
