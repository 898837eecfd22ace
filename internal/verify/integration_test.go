package verify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
	"golang.org/x/sync/errgroup"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
	"github.com/tsbench/tsbench/internal/workload"
)

// faultProxy is a remote-write receiver that decodes each request, passes every sample
// through a fault, re-encodes and forwards what is left to a real storage. It counts the
// damage done to samples in the checked window.
type faultProxy struct {
	target string // the storage's write URL
	f      fault
	w      window
	mu     sync.Mutex // guards d
	d      damage
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	for i := range req.Timeseries {
		ts := &req.Timeseries[i]
		ls := make([]workload.Label, len(ts.Labels))
		for j, l := range ts.Labels {
			ls[j] = workload.Label{Name: l.Name, Value: l.Value}
		}
		key := keyOf(ls)
		kept := ts.Samples[:0]
		for _, s := range ts.Samples {
			t, v, keep := p.d.apply(p.f, key, s.Timestamp, s.Value, p.w)
			if keep {
				kept = append(kept, prompb.Sample{Timestamp: t, Value: v})
			}
		}
		ts.Samples = kept
	}
	p.mu.Unlock()
	status, err := postWrite(r.Context(), p.target, &req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.WriteHeader(status)
}

// postWrite sends one remote-write 1.0 request and returns the status.
func postWrite(ctx context.Context, url string, wr *prompb.WriteRequest) (int, error) {
	b, err := wr.Marshal()
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(snappy.Encode(nil, b)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("write: status %d: %s", resp.StatusCode, msg)
	}
	return resp.StatusCode, nil
}

// seriesBatch collects a target's samples per series, in time order, for one request.
type seriesBatch struct {
	index map[string]int
	wr    prompb.WriteRequest
}

func (b *seriesBatch) Append(ls []workload.Label, t int64, v float64) {
	key := keyOf(ls)
	i, ok := b.index[key]
	if !ok {
		pl := make([]prompb.Label, len(ls))
		for j, l := range ls {
			pl[j] = prompb.Label{Name: l.Name, Value: l.Value}
		}
		i = len(b.wr.Timeseries)
		b.index[key] = i
		b.wr.Timeseries = append(b.wr.Timeseries, prompb.TimeSeries{Labels: pl})
	}
	b.wr.Timeseries[i].Samples = append(b.wr.Timeseries[i].Samples, prompb.Sample{Timestamp: t, Value: v})
}

// writeThrough writes every scrape of wl in w to url, one request per target.
func writeThrough(ctx context.Context, wl *fakeWorkload, w window, url string) error {
	for i := range wl.targets {
		b := &seriesBatch{index: map[string]int{}}
		for k := int64(0); wl.ScrapeTime(i, k) <= w.to; k++ {
			wl.Scrape(b, i, k)
		}
		if _, err := postWrite(ctx, url, &b.wr); err != nil {
			return err
		}
	}
	return nil
}

// requireBinary skips without the binary, except under CI=true.
func requireBinary(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed (CI=true): %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
}

// TestSeededFaultsRealStorages writes a deterministic workload through a fault proxy into a
// real VictoriaMetrics and a real Prometheus, one job per fault, and checks that verify
// reports exactly the damage the proxy did, and nothing for the unmodified job, apart from
// what VictoriaMetrics 1.79 itself does (it drops NaN samples at ingestion: every NaN
// written counts in nanAltered, whatever the proxy did, so removing NaN (fault c) is checked
// on Prometheus only). Every probe must give Prometheus' answer on Prometheus. The whole
// window is checked (budget = total), then a sampled quarter of it.
func TestSeededFaultsRealStorages(t *testing.T) {
	requireBinary(t, "victoria-metrics")
	requireBinary(t, "prometheus")
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	logger := slog.New(slog.DiscardHandler)
	locals := map[string]*local.Process{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, kind := range []string{storage.KindVictoriaMetrics, storage.KindPrometheus} {
		g.Go(func() error {
			l, err := local.Start(gctx, storage.Kind(kind), kind, false, logger)
			if err != nil {
				return err
			}
			mu.Lock()
			locals[kind] = l
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	for _, l := range locals {
		t.Cleanup(func() {
			if err := l.Stop(); err != nil {
				t.Errorf("stop %s: %v", l.Name, err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}

	// 10 targets × 20 series × 60 scrapes at 1s = 12000 samples per job, two minutes ago
	// (inside Prometheus' head, outside any storage's "too recent" horizon), churn at
	// scrapes 20 and 40 of the even targets: 2 × 5 × 20 = 200 staleness markers per job.
	start := time.Now().Add(-2*time.Minute).UnixMilli() / 1000 * 1000
	newWL := func(job string) *fakeWorkload {
		return &fakeWorkload{targets: 10, series: 20, start: start, interval: 1000, churn: 20, job: job, intValues: true}
	}
	w := testWindow(newWL(""))
	names := make([]string, 0, len(faults()))
	for name := range faults() {
		names = append(names, name)
	}
	proxies := map[string]map[string]*faultProxy{} // storage → fault → proxy
	for kind, l := range locals {
		proxies[kind] = map[string]*faultProxy{}
		for _, name := range names {
			p := &faultProxy{target: l.Storage.WriteURL, f: faults()[name], w: w}
			srv := httptest.NewServer(p)
			t.Cleanup(srv.Close)
			proxies[kind][name] = p
			if err := writeThrough(ctx, newWL(jobOf(name)), w, srv.URL+"/api/v1/write"); err != nil {
				t.Fatalf("%s, fault %s: %v", kind, name, err)
			}
		}
	}
	// VictoriaMetrics makes samples searchable within a second; flush instead of waiting.
	resp, err := http.Get(locals[storage.KindVictoriaMetrics].URL + "internal/force_flush")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	clients := map[string]*storage.Client{}
	for kind, l := range locals {
		if clients[kind], err = storage.NewClient(kind, l.Storage, storage.Read, 2); err != nil {
			t.Fatal(err)
		}
	}
	// verifyJob checks one fault's job on one storage with the given budget.
	verifyJob := func(t *testing.T, kind, name string, budget int) *results.Verify {
		t.Helper()
		cfg := config.Default()
		cfg.ScrapeInterval, cfg.VerifySamples = time.Second, budget
		target := Target{Name: kind, ReadURL: locals[kind].URL, Client: clients[kind], Kind: storage.Kind(kind)}
		v := newVerifier(&cfg, newWL(jobOf(name)), []Target{target}, nil, logger)
		v.Settle = 0 // the window ends two minutes ago; VictoriaMetrics was flushed
		res := v.Run(ctx, time.UnixMilli(w.from), time.UnixMilli(w.to))[kind]
		if len(res.Errors) > 0 || res.ReadErrors > 0 || res.UncheckedSamples > 0 {
			t.Fatalf("%d read errors, %d samples unchecked: %v", res.ReadErrors, res.UncheckedSamples, res.Errors)
		}
		return res
	}

	checks := map[string]map[string]*results.Verify{} // storage → fault → full check
	for _, kind := range []string{storage.KindPrometheus, storage.KindVictoriaMetrics} {
		checks[kind] = map[string]*results.Verify{}
		for _, name := range names {
			t.Run(kind+"/"+name, func(t *testing.T) {
				res := verifyJob(t, kind, name, 12000)
				checks[kind][name] = res
				if res.CheckedSamples != 12000 || res.CheckedStaleMarkers != 200 {
					t.Errorf("checked %d samples and %d markers, want 12000 and 200", res.CheckedSamples, res.CheckedStaleMarkers)
				}
				d := proxies[kind][name].d
				want := expectedCounts(name, d)
				if name != "none" && want == (counts{}) {
					// On Prometheus this is what makes "remove NaN" (fault c) count: it
					// keeps NaN, so each NaN the proxy removed must show in NaNAltered.
					t.Fatalf("fault %s did no damage: the test cannot fail", name)
				}
				if kind == storage.KindVictoriaMetrics {
					if name == "remove NaN" {
						return // compared with "none" below: VictoriaMetrics drops NaN itself
					}
					// VictoriaMetrics drops every NaN sample: what the proxy did to NaN is moot,
					// and a NaN series without its marker has no sample left to show.
					want.NaNAltered = d.nansSeen
					if name == "drop 1%" || name == "drop staleness markers" {
						want.StalenessIgnored -= d.nanSeriesMarkers
					}
					if name == "shift 1ms" {
						want.Shifted = d.values
					}
					checkExport(t, res.Export, name, d, want)
				}
				if diff := cmp.Diff(want, countsOf(res)); diff != "" {
					t.Errorf("damage %+v; counts (-want +got):\n%s\nexamples:\n%s", d, diff, strings.Join(res.Examples, "\n"))
				}
				t.Logf("%s: %s; probes differing: %d", name, res.Verdict(), res.DifferentProbes())
				if name != "none" {
					return
				}
				for _, p := range res.Probes {
					// Prometheus is the reference the probes' answers are computed for.
					if kind == storage.KindPrometheus && !p.Same {
						t.Errorf("probe %q on Prometheus\n  query    %s\n  expected %s\n  got      %s", p.Name, p.Query, p.Expected, p.Got)
					}
					t.Logf("probe %q same=%v\n  query    %s\n  expected %s\n  got      %s", p.Name, p.Same, p.Query, p.Expected, p.Got)
				}
				if kind == storage.KindPrometheus && len(res.Probes) != 9 {
					t.Errorf("%d probes, want 9", len(res.Probes))
				}
			})
		}
	}

	// Fault (c) cannot be told apart on VictoriaMetrics 1.79: it drops NaN samples at
	// ingestion whatever the proxy did, so removing them first changes nothing it stores.
	// The job with NaN removed must read back exactly as the unmodified job.
	t.Run("victoriametrics/remove NaN is as none", func(t *testing.T) {
		vm := checks[storage.KindVictoriaMetrics]
		if vm["none"] == nil || vm["remove NaN"] == nil {
			t.Fatal("a VictoriaMetrics check did not run")
		}
		if diff := cmp.Diff(countsOf(vm["none"]), countsOf(vm["remove NaN"])); diff != "" {
			t.Errorf("counts (-none +remove NaN):\n%s", diff)
		}
		if vm["none"].NaNAltered == 0 {
			t.Error("no NaN altered on VictoriaMetrics: it keeps NaN now, so fault c can be checked on it")
		}
	})

	// The sampled plan (a quarter of the window): the unmodified job reads back exactly on
	// Prometheus, and on VictoriaMetrics loses only the NaN samples planned; with markers
	// dropped, every marker checked on Prometheus is ignored.
	for _, kind := range []string{storage.KindPrometheus, storage.KindVictoriaMetrics} {
		t.Run(kind+"/sampled/none", func(t *testing.T) {
			res := verifyJob(t, kind, "none", 3000)
			if res.CheckedSamples < 3000 || res.CheckedSamples >= 12000 || res.CheckedStaleMarkers == 0 {
				t.Errorf("checked %d samples and %d markers, want 3000 to 12000 and some markers", res.CheckedSamples, res.CheckedStaleMarkers)
			}
			want := counts{}
			if kind == storage.KindVictoriaMetrics {
				want.NaNAltered = plannedNaN(newWL(jobOf("none")), w, config.Default().Seed, 3000)
			}
			if diff := cmp.Diff(want, countsOf(res)); diff != "" {
				t.Errorf("counts (-want +got):\n%s\nexamples:\n%s", diff, strings.Join(res.Examples, "\n"))
			}
		})
	}
	t.Run("prometheus/sampled/drop staleness markers", func(t *testing.T) {
		res := verifyJob(t, storage.KindPrometheus, "drop staleness markers", 3000)
		want := counts{StalenessIgnored: res.CheckedStaleMarkers}
		if diff := cmp.Diff(want, countsOf(res)); diff != "" || res.CheckedStaleMarkers == 0 {
			t.Errorf("%d markers checked; counts (-want +got):\n%s", res.CheckedStaleMarkers, diff)
		}
	})
}

// checkExport: VictoriaMetrics' raw export must show the same damage as the query API, and
// every marker the proxy dropped as a marker not stored.
func checkExport(t *testing.T, e *results.ExportCheck, name string, d damage, want counts) {
	t.Helper()
	if e == nil {
		t.Fatal("no export cross-check for VictoriaMetrics")
	}
	wantE := counts{Missing: want.Missing, Changed: want.Changed, NaNAltered: want.NaNAltered, Shifted: want.Shifted}
	if name == "drop 1%" || name == "drop staleness markers" {
		wantE.StalenessIgnored = d.markers
	}
	gotE := counts{e.MissingSamples, e.DuplicateSamples, e.UnexpectedSamples, e.ChangedValues, e.NaNAltered, e.MissingStaleMarkers, e.ShiftedTimestamps}
	if diff := cmp.Diff(wantE, gotE); diff != "" || e.CheckedSamples != 12000 || e.CheckedStaleMarkers != 200 {
		t.Errorf("export %+v (-want +got, StalenessIgnored = missing markers):\n%s", *e, diff)
	}
}

// plannedNaN counts the NaN samples the plan of budget checks in w.
func plannedNaN(wl *fakeWorkload, w window, seed uint64, budget int) int64 {
	var n int64
	for _, u := range plan(wl, seed, w, wl.interval, budget) {
		expect(wl, &u, wl.interval)
		for _, s := range u.series {
			for _, e := range s.samples {
				if math.IsNaN(e.v) && !e.stale {
					n++
				}
			}
		}
	}
	return n
}

func jobOf(fault string) string {
	return "fault_" + strings.NewReplacer(" ", "_", "%", "pct").Replace(fault)
}
