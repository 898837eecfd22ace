package observe

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

// TestResumeCombines: a checkpoint's 30 minutes at 1 core and this run's 10 at 2 cores make a
// mean of 1.25 cores; maxima are both runs', the disk growth runs from the checkpoint's first
// observation, ingested samples add up, and a figure the checkpoint lacks stays unknown.
func TestResumeCombines(t *testing.T) {
	p := &prior{covered: 30 * time.Minute, res: &results.Resources{
		CPUCoresMean: new(1.0), CPUCoresMax: new(3.0), RSSBytesMean: nil, RSSBytesMax: new(100.0),
		DiskBytesEnd: new(500.0), DiskBytesGrowth: new(400.0), DiskBytesMax: new(500.0), IngestedSamples: new(1000.0),
	}}
	cur := &results.Resources{
		CPUCoresMean: new(2.0), CPUCoresMax: new(2.5), RSSBytesMean: new(50.0), RSSBytesMax: new(80.0),
		DiskBytesEnd: new(900.0), DiskBytesGrowth: new(300.0), DiskBytesMax: new(900.0), IngestedSamples: new(500.0),
	}
	// Each timeline point's bytes per sample counts the disk growth from there too.
	if d := (&observed{prior: p}).firstDisk(); d == nil || *d != 100 {
		t.Errorf("first disk %v, want the checkpoint's 500 − 400", d)
	}
	p.combine(cur, (10 * time.Minute).Seconds())
	want := &results.Resources{
		CPUCoresMean: new(1.25), CPUCoresMax: new(3.0), RSSBytesMax: new(100.0),
		DiskBytesEnd: new(900.0), DiskBytesGrowth: new(800.0), DiskBytesMax: new(900.0), IngestedSamples: new(1500.0),
		Reasons: map[string]string{
			"rssBytesMean":            "unknown before the restart (the checkpoint resumed from has none)",
			"diskReadBytesPerSecond":  "unknown before the restart (the checkpoint resumed from has none)",
			"diskWriteBytesPerSecond": "unknown before the restart (the checkpoint resumed from has none)",
			"activeSeriesMax":         "unknown before the restart (the checkpoint resumed from has none)",
		},
	}
	if diff := cmp.Diff(want, cur); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// caughtUpWrites is a writer whose storage caught up with its history at a given time.
type caughtUpWrites struct {
	fakeWrites
	at time.Time
}

func (c *caughtUpWrites) CaughtUpAt(string) time.Time { return c.at }

// TestSlopeAfterCatchUp: tsbench's heap and RSS slopes start a warm-up into the live load:
// 10 minutes, or a fifth of a shorter one, from the moment every storage caught up with its
// history (the catch-up's buffers are given back after it).
func TestSlopeAfterCatchUp(t *testing.T) {
	for _, c := range []struct {
		name     string
		caughtUp time.Duration // 0: no history
		last     int           // seconds of the last observation, one a minute
		want     time.Duration
	}{
		{"no history", 0, 600, 2 * time.Minute},                // a fifth of 10 minutes
		{"caught up at 5m", 5 * time.Minute, 600, time.Minute}, // a fifth of the 5 live minutes
		{"an hour", 0, 3600, 10 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &caughtUpWrites{}
			if c.caughtUp > 0 {
				w.at = t0.Add(c.caughtUp)
			}
			o := New(Options{Writes: w, Logger: discard()}, []Target{{Name: "s"}})
			for s := 0; s <= c.last; s += 60 {
				collectAt(t, o, float64(s))
			}
			if got := o.Generator().SlopeAfterSeconds; got != c.want.Seconds() {
				t.Errorf("slope after %vs, want %v", got, c.want)
			}
		})
	}
}
