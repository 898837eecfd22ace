package bench

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// hashAppender hashes every sample appended to it: labels, time and value's bits.
type hashAppender struct{ h hash.Hash }

func (a hashAppender) Append(ls []workload.Label, t int64, v float64) {
	for _, l := range ls {
		a.h.Write([]byte(l.Name + "=" + l.Value + ","))
	}
	a.h.Write(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(t)), math.Float64bits(v)))
}

// TestWorkloadOfConfig builds a run from a config that sets every workload key (seed, start,
// history, targetsCount, writeReplicas, churn, hostLoad, the series section's events, late
// and out-of-order samples and HA pair, native histograms, exemplars) and writes the sha256
// of each shard's first scrapes of every target, the shape of the workload and the writer's
// target rate to testdata/workload.golden (UPDATE=1 rewrites it): what the config's
// translation into the workload and the writer gives must not change when it moves.
func TestWorkloadOfConfig(t *testing.T) {
	var got []string
	for _, shard := range []config.Shard{{Index: 0, Count: 1}, {Index: 1, Count: 2}} {
		cfg := config.Default()
		cfg.Seed, cfg.StartTime.Time = 11, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		if shard.Of() == 1 { // history runs in one tsbench
			cfg.History = time.Minute
		}
		cfg.TargetsCount, cfg.WriteReplicas, cfg.HostLoad = 3, 2, 0.5
		cfg.ScrapeConfigUpdatePercent, cfg.ScrapeConfigUpdateInterval = 50, 20*time.Second
		cfg.Series.Events.Ramp = &config.Ramp{From: 1, To: 3, Over: time.Minute}
		cfg.Series.Events.PodChurn = &config.PodChurn{Lifetime: 30 * time.Second}
		cfg.Series.Late = config.Held{Percent: 10, By: 20 * time.Second}
		cfg.Series.OutOfOrder = config.Held{Percent: 5, By: 30 * time.Second}
		cfg.Series.HAReplicas = 2
		cfg.NativeHistograms = config.NativeHistograms{Send: config.NativeBoth, FromSummaries: true}
		cfg.Exemplars.Percent = 20
		cfg.Shard = shard
		cfg.Freshness.Interval = 0
		cfg.RemoteStorages = map[string]config.Storage{
			"a": {WriteURL: "http://a.test/api/v1/write"},
			"b": {WriteURL: "http://b.test/v1/metrics", Protocol: config.ProtocolOTLP},
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		p, err := Prepare(tsbench.Assets, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{}
		opts.setDefaults()
		r, err := newRun(&cfg, p, opts, nil, nil, settings{})
		if err != nil {
			t.Fatal(err)
		}
		r.close()
		got = append(got, fmt.Sprintf("shard %s: %d targets of %d, %d series per target, %d samples per scrape, %.1f samples/s to a",
			shard, r.part.Targets(), r.gen.Targets(), r.gen.SeriesPerTarget(), r.part.SamplesPerScrape(), r.writer.Results("a").TargetSamplesPerSecond))
		for target := range r.part.Targets() {
			h := sha256.New()
			for k := range int64(8) {
				r.part.Scrape(hashAppender{h}, target, k)
			}
			got = append(got, fmt.Sprintf("  target %d: %s", target, hex.EncodeToString(h.Sum(nil))))
		}
	}
	path := filepath.Join("testdata", "workload.golden")
	if os.Getenv("UPDATE") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
