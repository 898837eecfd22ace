package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
)

// TestShardsAddUpToOneProcess runs one workload twice at the same time, from the same
// startTime: as 3 shard processes (-shard 0/3, 1/3, 2/3) into one VictoriaMetrics, and as one
// process into another. After `report merge`, the shards' sum is the single process's:
// generated and acked samples, every series in the storage; the read-back is clean and the
// query load ran once, on the lead shard.
func TestShardsAddUpToOneProcess(t *testing.T) {
	parallel(t)
	requireBinaries(t, "victoria-metrics")
	sharded := startStorage(t, storage.KindVictoriaMetrics, "sharded")
	single := startStorage(t, storage.KindVictoriaMetrics, "single")
	// 6 targets × 2 replicas × ~840 series / 2 s ≈ 5k samples/s; churn: 1 target per replica
	// every 10 s, so staleness markers and new series are part of what must add up.
	start := time.Now().Add(15 * time.Second).Truncate(time.Second)
	config := func(vm *local.Process) string {
		return fmt.Sprintf(`
startTime: %s
duration: 40s
# The storages' series are compared name by name: no freshness canary, whose series are
# named by their write time and so differ between the two runs.
freshness: {interval: 0s}
targetsCount: 6
writeReplicas: 2
scrapeInterval: 2s
scrapeConfigUpdatePercent: 20
scrapeConfigUpdateInterval: 10s
queryInterval: 10s
verifySamples: 3000
remoteStorages:
  vm: {writeURL: %sapi/v1/write, readURL: %s}
`, start.UTC().Format(time.RFC3339), vm.URL, vm.URL)
	}
	dir := testDir(t)
	runs := []struct{ name, config, shard string }{
		{"single", config(single), ""},
		{"shard-0", config(sharded), "0/3"},
		{"shard-1", config(sharded), "1/3"},
		{"shard-2", config(sharded), "2/3"},
	}
	codes := make([]int, len(runs))
	stderrs := make([]string, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		cfgPath := filepath.Join(dir, r.name+".yaml")
		if err := os.WriteFile(cfgPath, []byte(r.config), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"run", "-config", cfgPath, "-out", filepath.Join(dir, r.name), "-httpListenAddr", "127.0.0.1:0"}
		if r.shard != "" {
			args = append(args, "-shard", r.shard)
		}
		wg.Go(func() { codes[i], _, stderrs[i] = runBinary(3*time.Minute, args...) })
	}
	wg.Wait()
	for i, r := range runs {
		if codes[i] != 0 {
			t.Fatalf("%s: exit code %d; stderr:\n%s", r.name, codes[i], stderrs[i])
		}
	}
	code, stdout, stderr := runBinary(time.Minute, "report", "merge", "-out", filepath.Join(dir, "merged"),
		filepath.Join(dir, "shard-2", "results.json"), filepath.Join(dir, "shard-0", "results.json"), filepath.Join(dir, "shard-1", "results.json"))
	if code != 0 {
		t.Fatalf("report merge: exit code %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	read := func(name string) *results.Run {
		r, err := results.ReadFile(filepath.Join(dir, name, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one, merged := read("single"), read("merged")
	ow, mw := storageResult(t, one, "vm").Write, storageResult(t, merged, "vm").Write
	if ow.GeneratedSamples == 0 || mw.GeneratedSamples != ow.GeneratedSamples || mw.AckedSamples != ow.AckedSamples {
		t.Errorf("merged generated %d acked %d; the single process generated %d acked %d",
			mw.GeneratedSamples, mw.AckedSamples, ow.GeneratedSamples, ow.AckedSamples)
	}
	if len(mw.DroppedSamples) != 0 || mw.PendingSamples != 0 || len(merged.AccountingErrors) != 0 {
		t.Errorf("merged dropped %v pending %d accounting errors %v", mw.DroppedSamples, mw.PendingSamples, merged.AccountingErrors)
	}
	if diff := cmp.Diff(one.Workload, merged.Workload); diff != "" {
		t.Errorf("merged workload differs from the single process's (-single +merged):\n%s", diff)
	}
	if one.Workload.StaleMarkers == 0 {
		t.Error("no staleness markers: churn did not happen within the run")
	}

	// Both storages hold exactly the same series.
	from := start.Add(-time.Minute)
	oneSeries, shardSeries := seriesList(t, single.URL, from), seriesList(t, sharded.URL, from)
	if len(oneSeries) == 0 {
		t.Fatal("no series in the single process's storage")
	}
	if diff := cmp.Diff(oneSeries, shardSeries); diff != "" {
		t.Errorf("series differ (-single +sharded):\n%s", diff)
	}

	// The read-back of every shard is clean, and so is their sum: nothing missing, extra,
	// duplicated or unread, every staleness marker checked honoured. (VictoriaMetrics'
	// own changes, NaN dropped and values rounded to its precision, are the same in the
	// single process's read-back and not the shards' doing.)
	mv := storageResult(t, merged, "vm").Verify
	if msg := unclean(mv); msg != "" {
		t.Errorf("merged read-back: %s", msg)
	}
	if msg := unclean(storageResult(t, one, "vm").Verify); msg != "" {
		t.Errorf("single process's read-back: %s", msg)
	}
	var checked int64
	for _, name := range []string{"shard-0", "shard-1", "shard-2"} {
		v := storageResult(t, read(name), "vm").Verify
		if msg := unclean(v); msg != "" {
			t.Errorf("%s read-back: %s", name, msg)
			continue
		}
		checked += v.CheckedSamples
	}
	if mv.CheckedSamples != checked {
		t.Errorf("merged read-back checked %d samples, the shards %d", mv.CheckedSamples, checked)
	}

	// The query load ran once: on shard 0 (the lead) only, as often as in the single process.
	for _, name := range []string{"shard-1", "shard-2"} {
		s := storageResult(t, read(name), "vm")
		if s.Query != nil || s.Resources != nil {
			t.Errorf("%s ran queries (%v) or observed the storage (%v): only the lead shard does", name, s.Query != nil, s.Resources != nil)
		}
	}
	lq, oq := storageResult(t, read("shard-0"), "vm").Query, storageResult(t, one, "vm").Query
	mq := storageResult(t, merged, "vm").Query
	if lq == nil || oq == nil || mq == nil || lq.Executed == 0 {
		t.Fatalf("query sections: lead %v single %v merged %v", lq != nil, oq != nil, mq != nil)
	}
	if mq.Executed != lq.Executed || !within(float64(mq.Executed), float64(oq.Executed), 0.05) {
		t.Errorf("queries executed: merged %d, lead shard %d, single process %d; want the lead's, about the single's", mq.Executed, lq.Executed, oq.Executed)
	}
	if storageResult(t, merged, "vm").Resources == nil || merged.Generator == nil {
		t.Error("merged results lack the storage's resources or the generators'")
	}
}

// unclean says what a read-back lost or added, "" when nothing.
func unclean(v *results.Verify) string {
	switch {
	case v == nil || v.CheckedSamples == 0:
		return "nothing checked"
	case v.MissingSamples+v.UnexpectedSamples+v.DuplicateSamples+v.StalenessIgnored+v.ReadErrors+v.UncheckedSamples > 0:
		return v.Verdict()
	case v.CheckedStaleMarkers == 0:
		return "no staleness marker checked"
	}
	return ""
}

// runBinary runs tsbench with args, bounded by timeout, and returns its exit code and output.
func runBinary(timeout time.Duration, args ...string) (code int, stdout, stderr string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tsbenchBin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		return -1, out.String(), errOut.String() + err.Error()
	}
	return 0, out.String(), errOut.String()
}

// seriesList is every series a storage holds since from, each as its sorted label set.
func seriesList(t *testing.T, readURL string, from time.Time) []string {
	t.Helper()
	form := url.Values{
		"match[]": {`{__name__=~".+"}`}, "start": {strconv.FormatInt(from.Unix(), 10)},
		"end": {strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10)},
	}
	resp, err := http.PostForm(readURL+"api/v1/series", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string              `json:"status"`
		Data   []map[string]string `json:"data"`
		Error  string              `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("series: %v %s", err, body.Error)
	}
	var out []string
	for _, ls := range body.Data {
		var parts []string
		for k, v := range ls {
			parts = append(parts, k+"="+strconv.Quote(v))
		}
		slices.Sort(parts)
		out = append(out, strings.Join(parts, ","))
	}
	slices.Sort(out)
	return out
}
