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
