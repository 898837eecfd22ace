package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
)

// TestNativeHistogramsIntoPrometheusReceiver sends the default profile's summaries as native
// histograms beside them (nativeHistograms both, fromSummaries), with exemplars on 10 % of
// counter samples and histograms, over each protocol into Prometheus' own receiver (exemplar
// storage on): every sample and histogram is acked and appended, the floats read back exact,
// every native histogram read back through the query API as sent, bucket by bucket, and every
// exemplar through /api/v1/query_exemplars.
func TestNativeHistogramsIntoPrometheusReceiver(t *testing.T) {
	parallel(t)
	recvs, storages := startReceivers(t)
	cfg := `
duration: 20s
targetsCount: 10
scrapeInterval: 5s
queryInterval: 10s
nativeHistograms: {send: both, fromSummaries: true}
exemplars: {percent: 10}
remoteStorages:
` + storages
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	for name := range receiverProtocols {
		t.Run(name, func(t *testing.T) {
			s := storageResult(t, rr.results, name)
			w := s.Write
			if w == nil || w.AckedSamples == 0 || w.AckedSamples != w.GeneratedSamples {
				t.Fatalf("write %+v: want every sample acked", w)
			}
			checkAppended(t, recvs[name], s)
			v := s.Verify
			if v == nil || v.CheckedSamples == 0 || v.MissingSamples != 0 || v.UnexpectedSamples != 0 || v.ChangedValues != 0 {
				t.Errorf("read-back %+v: want every checked float exact", v)
			}
			checkNative(t, v, "kept")
			checkExemplars(t, v.Exemplars, name == "rw1")
		})
	}
}

// checkNative checks the native read-back's verdict, and for kept that every histogram was.
func checkNative(t *testing.T, v *results.Verify, verdict string) {
	t.Helper()
	if v == nil || v.NativeHistograms == nil {
		t.Fatal("no native histogram read-back")
	}
	n := v.NativeHistograms
	if n.Verdict != verdict || n.CheckedHistograms == 0 || n.Schemas["go_gc_duration_seconds"] == 0 {
		t.Errorf("native read-back %+v: want verdict %s, schema of go_gc_duration_seconds stated", n, verdict)
	}
	if verdict == "kept" && (n.Kept != n.CheckedHistograms || n.Changed+n.Missing != 0) {
		t.Errorf("native read-back %+v: want every histogram kept", n)
	}
	if (verdict == "dropped" || verdict == "refused") && n.Missing != n.CheckedHistograms {
		t.Errorf("native read-back %+v: want every histogram missing", n)
	}
}

// TestNativeHistogramsAgainstDebianPrometheus writes native histograms (nativeHistograms true,
// from the summaries) and exemplars over remote write 1.0 to two Prometheus 2.42: the one
// started with --enable-feature=native-histograms,exemplar-storage stores them as sent; the other answers 500 to every
// request that holds one, so it stores nothing, floats included: its batches are retried
// until maxRetryDuration and dropped (retry_timeout), and the read-back says refused.
func TestNativeHistogramsAgainstDebianPrometheus(t *testing.T) {
	parallel(t)
	requireBinaries(t, "prometheus")
	native := startStorageWith(t, storage.KindPrometheus, "native", local.SampleTypeFlags(storage.KindPrometheus, true, true))
	plain := startStorageWith(t, storage.KindPrometheus, "plain", nil)
	cfg := fmt.Sprintf(`
duration: 15s
targetsCount: 5
scrapeInterval: 5s
queryInterval: 10s
maxRetryDuration: 5s
nativeHistograms: {send: true, fromSummaries: true}
exemplars: {percent: 10}
remoteStorages:
  native: {writeURL: %sapi/v1/write, readURL: %s}
  plain: {writeURL: %sapi/v1/write, readURL: %s}
`, native.URL, native.URL, plain.URL, plain.URL)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.results == nil || (rr.code != 0 && rr.code != 3) {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	s := storageResult(t, rr.results, "native")
	if w := s.Write; w == nil || w.AckedSamples == 0 || w.AckedSamples != w.GeneratedSamples {
		t.Fatalf("native: write %+v: want every sample acked", w)
	}
	checkNative(t, s.Verify, "kept")
	checkExemplars(t, s.Verify.Exemplars, true)
	s = storageResult(t, rr.results, "plain")
	if w := s.Write; w == nil || w.AckedSamples != 0 || w.RequestsByStatus["500"] == 0 || w.DroppedSamples["retry_timeout"] == 0 {
		t.Fatalf("plain: write %+v: want nothing acked, 500s, batches dropped at retry_timeout", w)
	}
	checkNative(t, s.Verify, "refused")
	if e := s.Verify.Exemplars; e == nil || e.Verdict != "dropped" || e.Checked == 0 {
		t.Errorf("plain: exemplar read-back %+v: want dropped (nothing stored)", e)
	}
}

// checkExemplars checks the exemplar read-back: every exemplar kept, except over remote write
// 1.0 (rw1) a few of native histograms: Prometheus' 1.0 handler appends a series' exemplars
// before its histograms, so the exemplar of the histogram that creates its series finds no
// series and is dropped. A counter's is never lost.
func checkExemplars(t *testing.T, e *results.Exemplars, rw1 bool) {
	t.Helper()
	if e == nil || e.Checked == 0 || e.Changed != 0 {
		t.Fatalf("exemplar read-back %+v: want every exemplar kept", e)
	}
	if !rw1 && e.Kept != e.Checked {
		t.Errorf("exemplar read-back %+v: want every exemplar kept", e)
	}
	if rw1 && e.Missing > e.Checked/20 {
		t.Errorf("exemplar read-back %+v: more than 5%% missing", e)
	}
	for _, x := range e.Examples {
		if !strings.Contains(x, "go_gc_duration_seconds") {
			t.Errorf("exemplar of a counter lost: %s", x)
		}
	}
}

// startStorageWith starts a local storage with extra flags, stopped at the test's end.
func startStorageWith(t *testing.T, kind, name string, extra []string) *local.Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := local.StartWith(ctx, storage.Kind(kind), name, false, 0, extra, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Stop(); err != nil {
			t.Error(err)
		}
	})
	keepOnFailure(t, l.LogPath)
	return l
}
