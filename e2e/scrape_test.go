package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
)

// scrapeRun runs scrape mode with sender against fresh VictoriaMetrics and Prometheus: 20
// targets at 5 s, 10 % churn every 10 s, for 30 s; the agent then drops the targets and
// drains (about 20 s) before the read-back. One remote-write queue (writeConcurrency: 1):
// vmagent's queues send blocks side by side, so a block can reach Prometheus after a newer one
// of the same series (a target's last scrape after its staleness markers); Prometheus 2.42
// refuses it as out of order (400), vmagent drops it, and tsbench rightly reports the account
// not known ("1 packets dropped"). That failed 1 run in about 16 here; the test is about the
// account and the read-back, not vmagent's ordering.
func scrapeRun(t *testing.T, sender string, exposeTimestamps bool) (*results.Run, map[string]func() float64) {
	t.Helper()
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	prom := startStorage(t, storage.KindPrometheus, "prom")
	cfg := fmt.Sprintf(`
duration: 30s
targetsCount: 20
scrapeInterval: 5s
scrapeConfigUpdatePercent: 10
scrapeConfigUpdateInterval: 10s
observeInterval: 5s
writeConcurrency: 1
sender: %s
exposeTimestamps: %t
remoteStorages:
  vm: {writeURL: %sapi/v1/write, readURL: %s, metricsURLs: [%smetrics]}
  prom: {writeURL: %sapi/v1/write, readURL: %s, metricsURLs: [%smetrics]}
`, sender, exposeTimestamps, vm.URL, vm.URL, vm.URL, prom.URL, prom.URL, prom.URL)
	rr := runTsbench(t, 3*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	return rr.results, map[string]func() float64{
		"vm": func() float64 {
			return scrapeMetric(t, vm.URL+"metrics", "vm_rows_inserted_total", map[string]string{"type": "promremotewrite"})
		},
		"prom": func() float64 {
			return scrapeMetric(t, prom.URL+"metrics", "prometheus_tsdb_head_samples_appended_total", nil)
		},
	}
}

// checkScrapeAccount checks scrape mode's account: what tsbench served plus what the agent
// added is what it queued for each storage, acked + dropped + pending by its own counters,
// and each storage ingested exactly what the agent says it acked.
func checkScrapeAccount(t *testing.T, res *results.Run, ingested map[string]func() float64) {
	t.Helper()
	snd := res.Sender
	if snd == nil {
		t.Fatal("no sender section")
	}
	if snd.ServedScrapes < 20*4 || snd.ServedSamples != snd.ServedScrapes*int64(res.Workload.SeriesPerTarget) {
		t.Errorf("served %d scrapes, %d samples: want at least 80 scrapes of %d samples each",
			snd.ServedScrapes, snd.ServedSamples, res.Workload.SeriesPerTarget)
	}
	if snd.ScrapedSamples != nil && *snd.ScrapedSamples != snd.ServedSamples {
		t.Errorf("the agent scraped %d samples, tsbench served %d", *snd.ScrapedSamples, snd.ServedSamples)
	}
	if snd.AppendedSamples == nil || snd.AgentAddedSamples == nil {
		t.Fatalf("the agent's intake unknown: %v", snd.Reasons)
	}
	appended, added := *snd.AppendedSamples, *snd.AgentAddedSamples
	// Its own series (5 or 6 per scrape) and staleness markers: at least one series per scrape.
	if added < snd.ServedScrapes || appended != snd.ServedSamples+added {
		t.Errorf("the agent took in %d = served %d + its own %d: want its own >= one per scrape (%d)",
			appended, snd.ServedSamples, added, snd.ServedScrapes)
	}
	for _, ss := range snd.Storages {
		t.Run(ss.Name, func(t *testing.T) {
			if !ss.Known || ss.UnexplainedSamples != 0 {
				t.Errorf("account of %s: known %t (%s), unexplained %d", ss.Name, ss.Known, ss.Why, ss.UnexplainedSamples)
			}
			var dropped int64
			for _, n := range ss.DroppedSamples {
				dropped += n
			}
			if got := ss.AckedSamples + dropped + ss.PendingSamples; got != ss.ServedSamples+added || ss.InSamples != got {
				t.Errorf("served %d + agent's own %d != acked %d + dropped %d + pending %d (in %d)",
					ss.ServedSamples, added, ss.AckedSamples, dropped, ss.PendingSamples, ss.InSamples)
			}
			if dropped != 0 || ss.PendingSamples != 0 {
				t.Errorf("dropped %v, pending %d: want none", ss.DroppedSamples, ss.PendingSamples)
			}
			// The storage's own counter holds the agent's samples and the freshness canary's,
			// which tsbench writes beside the agent.
			s := storageResult(t, res, ss.Name)
			if got := ingested[ss.Name](); got-canary(s) != float64(ss.AckedSamples) {
				t.Errorf("%s ingested %.0f samples, the agent says it acked %d and tsbench %.0f canary samples", ss.Name, got, ss.AckedSamples, canary(s))
			}
			if s.Write == nil || s.Write.AckedSamples != ss.AckedSamples {
				t.Errorf("write section %+v, want the agent's acked %d", s.Write, ss.AckedSamples)
			}
		})
	}
	if r := snd.Resources; r == nil || r.CPUCoresMean == nil || r.RSSBytesMean == nil || *r.CPUCoresMean <= 0 || *r.RSSBytesMean <= 0 {
		t.Errorf("the agent's resources %+v: want its CPU and RSS", r)
	} else {
		cpuPerM := -1.0
		if snd.CPUSecondsPerMillionSamples != nil {
			cpuPerM = *snd.CPUSecondsPerMillionSamples
		}
		t.Logf("%s: cpu %.4f cores mean, rss %.1f MiB mean, %.2f cpu s per million samples (%d taken in), queue %.0f bytes at end",
			snd.Kind, *r.CPUCoresMean, *r.RSSBytesMean/(1<<20), cpuPerM, appended, deref(r.DiskBytesEnd))
	}
	if diff := cmp.Diff([]string(nil), res.AccountingErrors); diff != "" {
		t.Errorf("accounting errors (-want +got):\n%s", diff)
	}
}

// TestScrapeVMAgent is scrape mode with vmagent, as the prometheus-benchmark chart runs it:
// no timestamps on the pages, so the agent stores its own scrape time.
func TestScrapeVMAgent(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus", "vmagent")
	res, ingested := scrapeRun(t, "vmagent", false)
	checkScrapeAccount(t, res, ingested)
	v := storageResult(t, res, "prom").Verify
	if v == nil || v.CheckedSamples == 0 {
		t.Fatalf("read-back on Prometheus: %+v, want samples checked", v)
	}
	// vmagent stores its scrape time, a millisecond or two before tsbench served the page,
	// and its float parser rounds some decimals one unit in the last place off (the same pages
	// reach Prometheus' own parser intact: TestScrapePrometheusAgent). Both storages get
	// these alike: they are vmagent's, under sender.changes, and Prometheus stored exactly
	// what vmagent sent.
	if !v.Exact() {
		t.Errorf("read-back on Prometheus: %s, want exact against what vmagent sent; examples %q", v.Verdict(), v.Examples)
	}
	ch := res.Sender.Changes
	if ch == nil || ch.ComparedSamples == 0 || ch.ShiftedTimestamps == 0 || ch.MaxShiftMillis <= 0 || ch.MaxRelativeError > 0x1p-51 {
		t.Errorf("sender changes %+v: want vmagent's scrape times (shifted) and at most last-place rounding", ch)
	} else {
		t.Logf("%s", ch.Line("vmagent"))
	}
	t.Logf("vmagent on Prometheus: %s; on VictoriaMetrics: %s", v.Verdict(), storageResult(t, res, "vm").Verify.Verdict())
	checkNothingLost(t, res, "vm")
}

// checkNothingLost: the storage returns every sample served and nothing else, the agent's own
// series and staleness markers aside (VictoriaMetrics drops NaN values: NaNAltered).
func checkNothingLost(t *testing.T, res *results.Run, name string) {
	t.Helper()
	v := storageResult(t, res, name).Verify
	if v == nil || v.CheckedSamples == 0 || v.MissingSamples != 0 || v.UnexpectedSamples != 0 || v.DuplicateSamples != 0 {
		t.Errorf("read-back on %s: %+v", name, v)
	}
}

// TestScrapePrometheusAgent is scrape mode with Prometheus in agent mode, timestamps on the
// pages: Prometheus must store exactly the values tsbench served, at the times it served them.
func TestScrapePrometheusAgent(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	res, ingested := scrapeRun(t, "prometheus-agent", true)
	checkScrapeAccount(t, res, ingested)
	v := storageResult(t, res, "prom").Verify
	if v == nil || v.CheckedSamples == 0 {
		t.Fatalf("read-back on Prometheus: %+v, want samples checked", v)
	}
	if !v.Exact() {
		t.Errorf("read-back on Prometheus: %s; examples %q", v.Verdict(), v.Examples)
	}
	checkNothingLost(t, res, "vm")
}

// TestScrapeExporter serves the real node_exporter behind tsbench's 1 s cache to vmagent at
// 100 targets × 4 s: node_exporter refuses more than 40 scrapes at once, so without the cache
// this would fail. Nothing is read back: the exporter's values are not the workload's. 4 s,
// not 1 s, since the agent's scrape timeout is the interval: beside a second make test a 1 s
// scrape timed out once, and at load 20 (several test runs and benchmarks beside it) 25 of
// 2 s did; a page served and never taken rightly unbalances the account.
func TestScrapeExporter(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus", "vmagent", "prometheus-node-exporter")
	addr := freeAddr(t)
	ne := exec.Command("prometheus-node-exporter", "--web.listen-address="+addr)
	if err := ne.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ne.Process.Kill(); _ = ne.Wait() })
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	cfg := fmt.Sprintf(`
duration: 20s
targetsCount: 100
scrapeInterval: 4s
scrapeConfigUpdatePercent: 0
observeInterval: 5s
sender: vmagent
exporterURL: http://%s/metrics
remoteStorages:
  vm: {writeURL: %sapi/v1/write, readURL: %s}
`, addr, vm.URL, vm.URL)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	res := rr.results
	snd := res.Sender
	if snd == nil || snd.ServedScrapes < 100*4 {
		t.Fatalf("sender %+v: want at least 400 scrapes served (100 targets × 4 s over 20 s)", snd)
	}
	// Every page came from the cache: at most one fetch a second, however many targets.
	if snd.ExporterFetches < 10 || snd.ExporterFetches > 25 {
		t.Errorf("%d exporter fetches over a 20 s load: want at most one per second", snd.ExporterFetches)
	}
	if snd.ScrapedSamples == nil || *snd.ScrapedSamples != snd.ServedSamples {
		t.Errorf("vmagent scraped %v samples, tsbench served %d", snd.ScrapedSamples, snd.ServedSamples)
	}
	s := storageResult(t, res, "vm")
	if s.Write == nil || snd.AppendedSamples == nil || s.Write.AckedSamples != *snd.AppendedSamples {
		t.Errorf("vm's write section %+v, want all %v samples vmagent took in acked", s.Write, snd.AppendedSamples)
	}
	if got := scrapeMetric(t, vm.URL+"metrics", "vm_rows_inserted_total", map[string]string{"type": "promremotewrite"}); s.Write != nil && got-canary(s) != float64(s.Write.AckedSamples) {
		t.Errorf("vm ingested %.0f samples, vmagent acked %d and tsbench %.0f canary samples", got, s.Write.AckedSamples, canary(s))
	}
	if snd.ReadBack == "" || s.Verify != nil {
		t.Errorf("read-back %q, verify %+v: want it to say there is nothing to check", snd.ReadBack, s.Verify)
	}
	if diff := cmp.Diff([]string(nil), res.AccountingErrors); diff != "" {
		t.Errorf("accounting errors (-want +got):\n%s", diff)
	}
}

// freeAddr is a free loopback address.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestScrapeSenderURL is scrape mode with an agent the user runs: vmagent, started here with
// a scrape config naming tsbench's http_sd at -httpListenAddr, before tsbench. tsbench serves
// the targets, prints the config to use, and reads the account from vmagent's counters.
func TestScrapeSenderURL(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "vmagent")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	listen := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agent, err := local.StartAgent(ctx, local.KindVMAgent, "user-vmagent", func(workDir string) ([]string, error) {
		path := filepath.Join(workDir, "scrape.yml")
		sc := fmt.Sprintf("scrape_configs:\n- job_name: node_exporter\n  scrape_interval: 2s\n  http_sd_configs:\n  - url: http://%s/sd\n", listen)
		return []string{"-promscrape.config=" + path, "-remoteWrite.url=" + vm.URL + "api/v1/write", "-promscrape.httpSDCheckInterval=2s"},
			os.WriteFile(path, []byte(sc), 0o600)
	}, false, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Stop() })
	dir := testDir(t)
	cfgPath := filepath.Join(dir, "bench.yaml")
	cfg := fmt.Sprintf(`
duration: 20s
targetsCount: 10
scrapeInterval: 2s
scrapeConfigUpdatePercent: 0
observeInterval: 5s
sender: vmagent
senderURL: %s
remoteStorages:
  vm: {writeURL: %sapi/v1/write, readURL: %s}
`, agent.URL, vm.URL, vm.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	runCtx, runCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer runCancel()
	out := filepath.Join(dir, "out")
	cmd := exec.CommandContext(runCtx, tsbenchBin, "run", "-config", cfgPath, "-out", out, "-httpListenAddr", listen)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tsbench run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	// The config to give the agent comes with the progress lines, on stderr.
	if want := "- url: http://" + listen + "/sd"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not give the scrape config with %q:\n%s", want, stderr.String())
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	snd := res.Sender
	if snd == nil || snd.URL != agent.URL || snd.ServedScrapes < 10*8 || snd.ScrapedSamples == nil || *snd.ScrapedSamples != snd.ServedSamples {
		t.Fatalf("sender %+v: want vmagent at %s scraping at least 80 pages, all of them counted", snd, agent.URL)
	}
	if r := snd.Resources; r == nil || r.CPUCoresMean == nil || r.RSSBytesMean == nil {
		t.Errorf("the agent's resources %+v: want CPU and RSS from its /metrics", r)
	}
	s := storageResult(t, res, "vm")
	got := scrapeMetric(t, vm.URL+"metrics", "vm_rows_inserted_total", map[string]string{"type": "promremotewrite"}) - canary(s)
	if s.Write == nil || snd.AppendedSamples == nil || s.Write.AckedSamples != *snd.AppendedSamples || got != float64(s.Write.AckedSamples) {
		t.Errorf("write %+v, vmagent took in %v, vm ingested %.0f: want all equal", s.Write, snd.AppendedSamples, got)
	}
	if diff := cmp.Diff([]string(nil), res.AccountingErrors); diff != "" {
		t.Errorf("accounting errors (-want +got):\n%s", diff)
	}
}
