package bench

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/tsbench/tsbench/internal/results"
)

// longRunMetrics are what a person watching a run of days needs beside the write and query
// metrics: when results were last saved.
type longRunMetrics struct {
	checkpoint prometheus.Gauge
}

func newLongRunMetrics(reg prometheus.Registerer) *longRunMetrics {
	f := promauto.With(reg)
	return &longRunMetrics{
		checkpoint: f.NewGauge(prometheus.GaugeOpts{
			Name: "tsbench_bench_checkpoint_timestamp_seconds",
			Help: "When results.json was last rewritten as a checkpoint (checkpointInterval); 0 before the first.",
		}),
	}
}

// checkpoints rewrites results.json, marked partial, every checkpointInterval until ctx
// ends: a run killed by SIGKILL or the OOM killer leaves its figures up to the last one.
func (r *run) checkpoints(ctx context.Context) {
	t := time.NewTicker(r.cfg.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.checkpoint(now)
		}
	}
}

// checkpoint writes the results so far to -out, atomically.
func (r *run) checkpoint(now time.Time) {
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
	r.log.Debug("checkpoint written", "path", path)
}
