package remotewrite

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/tsbench/tsbench/internal/workload"
)

// genWorker is one generate worker of a lane: its targets, in phase order, their appenders,
// and its cursor in their scrape schedule.
type genWorker struct {
	w      *Writer
	ln     *lane
	id     int
	behind bool // the lane catches up and this worker has not yet
	// targets are the worker's targets in phase order: they come due one after another,
	// cycle after cycle.
	targets []int
	// apps has one appender per shard this worker feeds and HA replica (ha.go), nil where
	// no target of the worker goes: each replica's samples travel in requests of their own.
	apps   []*shardAppender
	appIdx []int               // by target position: its appender's index in apps
	appOf  []workload.Appender // by target position: what the generator gets
	// Of a workload that holds samples back (series.go), nil without: each appender's held
	// kinds, and by target position the generator's appender of each.
	hw            heldWorkload
	heldOf        []heldAppenders
	lateOf, oooOf []workload.Appender
	order         []*shardAppender // in flush order: the on-time appenders, then the held ones
	pos           int              // the next scrape: targets[pos]'s k-th
	k             int64
	need          int64 // a scrape's values and staleness markers, the room it waits for
}

// newGenWorker gives worker its targets and their appenders, its cursor at From.
func (w *Writer) newGenWorker(ln *lane, worker int) *genWorker {
	g := &genWorker{w: w, ln: ln, id: worker, behind: ln.catchUp, need: int64(2 * samplesPerScrape(w.work))}
	for t := range w.work.Targets() {
		if workerOf(t, w.shards, w.workers) == worker {
			g.targets = append(g.targets, t)
		}
	}
	slices.SortFunc(g.targets, func(a, b int) int {
		return int(w.work.ScrapeTime(a, 0) - w.work.ScrapeTime(b, 0))
	})
	ha := haReplicas(w.work)
	g.apps = make([]*shardAppender, w.shards*ha)
	g.appIdx = make([]int, len(g.targets))
	g.appOf = make([]workload.Appender, len(g.targets))
	for i, t := range g.targets {
		shard := shardOf(t, w.shards)
		a := appenderIndex(w.work, t, shard, ha)
		if g.apps[a] == nil {
			g.apps[a] = w.newShardAppender(ln, shard, &ln.openOldest[worker*w.shards*ha+a], g.behind)
		}
		g.appIdx[i], g.appOf[i] = a, g.apps[a].appender()
	}
	g.heldOf = make([]heldAppenders, len(g.apps))
	if hw, _ := w.work.(heldWorkload); hw != nil && hw.SeriesOn() { // else the default run: nothing held, no events
		g.hw = hw
		lateOn, oooOn := hw.HeldKinds()
		g.lateOf, g.oooOf = make([]workload.Appender, len(g.targets)), make([]workload.Appender, len(g.targets))
		for i := range g.targets {
			a := g.appIdx[i]
			if lateOn {
				g.lateOf[i] = w.heldAppender(&g.heldOf[a], heldLate, g.apps[a])
			}
			if oooOn {
				g.oooOf[i] = w.heldAppender(&g.heldOf[a], heldOOO, g.apps[a])
			}
		}
	}
	g.order = slices.Concat(g.apps, heldAppendersOf(g.heldOf))
	var from int64
	if !w.From.IsZero() {
		from = w.From.UnixMilli()
	}
	g.pos, g.k = skipBefore(from, len(g.targets), func(p int, k int64) int64 { return w.work.ScrapeTime(g.targets[p], k) })
	return g
}

// generate walks the scrape schedule of the worker's targets in time order until ctx ends
// or the lane's end. It returns the scheduled time (ms) of the first scrape it did not
// generate. A worker of a lane catching up makes every scrape due at once, waiting for room
// before each (lane.waitRoom); once it finds nothing due it has caught up, and goes on at the
// wall clock's pace with the same cursor.
func (w *Writer) generate(ctx context.Context, ln *lane, worker int) (nextDue int64) {
	g := w.newGenWorker(ln, worker)
	ln.cursor[worker].Store(g.next())
	if ln.catchUp {
		first := g.next()
		if first == math.MaxInt64 { // no targets
			first = 0
		}
		ln.setDue(worker, first)
		defer ln.setDue(worker, 0)
	}
	step := min(100*time.Millisecond, w.work.ScrapeInterval())
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			if end := ln.end.Load(); end > 0 {
				if now := time.Now().UnixMilli(); now >= end {
					g.scrape(ctx, now, false) // the load ended at its end: what was due before it, exactly
				}
			}
			g.flushAll(math.MaxInt64)
			return g.next()
		case <-timer.C:
		}
		now := time.Now().UnixMilli()
		// At the load's end, what was due before it, exactly, even with ctx done meanwhile:
		// a worker behind (a process started late) once made one scrape of it and stopped.
		end := ln.end.Load()
		ended := end > 0 && now >= end
		g.scrape(ctx, now, !ended)
		if ended {
			g.flushAll(math.MaxInt64)
			return g.next()
		}
		g.flushAll(now - w.FlushAfter.Milliseconds())
		timer.Reset(step)
	}
}

// next is the scheduled time (ms) of the worker's next scrape; MaxInt64 without targets.
func (g *genWorker) next() int64 {
	if len(g.targets) == 0 {
		return math.MaxInt64
	}
	return g.w.work.ScrapeTime(g.targets[g.pos], g.k)
}

// scrape generates every scrape due at or before limit and before the lane's end, in time
// order. A worker still behind looks at the clock again when it reaches limit, waits for
// room before each scrape, and has caught up when it finds nothing due.
func (g *genWorker) scrape(ctx context.Context, limit int64, stopOnCancel bool) {
	ln := g.ln
	for {
		due := g.next()
		if end := ln.end.Load(); end > 0 && due >= end {
			return
		}
		if due > limit {
			if !g.behind {
				return
			}
			if limit = time.Now().UnixMilli(); due > limit {
				g.caughtUp()
			}
			continue
		}
		// Until the lane's history has settled, a worker that caught up waits too: its live
		// samples must neither push the history out (queue_full) nor run ahead of it.
		if ln.catchUp && ln.caughtUpAt.Load() == 0 && stopOnCancel && !ln.waitRoom(ctx, g.id, g.apps, due, g.need, g.w.skew) {
			return
		}
		values, stale := g.w.work.Scrape(g.appOf[g.pos], g.targets[g.pos], g.k)
		ln.produced.Add(int64(values + stale))
		ln.stale.Add(int64(stale))
		if g.hw != nil {
			ln.held(g.hw, g.heldOf[g.appIdx[g.pos]], g.lateOf[g.pos], g.oooOf[g.pos], g.targets[g.pos], g.k, due)
		}
		if g.pos++; g.pos == len(g.targets) {
			g.pos, g.k = 0, g.k+1
		}
		// After the scrape's samples are in its appender (openOldest set): Settled reads the
		// cursor first, so a scrape is always in one of the places it looks.
		ln.cursor[g.id].Store(g.next())
		if stopOnCancel && ctx.Err() != nil {
			return
		}
	}
}

// flushAll sends the batches whose oldest sample is at or before olderThan, and counts the
// samples refused for invalid labels, which are in no batch. The held kinds' batches go
// after the on-time ones, so a sample held back follows the newer ones sent before it.
func (g *genWorker) flushAll(olderThan int64) {
	for _, a := range g.order {
		if a == nil {
			continue
		}
		a.dropInvalid()
		if n, oldest, _ := a.enc.open(); n > 0 && oldest <= olderThan {
			a.flush()
		}
	}
}

// caughtUp sends the worker's last history batches; what it generates from now on is live.
func (g *genWorker) caughtUp() {
	g.flushAll(math.MaxInt64)
	for _, a := range g.order {
		if a != nil {
			a.history = false
		}
	}
	g.behind = false
	g.ln.workerCaughtUp(g.w.duration)
}

// shardOf spreads targets over shards by a hash. A target's series all go through its shard,
// which keeps each series' samples in order; sharding by target rather than by series hash
// lets each worker generate its targets with no lock and no per-sample hash. The cost:
// with few targets per shard, the shards' loads differ, and with fewer targets than shards
// some connections carry nothing.
func shardOf(target, shards int) int {
	h := uint64(target)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	h ^= h >> 29
	return int(h % uint64(shards))
}

// workerOf is the generate worker of a target. With no more workers than shards, a worker
// generates whole shards (shard mod workers), so each shard's batches come from one worker
// and fill up sooner; with more, a shard's targets are split by another hash among the
// workers w ≡ shard (mod shards). Either way a target stays with one worker and one shard,
// and a worker pushes its batches in order: each series' samples reach its shard's queue,
// and its sender, in time order.
func workerOf(target, shards, workers int) int {
	shard := shardOf(target, shards)
	if workers <= shards {
		return shard % workers
	}
	n := (workers - shard + shards - 1) / shards // workers w < workers with w ≡ shard (mod shards)
	h := uint64(target)*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	h ^= h >> 31
	return shard + shards*int(h%uint64(n))
}

// samplesPerScrape is a target's samples per scrape: the workload's SamplesPerScrape where it
// has one (native histograms change it), else its series.
func samplesPerScrape(wl Workload) int {
	if s, ok := wl.(interface{ SamplesPerScrape() int }); ok {
		return s.SamplesPerScrape()
	}
	return wl.SeriesPerTarget()
}
