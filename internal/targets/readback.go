package targets

import (
	"math"

	"github.com/tsbench/tsbench/internal/workload"
)

// AgentSeries are the series an agent adds to every target it scrapes (Prometheus writes the
// first five, vmagent all six), with the target's labels: the read-back leaves them out.
var AgentSeries = []string{
	"up", "scrape_duration_seconds", "scrape_samples_scraped",
	"scrape_samples_post_metric_relabeling", "scrape_series_added", "scrape_timeout_seconds",
}

// ServedWorkload is the read-back's view of what was served: target k's scrape is the k-th page
// served of it, at the time and revision it was served with. It answers the read-back's
// Workload questions from a snapshot of the served log, so the check compares what the agent
// stored with what tsbench served, bit for bit.
type ServedWorkload struct {
	gen      *workload.Generator
	logs     [][]servedScrape
	interval int64
}

// Workload snapshots the served log for the read-back.
func (s *Server) Workload() *ServedWorkload {
	w := &ServedWorkload{gen: s.opts.Gen, logs: make([][]servedScrape, len(s.logs)), interval: s.opts.Gen.ScrapeInterval().Milliseconds()}
	for i := range s.logs {
		w.logs[i] = s.logs[i].snapshot()
	}
	return w
}

// Targets is the number of targets served.
func (w *ServedWorkload) Targets() int { return w.gen.Targets() }

// SeriesPerTarget is the profile's number of series.
func (w *ServedWorkload) SeriesPerTarget() int { return w.gen.SeriesPerTarget() }

// ScrapeTime is the time target's page k was served at (ms); beyond the log, the times it
// would have been served at, one interval apart, so that no window finds them.
func (w *ServedWorkload) ScrapeTime(target int, k int64) int64 {
	l := w.logs[target]
	if len(l) == 0 {
		return math.MaxInt64 / 4
	}
	if k < int64(len(l)) {
		return l[k].t
	}
	return l[len(l)-1].t + (k-int64(len(l))+1)*w.interval
}

// Revision is the revision target's page k was served under (the one its path named).
func (w *ServedWorkload) Revision(target int, k int64) int64 {
	l := w.logs[target]
	if len(l) == 0 {
		return 0
	}
	return l[min(k, int64(len(l))-1)].rev
}

// Scrape appends the samples of target's page k as the agent stores them: the page's values
// with the target's labels at that revision. No staleness markers: the agent writes those
// when it drops a target, at a time of its own.
func (w *ServedWorkload) Scrape(app workload.Appender, target int, k int64) (values, staleMarkers int) {
	l := w.logs[target]
	if k < 0 || k >= int64(len(l)) {
		return 0, 0
	}
	sc := l[k]
	for s := range w.gen.SeriesPerTarget() {
		app.Append(w.gen.Labels(target, s, sc.rev), sc.t, w.gen.Value(target, s, sc.t))
	}
	return w.gen.SeriesPerTarget(), 0
}

// NewRevisions is how many target revisions were served beyond each target's first: × the
// series per target, the series churn created.
func (w *ServedWorkload) NewRevisions() int64 {
	var n int64
	for _, l := range w.logs {
		seen := map[int64]bool{}
		for _, sc := range l {
			seen[sc.rev] = true
		}
		n += int64(max(0, len(seen)-1))
	}
	return n
}
