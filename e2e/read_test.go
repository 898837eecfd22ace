package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// checkReadLoad asserts that every default query ran against the storage without an error
// and that the latency figures are filled.
func checkReadLoad(t *testing.T, s results.Storage) {
	t.Helper()
	q := s.Query
	if q == nil {
		t.Fatal("no query section")
	}
	if q.Executed == 0 || q.OK != q.Executed-sum(q.Errors) {
		t.Errorf("query executed %d ok %d errors %v", q.Executed, q.OK, q.Errors)
	}
	if len(q.Errors) != 0 {
		t.Errorf("query errors %v", q.Errors)
	}
	for what, l := range map[string]results.Latency{"latency": q.LatencySeconds, "service time": q.ServiceSeconds} {
		if l.P50 == nil || l.P90 == nil || l.P99 == nil || l.Max == nil ||
			*l.P50 <= 0 || *l.P90 < *l.P50 || *l.P99 < *l.P90 || *l.Max < *l.P99 {
			t.Errorf("%s %+v: want 0 < p50 <= p90 <= p99 <= max", what, l)
		}
	}
	instant := 0
	for _, pq := range q.PerQuery {
		if pq.Executed == 0 {
			t.Errorf("%s %q never executed", pq.Kind, pq.Name)
		}
		if len(pq.Errors) != 0 {
			t.Errorf("%s %q errors %v: %s", pq.Kind, pq.Name, pq.Errors, pq.FirstError)
		}
		if pq.Kind == "instant" {
			instant++
		}
	}
	if instant < 30 {
		t.Errorf("%d instant rules, want the default set of at least 30", instant)
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// TestBadRuleRunsBeside checks that a rule whose PromQL does not parse is still sent to every
// storage, shows its errors there, and does not stop the other rules.
func TestBadRuleRunsBeside(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics", "prometheus")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	prom := startStorage(t, storage.KindPrometheus, "prom")
	dir := testDir(t)
	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, []byte(`groups:
  - name: mixed
    rules:
      - alert: Good
        expr: up == 0 or vector(1)
      - alert: Broken
        expr: sum(rate(node_cpu_seconds_total[5m]) by (instance)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
duration: 20s
targetsCount: 5
scrapeInterval: 5s
queryInterval: 5s
queryRules: %s
remoteStorages:
  vm: {writeURL: %sapi/v1/write, readURL: %s}
  prom: {writeURL: %sapi/v1/write, readURL: %s}
`, rules, vm.URL, vm.URL, prom.URL, prom.URL)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.results == nil {
		t.Fatalf("no results; exit %d stderr:\n%s", rr.code, rr.stderr)
	}
	for _, name := range []string{"prom", "vm"} {
		s := storageResult(t, rr.results, name)
		if s.Query == nil {
			t.Fatalf("%s: no query section", name)
		}
		got := map[string]results.QueryStat{}
		for _, pq := range s.Query.PerQuery {
			got[pq.Name] = pq
		}
		good, broken := got["Good"], got["Broken"]
		if good.Executed == 0 || len(good.Errors) != 0 {
			t.Errorf("%s: Good executed %d errors %v", name, good.Executed, good.Errors)
		}
		if broken.Executed == 0 || sum(broken.Errors) != broken.Executed {
			t.Errorf("%s: Broken executed %d errors %v: every evaluation must fail", name, broken.Executed, broken.Errors)
		}
	}
}
