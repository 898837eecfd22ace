package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTimelineBounded: a day of 10 s observations (8,640) stays within TimelinePoints, every
// observation counted once, the counters the newest, and a one-observation spike kept as the
// maximum of its point while the mean smooths it.
func TestTimelineBounded(t *testing.T) {
	var tl Timeline[ResourcePoint]
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 8640
	for i := range n {
		cpu := 1.0
		if i == 5000 {
			cpu = 50
		}
		tl.Add(ResourcePoint{
			Time: t0.Add(time.Duration(i) * 10 * time.Second).Format(time.RFC3339Nano), CPUCores: new(cpu),
			AckedSamples: int64(i),
		})
	}
	pts := tl.Points()
	if len(pts) > TimelinePoints || len(pts) < TimelinePoints/2 {
		t.Fatalf("%d points, want %d to %d", len(pts), TimelinePoints/2, TimelinePoints)
	}
	total, peak := 0, 0.0
	for _, p := range pts {
		total += p.Count()
		if p.Max != nil {
			peak = max(peak, *p.Max.CPUCores)
		}
		if *p.CPUCores > 10 {
			t.Errorf("point %s has mean CPU %v: a spike of one observation in %d must be averaged", p.Time, *p.CPUCores, p.Count())
		}
	}
	if total != n {
		t.Errorf("points stand for %d observations, want %d", total, n)
	}
	if peak != 50 {
		t.Errorf("largest CPU kept %v, want the spike's 50", peak)
	}
	if last := pts[len(pts)-1]; last.AckedSamples != n-1 {
		t.Errorf("newest point's acked %d, want the last observation's %d", last.AckedSamples, n-1)
	}
}

// TestTimelineRestore: a timeline restored from a checkpoint's points goes on at their width.
func TestTimelineRestore(t *testing.T) {
	var a Timeline[QueryPoint]
	for range 3 * TimelinePoints {
		a.Add(QueryPoint{Completed: 1, P99: new(1.0)})
	}
	var b Timeline[QueryPoint]
	b.Restore(a.Points())
	for range 10 {
		a.Add(QueryPoint{Completed: 1, P99: new(2.0)})
		b.Add(QueryPoint{Completed: 1, P99: new(2.0)})
	}
	if len(a.Points()) != len(b.Points()) {
		t.Errorf("restored timeline has %d points, the original %d", len(b.Points()), len(a.Points()))
	}
	var completed int64
	for _, p := range b.Points() {
		completed += p.Completed
	}
	if completed != 3*TimelinePoints+10 {
		t.Errorf("completed %d, want %d", completed, 3*TimelinePoints+10)
	}
}

// TestWritePointMerge: counters from the later point, the largest lag, the mean rate and its extremes.
func TestWritePointMerge(t *testing.T) {
	a := WritePoint{Acked: 10, LagSeconds: 5, SamplesPerSecs: 100}
	b := WritePoint{Acked: 20, LagSeconds: 1, SamplesPerSecs: 300}
	m := a.Merge(b).Merge(WritePoint{Acked: 30, LagSeconds: 2, SamplesPerSecs: 200})
	want := WritePoint{Acked: 30, LagSeconds: 5, SamplesPerSecs: 200, N: 3, SamplesPerSecondMin: 100, SamplesPerSecondMax: 300}
	if m != want {
		t.Errorf("merged %+v, want %+v", m, want)
	}
}

// TestWriteFileAtomic: results.json is replaced whole and no temporary file is left.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	for _, at := range []time.Time{time.Unix(1, 0), time.Unix(2, 0)} {
		r := &Run{SchemaVersion: SchemaVersion, Partial: &Partial{At: at.UTC(), Reason: "checkpoint"}}
		if _, err := r.WriteFile(dir); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Partial == nil || !got.Partial.At.Equal(time.Unix(2, 0)) {
		t.Errorf("partial %+v, want the second checkpoint's", got.Partial)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want results.json alone", len(ents))
	}
}

// TestSlopePerHour: 1 MiB over two hours is 0.5 MiB an hour; the points before from are left out.
func TestSlopePerHour(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pts []ResourcePoint
	for m := range 121 {
		v := float64(m) * (1 << 20) / 120
		if m < 10 {
			v = 1e9 // the warm-up
		}
		pts = append(pts, ResourcePoint{Time: t0.Add(time.Duration(m) * time.Minute).Format(time.RFC3339Nano), HeapLiveBytes: new(v)})
	}
	s := SlopePerHour(pts, t0.Add(10*time.Minute), func(p ResourcePoint) *float64 { return p.HeapLiveBytes })
	if s == nil || *s < 0.5*(1<<20)-1 || *s > 0.5*(1<<20)+1 {
		t.Errorf("slope %v, want 524288", s)
	}
}

// TestMergePartialShards: shards merged while one is a checkpoint give a partial file as of
// the earliest checkpoint, with every shard's gaps named by shard.
func TestMergePartialShards(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Run{Shard: &Shard{Index: 0, Count: 2}, Partial: &Partial{At: t0.Add(time.Hour), Reason: "checkpoint"}}
	b := &Run{
		Shard: &Shard{Index: 1, Count: 2}, Partial: &Partial{At: t0.Add(30 * time.Minute), Reason: "checkpoint"},
		Gaps: []Gap{{From: t0, To: t0.Add(time.Minute), Reason: "restart"}},
	}
	p, gaps := mergeLongRun([]*Run{a, b})
	if p == nil || !p.At.Equal(t0.Add(30*time.Minute)) {
		t.Errorf("partial %+v, want the earliest checkpoint", p)
	}
	if len(gaps) != 1 || gaps[0].Reason != "shard 1/2: restart" {
		t.Errorf("gaps %+v, want shard 1/2's", gaps)
	}
	if p, gaps := mergeLongRun([]*Run{{Shard: &Shard{Count: 1}}}); p != nil || gaps != nil {
		t.Errorf("finished shards merged into partial %+v, gaps %+v", p, gaps)
	}
}

// TestSetSlopesOnlyWhenMeaningful (issue 29, item 4): tsbench states its memory slopes only
// over MinSlopeSpan or more after the warm-up; a short run's are null, with why.
func TestSetSlopesOnlyWhenMeaningful(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	timeline := func(d time.Duration) []ResourcePoint {
		var pts []ResourcePoint
		for s := time.Duration(0); s <= d; s += 10 * time.Second {
			v := 100e6 + float64(s/time.Second)*1e4 // heap settling: +36 MB/h
			pts = append(pts, ResourcePoint{Time: t0.Add(s).Format(time.RFC3339Nano), HeapLiveBytes: new(v), RSSBytes: new(2 * v)})
		}
		return pts
	}
	short := &Generator{Timeline: timeline(195 * time.Second)}
	short.SetSlopes(t0.Add(39*time.Second), 39*time.Second)
	if short.HeapLiveBytesPerHour != nil || short.RSSBytesPerHour != nil {
		t.Errorf("slopes %v, %v over 2m31s: want none", short.HeapLiveBytesPerHour, short.RSSBytesPerHour)
	}
	if why := short.Reasons["heapLiveBytesPerHour"]; !strings.Contains(why, "2m31s of the run after the first 39s") || short.Reasons["rssBytesPerHour"] != why {
		t.Errorf("reasons %q", short.Reasons)
	}
	long := &Generator{Timeline: timeline(time.Hour)}
	long.SetSlopes(t0.Add(10*time.Minute), 10*time.Minute)
	if long.HeapLiveBytesPerHour == nil || long.RSSBytesPerHour == nil || len(long.Reasons) != 0 || long.SlopeAfterSeconds != 600 {
		t.Fatalf("an hour's slopes: %+v", long)
	}
	if got := *long.HeapLiveBytesPerHour; got < 36e6-1 || got > 36e6+1 {
		t.Errorf("heap slope %v, want 36e6", got)
	}
}
