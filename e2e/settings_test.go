package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// TestStorageSettings gives tsbench a VictoriaMetrics started with its default
// -search.latencyOffset=30s (as the README's example keeps it) and a Prometheus as tsbench
// starts it (issue 39): tsbench reads their settings from them, the summary names the offset
// and warns that it hides the newest 30 s from the probes, and results.json keeps both
// under settings, the warning under settingsWarnings.
func TestStorageSettings(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	vm := startStorageWith(t, storage.KindVictoriaMetrics, "vm", []string{"-search.latencyOffset=30s"})
	prom := startStorage(t, storage.KindPrometheus, "prom")
	cfg := `
duration: 15s
targetsCount: 2
remoteStorages:
  vm: {writeURL: ` + vm.Storage.WriteURL + `, readURL: ` + vm.Storage.ReadURL + `}
  prom: {writeURL: ` + prom.Storage.WriteURL + `, readURL: ` + prom.Storage.ReadURL + `}
`
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.results == nil {
		t.Fatalf("exit %d, no results; stderr:\n%s", rr.code, rr.stderr)
	}
	warning := "-search.latencyOffset=30s hides each series' newest 30s from instant and range queries, longer than the 3s the probes wait after the load"
	summary := strings.Join(strings.Fields(rr.stdout), " ") // columns aligned by spaces
	// Prometheus says its version on /metrics (prometheus_build_info); Debian's VictoriaMetrics
	// 1.79 says none, and a storage the config names has no package version from tsbench.
	p, vmRes := storageResult(t, rr.results, "prom"), storageResult(t, rr.results, "vm")
	if p.Version == "" || !strings.HasPrefix(p.Version, "2.") && !strings.HasPrefix(p.Version, "3.") {
		t.Errorf("prom version %q, want the one its prometheus_build_info says", p.Version)
	}
	vmLine := "vm -dedup.minScrapeInterval=0s"
	if vmRes.Version != "" {
		vmLine = "vm version " + vmRes.Version + " -dedup.minScrapeInterval=0s"
	}
	for _, want := range []string{
		"settings of the storages that change what tsbench measures:",
		"prom version " + p.Version + " --storage.tsdb.retention.time=15d storage.tsdb.out_of_order_time_window: 0s",
		vmLine + " -retentionPeriod=31d -search.latencyOffset=30s",
		"warning vm: " + warning,
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, rr.stdout)
		}
	}
	if !strings.Contains(rr.stderr, "storage setting hides data from the checks") {
		t.Errorf("the log has no warning of the offset:\n%s", rr.stderr)
	}
	s := vmRes
	if !slices.Contains(s.Settings, "-search.latencyOffset=30s") {
		t.Errorf("vm settings %q, want -search.latencyOffset=30s among them", s.Settings)
	}
	if len(s.SettingsWarnings) == 0 || !strings.HasPrefix(s.SettingsWarnings[0], warning) {
		t.Errorf("vm settingsWarnings %q, want the first to say %q", s.SettingsWarnings, warning)
	}
	// The warning is no false alarm: the newest-minute probe was answered as of 30 s ago.
	// The raw read-back is not hidden: VictoriaMetrics answers selector[window] as an export.
	if v := s.Verify; v == nil || v.MissingSamples != 0 || !slices.ContainsFunc(v.Probes, func(p results.Probe) bool {
		return p.Name == "instant query in the newest minute" && !p.Same
	}) {
		t.Errorf("vm read-back %+v: want no sample missing and the newest-minute probe differing", v)
	}
	// Read from Prometheus: the retention it was started with and the window of its config.
	if want := []string{"--storage.tsdb.retention.time=15d", "storage.tsdb.out_of_order_time_window: 0s"}; !slices.Equal(p.Settings, want) || len(p.SettingsWarnings) != 0 {
		t.Errorf("prom settings %q, warnings %q; want %q and none", p.Settings, p.SettingsWarnings, want)
	}
}
