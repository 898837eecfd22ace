package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEmbeddedDefault runs `tsbench run` with no config, as `make run` does (shortened to
// 2 minutes: every default rule and panel gets its turn even when a busy machine makes a
// storage drop ticks): tsbench starts VictoriaMetrics and Prometheus itself and reports write, query
// (every default rule, under the write load), resources and verification for both.
func TestEmbeddedDefault(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	rr := runTsbench(t, 6*time.Minute, "", "-duration", "2m")
	if rr.code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	res := rr.results
	if len(res.Storages) != 2 || res.Storages[0].Name != "prometheus" || res.Storages[1].Name != "victoriametrics" {
		t.Fatalf("storages %+v, want prometheus and victoriametrics in name order", res.Storages)
	}
	for _, s := range res.Storages {
		t.Run(s.Name, func(t *testing.T) {
			if s.Write == nil || s.Write.AckedSamples == 0 || s.Write.Dropped() != 0 || s.Write.PendingSamples != 0 {
				t.Errorf("write %+v: want acked > 0, nothing dropped or pending", s.Write)
			}
			checkReadLoad(t, s)
			r := s.Resources
			if r == nil {
				t.Fatal("no resources section")
			}
			for name, v := range map[string]*float64{
				"cpuCoresMean": r.CPUCoresMean, "rssBytesMax": r.RSSBytesMax, "diskBytesEnd": r.DiskBytesEnd,
				"bytesPerSample": r.BytesPerSample, "snapshotBytes": r.SnapshotBytes,
			} {
				if v == nil || *v <= 0 {
					t.Errorf("resources.%s = %v (reason %q), want > 0", name, v, r.Reasons[name])
				}
			}
			// The storage started empty: what it says it ingested is what tsbench acked, and
			// the freshness canary's samples beside it.
			if r.IngestedSamples == nil || *r.IngestedSamples-canary(s) != float64(s.Write.AckedSamples) {
				t.Errorf("resources.ingestedSamples %v (reason %q), want the %d acked and %.0f of the canary", deref(r.IngestedSamples), r.Reasons["ingestedSamples"], s.Write.AckedSamples, canary(s))
			}
			// /proc and the storage's own process_* metrics see the same process: they agree.
			if c := r.Crosscheck; c == nil {
				t.Error("no crosscheck of /proc against /metrics")
			} else {
				for _, pair := range [][2]*float64{{c.ProcCPUCoresMean, c.MetricsCPUCoresMean}, {c.ProcRSSBytesMean, c.MetricsRSSBytesMean}} {
					if pair[0] == nil || pair[1] == nil || !within(*pair[0], *pair[1], 0.10) {
						t.Errorf("/proc %v and /metrics %v differ by more than 10%%", deref(pair[0]), deref(pair[1]))
					}
				}
				t.Logf("%s: cpu cores /proc %.4f /metrics %.4f; rss /proc %.0f /metrics %.0f", s.Name,
					deref(c.ProcCPUCoresMean), deref(c.MetricsCPUCoresMean), deref(c.ProcRSSBytesMean), deref(c.MetricsRSSBytesMean))
			}
			v := s.Verify
			if v == nil {
				t.Fatal("no verify section")
			}
			// Issue 5: at least 10,000 samples per storage, checked in under 30 s, every read made.
			if v.CheckedSamples < 10_000 || v.DurationSeconds >= 30 {
				t.Errorf("verify checked %d samples in %.1fs, want >= 10000 in under 30s", v.CheckedSamples, v.DurationSeconds)
			}
			if v.ReadErrors != 0 || v.UncheckedSamples != 0 {
				t.Errorf("verify: %d reads failed, %d samples unchecked: %v", v.ReadErrors, v.UncheckedSamples, v.Errors)
			}
			if s.Name == "prometheus" {
				// Prometheus is the reference: it returns exactly what it was given and gives
				// the expected answer to every probe.
				if !v.Exact() {
					t.Errorf("prometheus verify %q, want exact; examples: %q", v.Verdict(), v.Examples)
				}
				for _, p := range v.Probes {
					if !p.Same {
						t.Errorf("prometheus probe %q: query %s expected %s, got %s", p.Name, p.Query, p.Expected, p.Got)
					}
				}
				if len(v.Probes) == 0 {
					t.Error("prometheus: no probes")
				}
			}
			t.Logf("%s: resources cpu %.3f cores, rss %.0f B, disk %.0f B, %.3f B/sample (snapshot %v); verify %+v",
				s.Name, deref(r.CPUCoresMean), deref(r.RSSBytesMax), deref(r.DiskBytesEnd), deref(r.BytesPerSample), deref(r.SnapshotBytesPerSample), *v)
		})
	}
	if res.Generator == nil || res.Generator.CPUCoresMean == nil {
		t.Errorf("generator figures missing: %+v", res.Generator)
	}
	html, err := os.ReadFile(filepath.Join(rr.outDir, "report.html"))
	if err != nil || !strings.Contains(string(html), "victoriametrics") {
		t.Errorf("report.html: %v", err)
	}
	if !strings.Contains(rr.stderr, "samples/s, lag") {
		t.Errorf("no progress line on stderr:\n%s", rr.stderr)
	}
	for _, want := range []string{"prometheus", "victoriametrics"} {
		if !strings.Contains(rr.stdout, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
