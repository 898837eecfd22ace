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
	"sync/atomic"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// The live report (issue 31): while the run goes, tsbench's HTTP address (-httpListenAddr)
// serves at / the report as it stands, the page report.html is at the end with a banner that
// says what is still running, reloading itself. It is rendered in the background from the
// results of each checkpoint, or of each progress line when no checkpoint comes as often, and
// served as the last rendered bytes: a request never renders, so a reader cannot load the
// run, and memory holds one page and one pending results. When the run has ended and its
// report is written, the address answers for LiveGrace more with that report, which no
// longer reloads itself, and where it is (issue 39).

// LiveReport renders the live page: the report of res with banner at its top, reloading
// itself every refresh. cli passes report.WriteLiveHTML (no stage of a run imports report).
type LiveReport func(w io.Writer, res *results.Run, banner string, refresh time.Duration) error

// liveUpdate is one state of the run for the live page.
type liveUpdate struct {
	res   *results.Run
	at    time.Time // of the results
	state string    // what is still running, in words
	last  bool      // the load stopped: no update follows but the final report
	// interrupted is set when the load stopped on an interrupt: the address stops answering
	// with the run, no final report is shown.
	interrupted bool
	// ended is set on the final report, served once the run has ended: report is where it
	// was written ("" if it was not), until when the address stops answering.
	ended  bool
	report string
	until  time.Time
}

// live renders the live page in the background and serves the last one.
type live struct {
	render LiveReport
	every  time.Duration // between updates: the page's refresh
	grace  time.Duration // Options.LiveGrace
	log    *slog.Logger
	wake   chan struct{} // 1: an update waits in next
	// watched is set once a page has been served: someone reads it, and gets the final
	// report after the run.
	watched atomic.Bool

	mu   sync.Mutex    // guards next, page, note
	next *liveUpdate   // the newest update not yet rendered; a newer one replaces it
	page []byte        // the last page rendered
	note string        // what the page says before the first one
	done chan struct{} // closed when run returns
}

func newLive(render LiveReport, every, grace time.Duration, log *slog.Logger) *live {
	return &live{
		render: render, every: every, grace: grace, log: log, wake: make(chan struct{}, 1), done: make(chan struct{}),
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
		refresh := l.every
		if u.ended {
			refresh = 0 // the final report: a reader keeps it after the address stops answering
		}
		var b bytes.Buffer
		if err := l.render(&b, u.res, l.banner(*u), refresh); err != nil {
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
	if u.ended {
		where := "its report could not be written (tsbench's output says why)"
		if u.report != "" {
			where = "the report is at " + u.report
		}
		return fmt.Sprintf("this run has ended; %s. This page shows that report and no longer reloads itself; this address stops answering at %s.",
			where, u.until.UTC().Format("15:04:05Z"))
	}
	next := fmt.Sprintf("Next update by %s (this page reloads itself every %s); the final report.html is written when the run ends.",
		u.at.Add(l.every).UTC().Format("15:04:05Z"), l.every.Round(time.Second))
	switch {
	case u.last && l.grace > 0 && !u.interrupted:
		next = fmt.Sprintf("No update follows but the final report.html, which this page shows when the run ends, for %s.", l.grace)
	case u.last:
		next = "No update follows: the final report.html is written when the run ends, and this address stops serving it."
	}
	return fmt.Sprintf("live: run in progress, as of %s. Still running: %s. %s", u.at.UTC().Format("15:04:05Z"), u.state, next)
}

// ServeHTTP serves the last page rendered, or a note that reloads itself until there is one.
func (l *live) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	l.watched.Store(true)
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
	if r.checksAhead(now) {
		parts = append(parts, fmt.Sprintf("the read-back every %s", r.cfg.VerifyInterval))
	}
	return strings.Join(parts, "; ")
}

// checksAhead reports whether a read-back check during the load is still to come at now:
// they come every verifyInterval from the start (with history, from the moment every storage
// caught up, each storage's load lasting duration after it), until the load ends.
func (r *run) checksAhead(now time.Time) bool {
	switch {
	case r.cfg.VerifyInterval <= 0 || r.cfg.VerifySamples <= 0 || !r.writes():
		return false
	case r.cfg.Duration == 0:
		return true
	case r.cfg.History > 0:
		return r.cfg.Duration > r.cfg.VerifyInterval
	}
	next := (now.Sub(r.start)/r.cfg.VerifyInterval + 1) * r.cfg.VerifyInterval
	return next < r.cfg.Duration
}

// checkpointsUpdateLive reports whether the checkpoints, which update the live page, come
// at least as often as the progress lines, which update it otherwise.
func (r *run) checkpointsUpdateLive() bool {
	return r.checkpointing() && r.cfg.CheckpointInterval <= r.opts.ProgressEvery
}

// liveNow updates the live page with res, the results as of now (nil: assembled here).
func (r *run) liveNow(now time.Time, res *results.Run) {
	if r.http.live == nil {
		return
	}
	if res == nil {
		res = r.results(nil)
		res.Partial = &results.Partial{At: now.UTC(), Reason: "live report"}
	}
	r.http.live.update(liveUpdate{res: res, at: now, state: r.liveState(now)})
}

// liveLoadStopped updates the live page when the load has stopped, on an interrupt or not:
// what follows is the drain, the read-back and the final report.
func (r *run) liveLoadStopped(now time.Time, interrupted bool) {
	if r.http.live == nil {
		return
	}
	res := r.results(nil)
	res.Partial = &results.Partial{At: now.UTC(), Reason: "live report"}
	state := fmt.Sprintf("the load stopped at %s: draining what is pending (at most %s), then the read-back at the end", now.UTC().Format("15:04:05Z"), r.cfg.DrainTimeout)
	r.http.live.update(liveUpdate{res: res, at: now, state: state, last: true, interrupted: interrupted})
}

// checkpointing reports whether the run writes checkpoints.
func (r *run) checkpointing() bool {
	return r.cfg.CheckpointInterval > 0 && r.opts.Out != ""
}

// liveInterval is how often the live page is updated: with every progress line (10 s by
// default), or every checkpoint when they come more often.
func liveInterval(cfgCheckpoint time.Duration, opts Options) time.Duration {
	every := opts.ProgressEvery
	if cfgCheckpoint > 0 && opts.Out != "" {
		every = min(every, cfgCheckpoint)
	}
	return every
}

// finish hands the results to Options.Finish, which writes them and the report; then, when
// someone loaded the live page during the run and the run was not interrupted, the address
// answers for LiveGrace (or until ctx ends) with that report and where it is (issue 39): a
// reader's next reload finds it, and the page, which no longer reloads itself, stays.
func (r *run) finish(ctx context.Context, res *results.Run) {
	if r.opts.Finish == nil {
		return
	}
	report := r.opts.Finish(res)
	if r.http.live == nil || r.opts.LiveGrace <= 0 || !r.http.live.watched.Load() || ctx.Err() != nil {
		return
	}
	now := time.Now()
	r.http.live.update(liveUpdate{res: res, at: now, ended: true, report: report, until: now.Add(r.opts.LiveGrace)})
	r.log.Info("run done; the live page shows the final report (an interrupt ends this)", "for", r.opts.LiveGrace, "url", "http://"+r.http.addr+"/")
	t := time.NewTimer(r.opts.LiveGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
