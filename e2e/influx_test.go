package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/storage"
)

// TestInfluxDBWithoutQueryAPI runs tsbench against the real InfluxDB 1.6 from Debian, a storage
// that takes Prometheus remote write and serves remote read but has no Prometheus query API
// (issue 10). Its root as readURL answers 404: tsbench says so in one line and sends it no
// query, so no query error is counted; the writes are acked and counted; the read-back goes
// through remote read, checks every value written and reports what InfluxDB changed: it keeps
// no NaN, so neither the NaN samples nor the staleness markers. The ?p= password in its URLs
// shows nowhere.
func TestInfluxDBWithoutQueryAPI(t *testing.T) {
	parallel(t)
	requireBinaries(t, "influxd")
	influx := startStorage(t, storage.KindInfluxDB, "influx")
	const secret = "s3cret-pw"
	// 10 targets every 5 s for 20 s, a fifth of them churned at 10 s: about 35,000 values and
	// 1,700 staleness markers, fewer than verifySamples, so every one is checked.
	cfg := fmt.Sprintf(`
duration: 20s
targetsCount: 10
scrapeInterval: 5s
scrapeConfigUpdatePercent: 20
scrapeConfigUpdateInterval: 10s
queryInterval: 5s
verifySamples: 200000
remoteStorages:
  influx:
    writeURL: %[1]sapi/v1/prom/write?db=%[2]s&u=bench&p=%[3]s
    readURL: %[1]s?u=bench&p=%[3]s
    remoteReadURL: %[1]sapi/v1/prom/read?db=%[2]s&u=bench&p=%[3]s
`, influx.URL, storage.InfluxDatabase, secret)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	if rr.results == nil {
		t.Fatal("no results")
	}
	raw, err := os.ReadFile(filepath.Join(rr.outDir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"stdout": rr.stdout, "stderr": rr.stderr, "results.json": string(raw)} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows the password", what)
		}
	}

	// One clear line about the missing query API, and no query at all.
	var noAPI []string
	for line := range strings.SplitSeq(rr.stderr, "\n") {
		if strings.Contains(line, "no Prometheus query API at readURL") {
			noAPI = append(noAPI, line)
		}
		if strings.Contains(line, "query error") {
			t.Errorf("a query was sent: %s", line)
		}
	}
	t.Logf("%s", strings.Join(noAPI, "\n"))
	if len(noAPI) != 1 || !strings.Contains(noAPI[0], "storage=influx") || !strings.Contains(noAPI[0], "http_404") ||
		!strings.Contains(noAPI[0], "remoteReadURL") {
		t.Errorf("lines about the query API: %q, want one naming influx, its 404 and remoteReadURL", noAPI)
	}
	if !strings.Contains(rr.stdout, "no query API") {
		t.Errorf("summary does not say \"no query API\":\n%s", rr.stdout)
	}
	s := storageResult(t, rr.results, "influx")
	if s.Query != nil {
		t.Errorf("query section %+v, want none", s.Query)
	}
	if qa := s.QueryAPI; qa == nil || qa.Available || !strings.HasPrefix(qa.Answer, "http_404") || !strings.Contains(qa.URL, "p=<secret>") {
		t.Errorf("queryAPI %+v, want unavailable after a 404, URL redacted", qa)
	}

	// Writes: acked and counted, nothing dropped or pending.
	w := s.Write
	if w == nil || w.AckedSamples == 0 || w.AckedSamples != w.GeneratedSamples || len(w.DroppedSamples) != 0 || w.PendingSamples != 0 {
		t.Fatalf("write %+v: want every sample acked", w)
	}
	if ok, diff := w.Balanced(); !ok {
		t.Errorf("accounting off by %d", diff)
	}
	if len(rr.results.AccountingErrors) != 0 {
		t.Errorf("accounting errors %v", rr.results.AccountingErrors)
	}

	// Read-back through remote read: every value written checked; InfluxDB returns every
	// number as written and drops every NaN, markers included.
	v := s.Verify
	if v == nil {
		t.Fatal("no verify section")
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	t.Logf("verify: %s", b)
	markers := rr.results.Workload.StaleMarkers
	if v.ReadBackVia != "remoteRead" || v.ReadErrors != 0 || v.UncheckedSamples != 0 || len(v.Errors) != 0 {
		t.Errorf("read back via %q, %d read errors, %d unchecked: %v", v.ReadBackVia, v.ReadErrors, v.UncheckedSamples, v.Errors)
	}
	if markers == 0 || v.CheckedSamples+markers != w.AckedSamples {
		t.Errorf("checked %d values + %d markers, acked %d: want every sample checked", v.CheckedSamples, markers, w.AckedSamples)
	}
	if v.MissingSamples != 0 || v.ChangedValues != 0 || v.DuplicateSamples != 0 || v.UnexpectedSamples != 0 || v.ShiftedTimestamps != 0 {
		t.Errorf("numbers changed: %s", v.Verdict())
	}
	if v.NaNAltered == 0 || v.CheckedStaleMarkers != markers || v.MissingStaleMarkers != markers {
		t.Errorf("NaN altered %d, markers checked %d missing %d of %d: want every NaN and marker reported lost",
			v.NaNAltered, v.CheckedStaleMarkers, v.MissingStaleMarkers, markers)
	}
	if len(v.Probes) != 0 || len(v.RuleDiffs) != 0 {
		t.Errorf("probes %d, rule diffs %d: want none without a query API", len(v.Probes), len(v.RuleDiffs))
	}
	if !strings.Contains(rr.stdout, "read-back influx (through remote read)") {
		t.Errorf("summary has no remote-read verdict:\n%s", rr.stdout)
	}
}
