package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// TestCheckpointIn: a checkpoint of this run is resumed; a finished run's results, or a
// checkpoint a run cannot resume (said why), are started over; a checkpoint of another
// startTime or config is an error, never overwritten.
func TestCheckpointIn(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := config.Default()
	cfg.GenerateWorkers = 3
	mine, err := configOf(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.TargetsCount++
	write := func(t *testing.T, partial bool, at time.Time, c config.Config) string {
		t.Helper()
		dir := t.TempDir()
		c.GenerateWorkers = 16 // another node's cores: still the same run
		r := &results.Run{SchemaVersion: results.SchemaVersion, StartTime: at, Config: c.Redacted()}
		if partial {
			r.Partial = &results.Partial{At: at.Add(time.Hour), Reason: "checkpoint"}
		}
		if _, err := r.WriteFile(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, c := range []struct {
		name, dir, resumable, note, err string
		resumed                         bool
	}{
		{name: "same run", dir: write(t, true, start, cfg), resumed: true},
		{name: "no results", dir: t.TempDir()},
		{name: "finished run", dir: write(t, false, start, cfg)},
		{name: "not resumable", dir: write(t, true, start, cfg), resumable: "runs with history start over", note: "not resumed: runs with history start over"},
		{name: "other start", dir: write(t, true, start.Add(time.Second), cfg), err: "not at this config's startTime"},
		{name: "other config", dir: write(t, true, start, other), err: "a run with another config"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cp, note, err := checkpointIn(c.dir, mine, start, c.resumable)
			if (cp != nil) != c.resumed || !strings.Contains(note, c.note) || (c.note == "") != (note == "") {
				t.Errorf("checkpoint %v, note %q: want resumed %v, note %q", cp != nil, note, c.resumed, c.note)
			}
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Errorf("error %v, want %q", err, c.err)
			}
		})
	}
}

// TestSpansAround: the read-back of a resumed run covers the run less its gaps.
func TestSpansAround(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	gaps := []results.Gap{{From: at(10), To: at(12)}, {From: at(30), To: at(31)}}
	for _, c := range []struct {
		name     string
		from, to int
		want     [][2]time.Time
	}{
		{"both gaps", 0, 60, [][2]time.Time{{at(0), at(10)}, {at(12), at(30)}, {at(31), at(60)}}},
		{"ends in a gap", 0, 11, [][2]time.Time{{at(0), at(10)}}},
		{"starts after the gaps", 40, 60, [][2]time.Time{{at(40), at(60)}}},
		{"within a gap", 10, 12, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, spansAround(gaps, at(c.from), at(c.to))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestResumeGapLeavesOutPending (issue 29, item 6): samples pending at the checkpoint are
// taken out of the account, so the read-back of a resumed run must not look for them: its
// span before the gap ends a scrape interval (the largest drift when longer) before the
// oldest sample the checkpoint had not settled, as the checkpoint's lag says.
func TestResumeGapLeavesOutPending(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at, restart := start.Add(10*time.Minute), start.Add(12*time.Minute)
	cp := &results.Run{
		Partial: &results.Partial{At: at, Reason: "checkpoint"},
		Storages: []results.Storage{
			{Name: "fast", Write: &results.Write{GeneratedSamples: 100, AckedSamples: 100}},
			{Name: "slow", Write: &results.Write{GeneratedSamples: 100, AckedSamples: 60, PendingSamples: 40, LagSeconds: 25, MaxScheduleDriftSeconds: 0.2}},
			{Name: "drifting", Write: &results.Write{GeneratedSamples: 100, AckedSamples: 100, MaxScheduleDriftSeconds: 30}},
		},
	}
	g := resumeGap(cp, restart, 10*time.Second)
	// slow: 25 s of lag and a scrape interval; drifting: 30 s of drift.
	if want := at.Add(-35 * time.Second); !g.From.Equal(want) || !g.To.Equal(restart) || !g.Checkpoint.Equal(at) {
		t.Errorf("gap %s → %s (checkpoint %s), want %s → %s (checkpoint %s)", g.From, g.To, g.Checkpoint, want, restart, at)
	}
	if !strings.Contains(g.Reason, "(40 pending)") {
		t.Errorf("reason %q does not say how many samples were pending", g.Reason)
	}
	spans := spansAround([]results.Gap{g}, start, start.Add(20*time.Minute))
	pendingFrom := at.Add(-25 * time.Second) // the oldest sample "slow" had not acked
	if spans[0][1].After(pendingFrom) {
		t.Errorf("the read-back's span before the gap ends at %s, after the oldest pending sample at %s", spans[0][1], pendingFrom)
	}
}

// TestSinceLastGap (issue 29, item 6): the reads of the run's end (HA pairs, native
// histograms, exemplars) start after a resumed run's last gap, never in it.
func TestSinceLastGap(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	gaps := []results.Gap{{From: at(10), To: at(12)}, {From: at(30), To: at(31)}}
	for _, c := range []struct {
		gaps       []results.Gap
		from, want int
	}{
		{nil, 0, 0},
		{gaps, 0, 31},
		{gaps, 40, 40},
	} {
		if got := sinceLastGap(c.gaps, at(c.from)); !got.Equal(at(c.want)) {
			t.Errorf("from %d with %d gaps: %s, want %s", c.from, len(c.gaps), got, at(c.want))
		}
	}
}
