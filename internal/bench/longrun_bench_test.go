package bench

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/report"
	"github.com/tsbench/tsbench/internal/results"
)

// BenchmarkLongRunMemory (make bench, issue 19) runs the default workload (200 targets × 839
// series / 10 s ≈ 17k samples/s, the default rules every 10 s) for LONGRUN_DURATION (default
// 10m) into a receiver in this process that acks every write and answers every query empty,
// with a checkpoint every minute. It reports tsbench's live heap and RSS slopes after the first
// fifth of the run (2 minutes of 10), and results.json's and report.html's sizes at 1 h and
// 24 h: each checkpoint's size against its timeline points, fitted by least squares, taken at
// the points a timeline holds after 1 h (360) and 24 h (540, bounded: results.Timeline).
func BenchmarkLongRunMemory(b *testing.B) {
	d := 10 * time.Minute
	if v := os.Getenv("LONGRUN_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			b.Fatalf("LONGRUN_DURATION: %v", err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/write"):
			w.WriteHeader(http.StatusNoContent)
		case strings.HasSuffix(r.URL.Path, "/query_range"):
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
		case strings.HasSuffix(r.URL.Path, "/query"):
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
		default:
			_, _ = io.WriteString(w, `{"status":"success","data":[]}`)
		}
	}))
	defer srv.Close()
	cfg := config.Default()
	cfg.Duration, cfg.CheckpointInterval, cfg.VerifySamples = d, time.Minute, 0
	cfg.RemoteStorages = map[string]config.Storage{"discard": {WriteURL: srv.URL + "/api/v1/write", ReadURL: srv.URL + "/"}}
	p, err := Prepare(tsbench.Assets, &cfg)
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	for b.Loop() {
		stop := make(chan struct{})
		sizes := make(chan []checkpointSize)
		go func() { sizes <- watchCheckpoints(b, filepath.Join(out, "results.json"), stop) }()
		res, err := Run(b.Context(), p, Options{Out: out})
		close(stop)
		if err != nil {
			b.Fatal(err)
		}
		reportLongRun(b, res, <-sizes, cfg.ObserveInterval)
	}
}

// checkpointSize is one checkpoint's files: results.json as written, report.html rendered
// from it, and how many points its timelines held.
type checkpointSize struct {
	points            int
	resultsB, reportB float64
}

// watchCheckpoints records every new checkpoint in path until stop closes.
func watchCheckpoints(b *testing.B, path string, stop <-chan struct{}) []checkpointSize {
	var out []checkpointSize
	var last time.Time
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-t.C:
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		r, err := results.Parse(raw, path)
		if err != nil || r.Partial == nil || r.Partial.At.Equal(last) || r.Generator == nil {
			continue
		}
		last = r.Partial.At
		var html bytes.Buffer
		if err := report.WriteHTML(&html, r); err != nil {
			b.Error(err)
		}
		out = append(out, checkpointSize{points: len(r.Generator.Timeline), resultsB: float64(len(raw)), reportB: float64(html.Len())})
	}
}

// reportLongRun reports the slopes, the drift, and the files' sizes at 1 h and 24 h.
func reportLongRun(b *testing.B, res *results.Run, sizes []checkpointSize, interval time.Duration) {
	g := res.Generator
	if g == nil || len(g.Timeline) == 0 {
		b.Fatalf("no timeline of tsbench's own resources in the results: %+v", g)
	}
	heap, rss := g.HeapLiveBytesPerHour, g.RSSBytesPerHour
	if heap == nil { // shorter than results.MinSlopeSpan: the figure is this benchmark's own, read as such
		b.Logf("results.json states no slope (%s); fitted here after the same warm-up", g.Reasons["heapLiveBytesPerHour"])
		first, err := time.Parse(time.RFC3339Nano, g.Timeline[0].Time)
		if err != nil {
			b.Fatal(err)
		}
		from := first.Add(time.Duration(g.SlopeAfterSeconds * float64(time.Second)))
		heap = results.SlopePerHour(g.Timeline, from, func(p results.ResourcePoint) *float64 { return p.HeapLiveBytes })
		rss = results.SlopePerHour(g.Timeline, from, func(p results.ResourcePoint) *float64 { return p.RSSBytes })
	}
	if heap == nil || rss == nil {
		b.Fatalf("no slopes: %+v", g)
	}
	b.ReportMetric(*heap/(1<<20), "heap-MiB/h")
	b.ReportMetric(*rss/(1<<20), "rss-MiB/h")
	b.ReportMetric(g.SlopeAfterSeconds, "slope-after-s")
	drift := 0.0
	for _, s := range res.Storages {
		if s.Write != nil {
			drift = max(drift, s.Write.MaxScheduleDriftSeconds)
		}
	}
	b.ReportMetric(drift, "drift-max-s")
	if len(sizes) < 3 {
		b.Fatalf("%d checkpoints: too few to fit the files' growth (run LONGRUN_DURATION of 4m or more)", len(sizes))
	}
	for _, at := range []struct {
		name string
		d    time.Duration
	}{{"1h", time.Hour}, {"24h", 24 * time.Hour}} {
		n := timelinePoints(int(at.d / interval))
		b.ReportMetric(fitAt(sizes, n, func(c checkpointSize) float64 { return c.resultsB })/1e6, "results-MB@"+at.name)
		b.ReportMetric(fitAt(sizes, n, func(c checkpointSize) float64 { return c.reportB })/1e6, "report-MB@"+at.name)
	}
}

// timelinePoints is how many points a timeline holds after n observations.
func timelinePoints(n int) int {
	var tl results.Timeline[results.ResourcePoint]
	for range n {
		tl.Add(results.ResourcePoint{})
	}
	return len(tl.Points())
}

// fitAt is the least-squares line of size against points through the checkpoints, at points.
func fitAt(sizes []checkpointSize, points int, size func(checkpointSize) float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, c := range sizes {
		x, y := float64(c.points), size(c)
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return sy/n + slope*(float64(points)-sx/n)
}
