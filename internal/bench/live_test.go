package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// getLive is the live page as a browser gets it.
func getLive(t *testing.T, l *live) string {
	t.Helper()
	w := httptest.NewRecorder()
	l.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET / answered %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	return w.Body.String()
}

// liveRun is results with one storage that acked n samples.
func liveRun(n int64) *results.Run {
	return &results.Run{Storages: []results.Storage{{Name: "prometheus", Write: &results.Write{AckedSamples: n}}}}
}

// The live page is the last one rendered, says the run is in progress and as of when, and
// a newer update replaces it; before the first, a note that reloads itself.
func TestLiveServesTheLastRenderedPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var renders atomic.Int64
		render := func(w io.Writer, res *results.Run, banner string, refresh time.Duration) error {
			renders.Add(1)
			_, err := fmt.Fprintf(w, "<p>%s</p><p>refresh %s</p><p>%s acked %d</p>", banner, refresh, res.Storages[0].Name, res.Storages[0].Write.AckedSamples)
			return err
		}
		l := newLive(render, time.Minute, 0, slog.New(slog.DiscardHandler))
		if got := getLive(t, l); !strings.Contains(got, "live: the run is starting") || !strings.Contains(got, `http-equiv="refresh" content="5"`) {
			t.Errorf("before the first update: %s", got)
		}
		ctx, cancel := context.WithCancel(t.Context())
		go l.run(ctx)
		at := time.Now()
		l.update(liveUpdate{res: liveRun(100), at: at, state: "the load, 10s of 10m0s"})
		synctest.Wait()
		first := getLive(t, l)
		for _, want := range []string{
			"live: run in progress, as of " + at.UTC().Format("15:04:05Z") + ". Still running: the load, 10s of 10m0s.",
			"Next update by " + at.Add(time.Minute).UTC().Format("15:04:05Z"),
			"refresh 1m0s", "prometheus acked 100",
		} {
			if !strings.Contains(first, want) {
				t.Errorf("the first page lacks %q: %s", want, first)
			}
		}
		if again := getLive(t, l); again != first || renders.Load() != 1 {
			t.Errorf("a second request rendered again (%d renders) or got another page", renders.Load())
		}
		time.Sleep(time.Minute)
		l.update(liveUpdate{res: liveRun(700), at: time.Now(), state: "the load stopped at …", last: true})
		synctest.Wait()
		if got := getLive(t, l); !strings.Contains(got, "prometheus acked 700") || !strings.Contains(got, "No update follows") {
			t.Errorf("the page after the second update: %s", got)
		}
		cancel()
		<-l.done
	})
}

// A render that takes long never holds a request: the page served meanwhile is the previous
// one, updates that come meanwhile are coalesced into the newest, and that one is rendered
// next.
func TestLiveRendersInTheBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var renders atomic.Int64
		render := func(w io.Writer, res *results.Run, _ string, _ time.Duration) error {
			if renders.Add(1) == 2 {
				<-release // the second render hangs until released
			}
			_, err := fmt.Fprintf(w, "acked %d", res.Storages[0].Write.AckedSamples)
			return err
		}
		l := newLive(render, time.Minute, 0, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithCancel(t.Context())
		go l.run(ctx)
		l.update(liveUpdate{res: liveRun(1), at: time.Now()})
		synctest.Wait()
		l.update(liveUpdate{res: liveRun(2), at: time.Now()})
		synctest.Wait() // the renderer hangs in the second render
		for n := int64(3); n <= 5; n++ {
			l.update(liveUpdate{res: liveRun(n), at: time.Now()})
		}
		if got := getLive(t, l); got != "acked 1" {
			t.Errorf("while rendering, the page served is %q, want the previous one", got)
		}
		close(release)
		synctest.Wait()
		if got := getLive(t, l); got != "acked 5" {
			t.Errorf("after the render, the page is %q, want the newest update's", got)
		}
		if n := renders.Load(); n != 3 {
			t.Errorf("%d renders, want 3: updates 3 and 4 replaced by 5 while 2 rendered", n)
		}
		cancel()
		<-l.done
	})
}

// A render that fails keeps the last page.
func TestLiveKeepsThePageWhenARenderFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		render := func(w io.Writer, res *results.Run, _ string, _ time.Duration) error {
			if res.Storages[0].Write.AckedSamples == 2 {
				return fmt.Errorf("template: boom")
			}
			_, err := fmt.Fprintf(w, "acked %d", res.Storages[0].Write.AckedSamples)
			return err
		}
		l := newLive(render, time.Minute, 0, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithCancel(t.Context())
		go l.run(ctx)
		l.update(liveUpdate{res: liveRun(1), at: time.Now()})
		synctest.Wait()
		l.update(liveUpdate{res: liveRun(2), at: time.Now()})
		synctest.Wait()
		if got := getLive(t, l); got != "acked 1" {
			t.Errorf("after a failed render the page is %q, want the last one rendered", got)
		}
		cancel()
		<-l.done
	})
}

func TestLiveInterval(t *testing.T) {
	for _, tc := range []struct {
		checkpoint time.Duration
		out        string
		want       time.Duration
	}{
		// The default checkpoint: with every progress line (issue 39: it was every minute, where
		// the progress line comes every 10 s).
		{5 * time.Minute, "out", 10 * time.Second},
		{time.Second, "out", time.Second},
		{time.Second, "", 10 * time.Second}, // no -out: no checkpoint written
		{0, "out", 10 * time.Second},
	} {
		opts := Options{Out: tc.out}
		opts.setDefaults()
		if got := liveInterval(tc.checkpoint, opts); got != tc.want {
			t.Errorf("checkpointInterval %s, -out %q: every %s, want %s", tc.checkpoint, tc.out, got, tc.want)
		}
	}
}

// The live page says what is still running: the load with its end, or until interrupted,
// and the read-back while the load runs.
func TestLiveState(t *testing.T) {
	start := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	storages := map[string]config.Storage{"vm": {WriteURL: "http://127.0.0.1:8428/api/v1/write"}}
	for _, tc := range []struct {
		name string
		cfg  config.Config
		want string
	}{
		{
			name: "duration",
			cfg:  config.Config{Duration: 10 * time.Minute, RemoteStorages: storages},
			want: "the load, 2m30s of 10m0s, until 14:10:00Z",
		},
		{
			name: "endless, checked while it runs",
			cfg:  config.Config{VerifyInterval: 10 * time.Minute, VerifySamples: 100, RemoteStorages: storages},
			want: "the load, 2m30s so far, until interrupted; the read-back every 10m0s",
		},
		{
			name: "a check still to come",
			cfg:  config.Config{Duration: 15 * time.Minute, VerifyInterval: 10 * time.Minute, VerifySamples: 100, RemoteStorages: storages},
			want: "the load, 2m30s of 15m0s, until 14:15:00Z; the read-back every 10m0s",
		},
		{
			// Issue 39: "the read-back every 10m0s" in a 90 s run, where no check comes.
			name: "shorter than verifyInterval",
			cfg:  config.Config{Duration: 3 * time.Minute, VerifyInterval: 10 * time.Minute, VerifySamples: 100, RemoteStorages: storages},
			want: "the load, 2m30s of 3m0s, until 14:03:00Z",
		},
		{
			name: "the last check done",
			cfg:  config.Config{Duration: 3 * time.Minute, VerifyInterval: time.Minute, VerifySamples: 100, RemoteStorages: storages},
			want: "the load, 2m30s of 3m0s, until 14:03:00Z",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &run{cfg: &tc.cfg, start: start}
			if got := r.liveState(start.Add(150 * time.Second)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Once the run has ended and its report is written, the address keeps answering for the
// grace with that report, named, and no refresh, when the page was read during the run and
// the run was not interrupted (issue 39: the next reload was a refused connection).
func TestFinishServesTheFinalReportForTheGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var refreshes []time.Duration
		render := func(w io.Writer, res *results.Run, banner string, refresh time.Duration) error {
			refreshes = append(refreshes, refresh)
			_, err := fmt.Fprintf(w, "<p>%s</p><p>acked %d</p>", banner, res.Storages[0].Write.AckedSamples)
			return err
		}
		var finished int
		newRun := func() *run {
			return &run{
				log:  slog.New(slog.DiscardHandler),
				http: server{addr: "127.0.0.1:8436", live: newLive(render, 10*time.Second, 30*time.Second, slog.New(slog.DiscardHandler))},
				opts: Options{LiveGrace: 30 * time.Second, Finish: func(*results.Run) string { finished++; return "/out/report.html" }},
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		r := newRun() // nobody read the page: no grace
		start := time.Now()
		r.finish(ctx, liveRun(9))
		if time.Since(start) != 0 || finished != 1 {
			t.Errorf("unread: finish took %s and wrote the report %d times, want at once and once", time.Since(start), finished)
		}

		r = newRun()
		go r.http.live.run(ctx)
		r.http.live.update(liveUpdate{res: liveRun(5), at: time.Now(), state: "the load", last: true})
		synctest.Wait()
		if got := getLive(t, r.http.live); !strings.Contains(got, "No update follows but the final report.html, which this page shows when the run ends, for 30s.") {
			t.Errorf("the page after the load stopped: %s", got)
		}
		r.http.live.update(liveUpdate{res: liveRun(5), at: time.Now(), state: "the load", last: true, interrupted: true})
		synctest.Wait()
		if got := getLive(t, r.http.live); !strings.Contains(got, "No update follows: the final report.html is written when the run ends, and this address stops serving it.") {
			t.Errorf("the page after an interrupt stopped the load: %s", got)
		}
		start = time.Now()
		done := make(chan struct{})
		go func() { r.finish(ctx, liveRun(9)); close(done) }()
		synctest.Wait()
		want := "this run has ended; the report is at /out/report.html. This page shows that report and no longer reloads itself; " +
			"this address stops answering at " + start.Add(30*time.Second).UTC().Format("15:04:05Z") + "."
		if got := getLive(t, r.http.live); !strings.Contains(got, want) || !strings.Contains(got, "acked 9") {
			t.Errorf("the page during the grace lacks %q and the final figures: %s", want, got)
		}
		if last := refreshes[len(refreshes)-1]; last != 0 {
			t.Errorf("the final report reloads itself every %s, want never", last)
		}
		<-done
		if took := time.Since(start); took != 30*time.Second {
			t.Errorf("the grace lasted %s, want 30s", took)
		}

		r = newRun() // read, but the run was interrupted: no grace
		r.http.live.watched.Store(true)
		cancel()
		start = time.Now()
		r.finish(ctx, liveRun(9))
		if time.Since(start) != 0 {
			t.Errorf("an interrupted run waited %s after its report", time.Since(start))
		}
	})
}
