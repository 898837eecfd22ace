package remotewrite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// wireCase is one deterministic write: a workload, the config's write settings and the
// storages it writes.
type wireCase struct {
	name     string
	storages map[string]config.Storage
	cfg      func(*config.Config)
	opts     func(*workload.Options)
}

// hashingReceiver keeps a line per request: what it was sent to, how and the sha256 of its
// body, which is a queued batch as the sender put it on the wire.
type hashingReceiver struct {
	mu    sync.Mutex // guards lines
	lines []string
}

func (h *hashingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	sum := sha256.Sum256(body)
	line := fmt.Sprintf("%s%s?%s %s %s %d %s", r.Host, r.URL.Path, r.URL.RawQuery,
		r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding"), len(body), hex.EncodeToString(sum[:]))
	h.mu.Lock()
	h.lines = append(h.lines, line)
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// wireCases write the node_exporter profile with churn in every protocol and with every
// option that changes the bytes: metadata, exemplars, native histograms (classic beside
// them, summaries as natives), created timestamps (2.0 and OTLP carry them always), write
// and URL replicas, HA pairs, series events, late and out-of-order samples, history, the
// better compression, several connections and generate workers.
func wireCases() []wireCase {
	all := func(c *config.Config) {
		c.SendMetadata = true
		c.Exemplars.Percent = 20
	}
	allOpts := func(o *workload.Options) {
		o.Native = workload.NativeOptions{Mode: workload.NativeBoth, FromSummaries: true}
		o.ExemplarPct = 20
	}
	return []wireCase{
		{name: "rw1", storages: map[string]config.Storage{"a": {WriteURL: "http://a.test/api/v1/write"}}},
		{
			name: "protocols", cfg: all, opts: allOpts,
			storages: map[string]config.Storage{
				"rw1":  {WriteURL: "http://rw1.test/api/v1/write"},
				"rw2":  {WriteURL: "http://rw2.test/api/v1/write", Protocol: config.ProtocolRW2},
				"otlp": {WriteURL: "http://otlp.test/v1/metrics", Protocol: config.ProtocolOTLP},
				"raw":  {WriteURL: "http://raw.test/v1/metrics", Protocol: config.ProtocolOTLP, OTLPCompression: "none"},
			},
		},
		{
			name: "rw1-rw2-replicas", opts: allOpts,
			cfg: func(c *config.Config) {
				all(c)
				c.WriteURLReplicas = 2
				c.Compression = config.CompressionBetter
				c.WriteConcurrency, c.GenerateWorkers = 2, 2
			},
			storages: map[string]config.Storage{
				"rw1": {WriteURL: "http://rw1.test/api/v1/write,http://rw1b.test/api/v1/write"},
				"rw2": {WriteURL: "http://rw2.test/api/v1/write", Protocol: config.ProtocolRW2},
			},
		},
		{
			name: "ha-events-held",
			cfg:  func(c *config.Config) { c.Exemplars.Percent = 20 },
			opts: func(o *workload.Options) {
				o.ExemplarPct = 20
				o.Replicas = 2
				o.HA = workload.HA{
					Replicas: 2, Offset: 300 * time.Millisecond, ClusterName: "cluster", ClusterValue: "c1",
					ReplicaName: "__replica__", ReplicaValue: []string{"a", "b"},
				}
				o.Events = workload.Events{Ramp: &workload.Ramp{From: 1, To: 3, Over: 3 * time.Second}, PodLifetime: 2 * time.Second}
				o.Late = workload.Held{Percent: 10, By: 2 * time.Second}
				o.OutOfOrder = workload.Held{Percent: 5, By: time.Second}
			},
			storages: map[string]config.Storage{
				"rw1": {WriteURL: "http://rw1.test/api/v1/write"},
				"rw2": {WriteURL: "http://rw2.test/api/v1/write", Protocol: config.ProtocolRW2},
			},
		},
		{
			name: "history", opts: allOpts,
			cfg: func(c *config.Config) {
				all(c)
				c.History = 4 * time.Second
			},
			storages: map[string]config.Storage{
				"rw1": {WriteURL: "http://rw1.test/api/v1/write"},
				"rw2": {WriteURL: "http://rw2.test/api/v1/write", Protocol: config.ProtocolRW2},
			},
		},
	}
}

// TestWireBytes writes fixed workloads (the synctest clock's start, seed 7, 3 targets of the
// node_exporter profile churned every 2 s, 1 s scrapes, 5 s of load) through the writer to an
// in-memory receiver and compares the sha256 of every request body, sorted, with
// testdata/wire.golden (UPDATE=1 rewrites it). It is the proof that a move leaves the bytes on
// the wire as they were: in a synctest bubble, time moves only when every goroutine waits, so
// the batches a generate worker cuts are the same on every run; their order across
// connections is not, hence the sort.
func TestWireBytes(t *testing.T) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range wireCases() {
		synctest.Test(t, func(t *testing.T) {
			lines := wireRun(t, profile, c)
			slices.Sort(lines)
			for _, l := range lines {
				got = append(got, c.name+" "+l)
			}
		})
	}
	path := filepath.Join("testdata", "wire.golden")
	if os.Getenv("UPDATE") != "" {
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request bodies changed (-want +got):\n%s", diff)
	}
}

// wireRun runs case c in the current synctest bubble and returns its receivers' lines.
func wireRun(t *testing.T, profile *workload.Profile, c wireCase) []string {
	t.Helper()
	start := time.Now()
	if want := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC); !start.Equal(want) {
		t.Fatalf("the bubble's clock starts at %s, not %s", start, want)
	}
	cfg := config.Default()
	cfg.ScrapeInterval = time.Second
	cfg.TargetsCount = 3
	cfg.WriteConcurrency, cfg.GenerateWorkers = 1, 1
	cfg.MaxSamplesPerRequest = 700
	cfg.RemoteStorages = c.storages
	if c.cfg != nil {
		c.cfg(&cfg)
	}
	opts := workload.Options{
		Seed: 7, Start: start.Add(-cfg.History), Hosts: cfg.TargetsCount, Replicas: 1,
		ScrapeInterval: cfg.ScrapeInterval, ChurnPercent: 50, ChurnInterval: 2 * time.Second,
	}
	if c.opts != nil {
		c.opts(&opts)
	}
	gen, err := workload.New(profile, opts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(OptionsFrom(&cfg), gen, slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	w.End = start.Add(5 * time.Second)
	rc := &hashingReceiver{}
	mn := memNet{}
	for _, st := range c.storages {
		for _, u := range st.WriteURLs() {
			pu, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			mn[pu.Host] = rc
		}
	}
	inMemory(w, mn)
	ctx, cancel := context.WithDeadline(t.Context(), w.End)
	defer cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for name := range c.storages {
		r := w.Results(name)
		if ok, diff := r.Balanced(); !ok || r.AckedSamples == 0 || r.PendingSamples != 0 {
			t.Errorf("%s: acked %d pending %d, balanced %v (off by %d)", name, r.AckedSamples, r.PendingSamples, ok, diff)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.lines)
}
