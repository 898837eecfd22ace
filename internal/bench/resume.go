package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/verify"
)

// checkpointIn is the checkpoint in dir this run resumes from (issue 19): results.json marked
// partial, of the same config and startTime. Nil, with the reason for the log, when there is
// none to resume; an error when dir holds another run's checkpoint, which a fresh run would
// overwrite.
func checkpointIn(dir string, cfgJSON any, start time.Time, resumable string) (*results.Run, string, error) {
	if dir == "" {
		return nil, "", nil
	}
	path := filepath.Join(dir, "results.json")
	cp, err := results.ReadFile(path)
	switch {
	case err != nil || cp.Partial == nil:
		return nil, "", nil // none, or a finished run's (or unreadable) results: a new run replaces them
	case resumable != "":
		return nil, fmt.Sprintf("%s holds a checkpoint, not resumed: %s; a new run starts over it", path, resumable), nil
	case !cp.StartTime.Equal(start):
		return nil, "", fmt.Errorf("-out %s holds the checkpoint of a run started at %s, not at this config's startTime %s: use another -out, or move %s away to start over",
			dir, cp.StartTime.Format(time.RFC3339), start.UTC().Format(time.RFC3339), path)
	case !sameConfig(cp.Config, cfgJSON):
		return nil, "", fmt.Errorf("-out %s holds the checkpoint of a run with another config: resume with the same config, use another -out, or move %s away to start over", dir, path)
	}
	return cp, "", nil
}

// configOf is a config as results.json holds it after reading (maps, slices, strings,
// float64s), without generateWorkers: a pod restarted on a node with other cores resumes.
func configOf(cfg any) (any, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if m, ok := out.(map[string]any); ok {
		delete(m, "generateWorkers")
	}
	return out, nil
}

// sameConfig reports whether a checkpoint's config is cfg (both as configOf makes them).
func sameConfig(cpConfig, cfg any) bool {
	c, err := configOf(cpConfig)
	return err == nil && reflect.DeepEqual(c, cfg)
}

// resumable says why this run cannot resume from a checkpoint; "" when it can.
func (r *run) resumable() string {
	switch {
	case r.cfg.StartTime.IsZero():
		return "the config has no startTime (a run resumes on the clock it started on)"
	case r.cfg.History > 0:
		return "runs with history start over (their catch-up is not resumed)"
	case r.cfg.ScrapeModeOn():
		return "scrape mode starts over"
	case len(r.p.Config.RemoteStorages) == 0:
		return "the local storages tsbench starts are new and empty on every run"
	}
	return ""
}

// resumeCheckpoint resumes from the checkpoint in -out, if there is one of this run: see
// checkpointIn. It reports whether it did.
func (r *run) resumeCheckpoint(now time.Time) (bool, error) {
	cfgJSON, err := configOf(r.cfg.Redacted())
	if err != nil {
		return false, err
	}
	cp, note, err := checkpointIn(r.opts.Out, cfgJSON, r.start, r.resumable())
	if note != "" {
		r.log.Warn("checkpoint not resumed", "detail", note)
	}
	if err != nil || cp == nil {
		return false, err
	}
	return true, r.resume(cp, now)
}

// resume continues every part from the checkpoint cp at now: the write account, the query
// latencies, the freshness figures, the resource and write timelines; the time from the
// checkpoint to now is a gap.
func (r *run) resume(cp *results.Run, now time.Time) error {
	covered := cp.Partial.At.Sub(r.start)
	r.gaps = append(append([]results.Gap(nil), cp.Gaps...), resumeGap(cp, now, r.cfg.ScrapeInterval))
	r.writer.From = now
	r.obs.ResumeGenerator(cp.Generator, covered)
	r.accounting.first = append(r.accounting.first, cp.AccountingErrors...)
	r.resumedChecks = map[string]*results.Verify{}
	for _, s := range cp.Storages {
		r.resumedChecks[s.Name] = s.Verify
		if s.Write != nil {
			r.writer.Resume(s.Name, s.Write)
			r.timeline[s.Name] = &results.Timeline[results.WritePoint]{}
			r.timeline[s.Name].Restore(s.Write.Timeline)
		}
		if q := r.runners[s.Name]; q != nil && s.Query != nil {
			if err := q.Resume(s.Query); err != nil {
				return fmt.Errorf("resume %s's queries: %w", s.Name, err)
			}
		}
		if p := r.fresh[s.Name]; p != nil {
			if err := p.Resume(s.Freshness); err != nil {
				return fmt.Errorf("resume %s's freshness: %w", s.Name, err)
			}
		}
		r.obs.Resume(s.Name, s.Resources, covered)
		r.problems[s.Name] = append(r.problems[s.Name], s.Problems...)
		if s.ExitedAt != nil {
			r.exited[s.Name] = *s.ExitedAt
		}
	}
	r.last = now
	r.log.Info("resuming from the checkpoint", "checkpoint", cp.Partial.At.Format(time.RFC3339), "gap", now.Sub(cp.Partial.At).Round(time.Second))
	return nil
}

// resumeGap is the stretch a run resumed at now from the checkpoint cp leaves out: from the
// oldest sample the checkpoint had not settled to the restart (issue 29). The samples pending
// then are taken out of the account (remotewrite.Writer.Resume), and so were those still in
// an open batch or due and not yet generated: no one knows whether they were ever sent, so the
// read-back must not charge a storage with them. The checkpoint's lag (its time less the
// oldest sample not acked or dropped, its open batches' and the scrapes due and not yet
// generated included: remotewrite's lagLocked) says where they begin. A scrape interval more,
// or the largest schedule drift when longer, stays: a checkpoint written before the lag
// counted the scrapes not generated (issue 29) needs it, and it only reads back less.
func resumeGap(cp *results.Run, now time.Time, interval time.Duration) results.Gap {
	at := cp.Partial.At
	from := at
	var pending int64
	for _, s := range cp.Storages {
		w := s.Write
		if w == nil {
			continue
		}
		pending += w.PendingSamples
		margin := max(interval, time.Duration(w.MaxScheduleDriftSeconds*float64(time.Second)))
		if oldest := at.Add(-time.Duration(w.LagSeconds * float64(time.Second))).Add(-margin); oldest.Before(from) {
			from = oldest
		}
	}
	return results.Gap{
		From: from.UTC(), To: now.UTC(), Checkpoint: at,
		Reason: fmt.Sprintf("restarted after the checkpoint at %s, which had not settled the samples from %s on (%d pending): those and the samples scheduled until the restart are not read back, and only those acked or dropped by the checkpoint are in the account",
			at.Format(time.RFC3339), from.UTC().Format(time.RFC3339Nano), pending),
	}
}

// readBack reads back [from, to] less the gaps: what was written then is no one's to know.
func (r *run) readBack(ctx context.Context, v *verify.Verifier, from, to time.Time) map[string]*results.Verify {
	var parts []map[string]*results.Verify
	for _, sp := range spansAround(r.gaps, from, to) {
		parts = append(parts, v.Run(ctx, sp[0], sp[1]))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	out := map[string]*results.Verify{}
	for _, name := range r.cfg.StorageNames() {
		var vs []*results.Verify
		for _, p := range parts {
			if p[name] != nil {
				vs = append(vs, p[name])
			}
		}
		if len(vs) > 0 {
			out[name] = results.CombineVerify(vs...)
		}
	}
	return out
}

// sinceLastGap is from, or the end of the last gap when later: the reads that look at the end
// of the run (HA pairs, native histograms, exemplars) must not expect what a gap left unsent.
func sinceLastGap(gaps []results.Gap, from time.Time) time.Time {
	if n := len(gaps); n > 0 {
		return results.Later(from, gaps[n-1].To)
	}
	return from
}

// spansAround is [from, to] less the gaps (in time order), as spans [start, end].
func spansAround(gaps []results.Gap, from, to time.Time) [][2]time.Time {
	var out [][2]time.Time
	for _, g := range gaps {
		if end := results.Earlier(g.From, to); end.After(from) {
			out = append(out, [2]time.Time{from, end})
		}
		from = results.Later(from, g.To)
	}
	if to.After(from) {
		out = append(out, [2]time.Time{from, to})
	}
	return out
}
