package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/tsbench/tsbench/internal/observe"
	"github.com/tsbench/tsbench/internal/results"
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

// checkpoints rewrites results.json, marked partial, every checkpointInterval until ctx
// ends: a run killed by SIGKILL or the OOM killer leaves its figures up to the last one.
func (r *run) checkpoints(ctx context.Context) {
	every(ctx, r.cfg.CheckpointInterval, r.checkpoint)
}

// checkpoint writes the results so far to -out, atomically.
func (r *run) checkpoint(now time.Time) {
	took := time.Now()
	res := r.results(nil)
	res.Partial = &results.Partial{At: now.UTC(), Reason: "checkpoint"}
	path, err := res.WriteFile(r.opts.Out)
	if err != nil {
		r.log.Error("cannot write the checkpoint; the run goes on", "dir", r.opts.Out, "err", err)
		return
	}
	r.m.checkpoint.Set(float64(now.UnixMilli()) / 1000)
	r.mu.Lock()
	r.checkpointAt = now
	r.mu.Unlock()
	r.log.Debug("checkpoint written", "path", path, "took", time.Since(took).Round(time.Millisecond))
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
