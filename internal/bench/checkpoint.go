package bench

import (
	"context"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

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
	r.liveNow(now, res) // the live report as of this checkpoint (live.go)
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
