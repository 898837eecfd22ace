package bench

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// The live report (issue 31): while the run goes, tsbench's HTTP address (-httpListenAddr)
// serves at / the report as it stands, the page report.html is at the end with a banner that
// says what is still running, reloading itself. It is rendered in the background from the
// results of each checkpoint, and every LiveEvery when no checkpoint comes as often, and
// served as the last rendered bytes: a request never renders, so a reader cannot load the
// run, and memory holds one page and one pending results.

// LiveReport renders the live page: the report of res with banner at its top, reloading
// itself every refresh. cli passes report.WriteLiveHTML (no stage of a run imports report).
type LiveReport func(w io.Writer, res *results.Run, banner string, refresh time.Duration) error

// liveEvery is how often the live page is updated at most a minute apart (issue 31).
const liveEvery = time.Minute

// liveUpdate is one state of the run for the live page.
type liveUpdate struct {
	res   *results.Run
	at    time.Time // of the results
	state string    // what is still running, in words
	last  bool      // the load stopped: no update follows but the final report
}

// live renders the live page in the background and serves the last one.
type live struct {
	render LiveReport
	every  time.Duration // between updates: the page's refresh
	log    *slog.Logger
	wake   chan struct{} // 1: an update waits in next

	mu   sync.Mutex    // guards next, page, note
	next *liveUpdate   // the newest update not yet rendered; a newer one replaces it
	page []byte        // the last page rendered
	note string        // what the page says before the first one
	done chan struct{} // closed when run returns
}

func newLive(render LiveReport, every time.Duration, log *slog.Logger) *live {
	return &live{
		render: render, every: every, log: log, wake: make(chan struct{}, 1), done: make(chan struct{}),
		note: "the run is starting: the report appears here when the load has started",
	}
}

// update hands u to the renderer and returns at once; an update not yet rendered is dropped
// for it.
func (l *live) update(u liveUpdate) {
	l.mu.Lock()
	l.next = &u
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // the renderer is woken already and takes next
	}
}

// setNote is what the page says while it has no report to show.
func (l *live) setNote(note string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.note = note
}

// run renders each update until ctx ends.
func (l *live) run(ctx context.Context) {
	defer close(l.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		}
		l.mu.Lock()
		u := l.next
		l.next = nil
		l.mu.Unlock()
		if u == nil {
			continue
		}
		took := time.Now()
		var b bytes.Buffer
		if err := l.render(&b, u.res, l.banner(*u), l.every); err != nil {
			l.log.Error("cannot render the live report; the last one is still served", "err", err)
			continue
		}
		l.mu.Lock()
		l.page = b.Bytes()
		l.mu.Unlock()
		l.log.Debug("live report rendered", "as_of", u.at.UTC().Format(time.RFC3339), "bytes", b.Len(), "took", time.Since(took).Round(time.Millisecond))
	}
}

// banner says what the page shows and what is still running, plainly.
func (l *live) banner(u liveUpdate) string {
	next := fmt.Sprintf("Next update by %s (this page reloads itself every %s); the final report.html is written when the run ends.",
		u.at.Add(l.every).UTC().Format("15:04:05Z"), l.every.Round(time.Second))
	if u.last {
		next = "No update follows: the final report.html is written when the run ends, and this address stops serving it."
	}
	return fmt.Sprintf("live: run in progress, as of %s. Still running: %s. %s", u.at.UTC().Format("15:04:05Z"), u.state, next)
}

// ServeHTTP serves the last page rendered, or a note that reloads itself until there is one.
func (l *live) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	l.mu.Lock()
	page, note := l.page, l.note
	l.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if page == nil {
		refresh := min(l.every, 5*time.Second)
		page = fmt.Appendf(nil, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="%d"><title>tsbench: live report</title></head><body><p class="live">live: %s.</p></body></html>`,
			max(1, int(refresh.Seconds())), html.EscapeString(note))
	}
	_, _ = w.Write(page)
}

// liveState says what of the run is still running at now: the load, for how long yet, and
// with history which storages still catch up.
func (r *run) liveState(now time.Time) string {
	var parts []string
	switch {
	case r.cfg.History > 0 && r.writes():
		var catching, caught []string
		for _, name := range r.cfg.StorageNames() {
			if r.cfg.RemoteStorages[name].DisableWrite {
				continue
			}
			select {
			case <-r.writer.CaughtUp(name):
				caught = append(caught, name)
			default:
				catching = append(catching, name)
			}
		}
		if len(catching) > 0 {
			parts = append(parts, fmt.Sprintf("history: %s catching up with the workload's clock", strings.Join(catching, ", ")))
		}
		if len(caught) > 0 {
			load := "until interrupted"
			if r.cfg.Duration > 0 {
				load = fmt.Sprintf("for %s after each caught up", r.cfg.Duration)
			}
			parts = append(parts, fmt.Sprintf("the live load on %s (%s)", strings.Join(caught, ", "), load))
		}
	case r.cfg.Duration > 0:
		end := r.start.Add(r.cfg.Duration)
		parts = append(parts, fmt.Sprintf("the load, %s of %s, until %s", now.Sub(r.start).Round(time.Second), r.cfg.Duration, end.UTC().Format("15:04:05Z")))
	default:
		parts = append(parts, fmt.Sprintf("the load, %s so far, until interrupted", now.Sub(r.start).Round(time.Second)))
	}
	if r.cfg.VerifyInterval > 0 && r.cfg.VerifySamples > 0 && r.writes() {
		parts = append(parts, fmt.Sprintf("the read-back every %s", r.cfg.VerifyInterval))
	}
	return strings.Join(parts, "; ")
}

// liveUpdates updates the live page at once and then every r.live.every, unless the
// checkpoints, which update it too, come at least as often; until ctx ends.
func (r *run) liveUpdates(ctx context.Context) {
	r.liveNow(time.Now(), nil)
	if r.checkpointing() && r.cfg.CheckpointInterval <= r.live.every {
		return
	}
	every(ctx, r.live.every, func(now time.Time) { r.liveNow(now, nil) })
}

// liveNow updates the live page with res, the results as of now (nil: assembled here).
func (r *run) liveNow(now time.Time, res *results.Run) {
	if r.live == nil {
		return
	}
	if res == nil {
		res = r.results(nil)
		res.Partial = &results.Partial{At: now.UTC(), Reason: "live report"}
	}
	r.live.update(liveUpdate{res: res, at: now, state: r.liveState(now)})
}

// liveLoadStopped updates the live page when the load has stopped: what follows is the drain,
// the read-back and the final report.
func (r *run) liveLoadStopped(now time.Time) {
	if r.live == nil {
		return
	}
	res := r.results(nil)
	res.Partial = &results.Partial{At: now.UTC(), Reason: "live report"}
	state := fmt.Sprintf("the load stopped at %s: draining what is pending (at most %s), then the read-back at the end", now.UTC().Format("15:04:05Z"), r.opts.DrainTimeout)
	r.live.update(liveUpdate{res: res, at: now, state: state, last: true})
}

// checkpointing reports whether the run writes checkpoints.
func (r *run) checkpointing() bool {
	return r.cfg.CheckpointInterval > 0 && r.opts.Out != ""
}

// liveInterval is how often the live page is updated: every checkpoint when they come at
// least a minute apart, else every minute (Options.LiveEvery).
func liveInterval(cfgCheckpoint time.Duration, opts Options) time.Duration {
	every := opts.LiveEvery
	if cfgCheckpoint > 0 && opts.Out != "" {
		every = min(every, cfgCheckpoint)
	}
	return every
}
