package verify

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// otlpProfile has what OTLP ingestion renames: a counter without _total, metrics with units
// (a gauge, a counter and a summary), beside names that stay.
const otlpProfile = `{"source":"test","series":[
{"name":"jobs_done","type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":1}},
{"name":"io_time","type":"counter","unit":"seconds","shape":{"kind":"counter","value":1,"rate":0.5,"resolution":0.01}},
{"name":"node_load1","type":"gauge","shape":{"kind":"gauge","min":0,"max":4,"periodSeconds":60,"resolution":0.01}},
{"name":"req_latency","type":"gauge","unit":"seconds","shape":{"kind":"gauge","min":0,"max":1,"periodSeconds":60,"resolution":0.001}},
{"name":"rpc","labels":[{"name":"quantile","value":"0.5"}],"type":"summary","unit":"bytes","shape":{"kind":"gauge","min":1,"max":9,"periodSeconds":30,"resolution":1}},
{"name":"rpc_count","type":"summary","unit":"bytes","shape":{"kind":"counter","value":1,"rate":3,"resolution":1}},
{"name":"rpc_sum","type":"summary","unit":"bytes","shape":{"kind":"counter","value":1,"rate":7,"resolution":1}},
{"name":"up","type":"untyped","shape":{"kind":"constant","value":1}}]}`

func TestOTLPNames(t *testing.T) {
	p := testProfile(t)
	want := map[string]string{
		"jobs_done":   "jobs_done_total",
		"io_time":     "io_time_seconds_total",
		"req_latency": "req_latency_seconds",
		"rpc":         "rpc_bytes",
		"rpc_count":   "rpc_bytes_count",
		"rpc_sum":     "rpc_bytes_sum",
	}
	if diff := cmp.Diff(want, otlpNames(p.Series)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	// A run verifies its shard's part of the workload: the part names the same.
	gen, err := workload.New(p, workload.Options{Seed: 1, Start: time.Now(), Hosts: 2, ScrapeInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if v := New(&cfg, gen.Part(0, 2), nil, nil, slog.New(slog.DiscardHandler)); !cmp.Equal(want, v.otlp) {
		t.Errorf("the verifier of a part maps %v", v.otlp)
	}
}

// The whole chain: the workload written over OTLP into Prometheus' own receiver, read back
// through its query API with the names its translation gives: every sample found, nothing
// else, the probes as on any Prometheus.
func TestOTLPReadBackFromPrometheus(t *testing.T) {
	p := testProfile(t)
	recv := startReceiver(t, storagetest.Options{})
	cfg := config.Default()
	cfg.ScrapeInterval, cfg.TargetsCount, cfg.VerifySamples = 100*time.Millisecond, 4, 10_000
	cfg.ScrapeConfigUpdatePercent = 50
	cfg.ScrapeConfigUpdateInterval = 500 * time.Millisecond
	st := config.Storage{WriteURL: recv.URL + storagetest.OTLPPath, ReadURL: recv.URL, Protocol: config.ProtocolOTLP}
	cfg.RemoteStorages = map[string]config.Storage{"prom": st}
	start := time.Now()
	gen, err := workload.New(p, workload.Options{
		Seed: 1, Start: start, Hosts: cfg.TargetsCount, ScrapeInterval: cfg.ScrapeInterval,
		ChurnPercent: cfg.ScrapeConfigUpdatePercent, ChurnInterval: cfg.ScrapeConfigUpdateInterval,
	})
	if err != nil {
		t.Fatal(err)
	}
	w := writeFor(t, &cfg, gen, 1500*time.Millisecond, 0)
	if r := w.Results("prom"); r.AckedSamples == 0 || r.AckedSamples != r.GeneratedSamples {
		t.Fatalf("account %+v: want every sample acked", r)
	}
	client, err := storage.NewClient("prom", st, storage.Read, 2)
	if err != nil {
		t.Fatal(err)
	}
	v := New(&cfg, gen, []Target{{Name: "prom", ReadURL: recv.URL, Client: client, Kind: storage.KindPrometheus, Protocol: config.ProtocolOTLP}},
		nil, slog.New(slog.DiscardHandler))
	v.Settle = 0
	res := v.Run(t.Context(), start, w.GeneratedBefore().Add(-time.Millisecond))["prom"]
	if res.CheckedSamples == 0 || res.MissingSamples != 0 || res.UnexpectedSamples != 0 || res.ChangedValues != 0 ||
		res.ReadErrors != 0 || res.CheckedStaleMarkers == 0 || res.StalenessIgnored != 0 || res.NaNAltered != 0 || res.ShiftedTimestamps != 0 {
		t.Errorf("read-back %+v\n%s", res, strings.Join(res.Examples, "\n"))
	}
	if res.DifferentProbes() != 0 {
		for _, pr := range res.Probes {
			if !pr.Same {
				t.Errorf("probe %q\n  query    %s\n  expected %s\n  got      %s", pr.Name, pr.Query, pr.Expected, pr.Got)
			}
		}
	}
}
