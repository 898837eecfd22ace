package e2e

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// TestProtocolsIntoPrometheusReceiver runs the same 10-target workload over each protocol into
// Prometheus' own receive side (its remote-write handler with 2.0 on, its OTLP handler, a
// real TSDB), served in this test process while the tsbench binary writes to it over
// loopback: every storage acks what its TSDB appended, and reads back exactly what it was
// given (for OTLP under the names Prometheus' translation gives).
func TestProtocolsIntoPrometheusReceiver(t *testing.T) {
	parallel(t)
	recvs, storages := startReceivers(t)
	cfg := `
duration: 20s
targetsCount: 10
scrapeInterval: 5s
queryInterval: 10s
remoteStorages:
` + storages
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	for name, proto := range receiverProtocols {
		t.Run(name, func(t *testing.T) {
			s := storageResult(t, rr.results, name)
			w := s.Write
			if w == nil {
				t.Fatal("no write section")
			}
			if w.Protocol != proto || w.AckedSamples == 0 || w.AckedSamples != w.GeneratedSamples || w.UnconfirmedSamples != 0 || len(w.Notes) != 0 {
				t.Errorf("protocol %q, generated %d, acked %d, unconfirmed %d, dropped %v, notes %q: want %s, all acked and confirmed",
					w.Protocol, w.GeneratedSamples, w.AckedSamples, w.UnconfirmedSamples, w.DroppedSamples, w.Notes, proto)
			}
			checkAppended(t, recvs[name], s)
			v := s.Verify
			if v == nil || v.CheckedSamples == 0 || v.MissingSamples != 0 || v.UnexpectedSamples != 0 || v.ChangedValues != 0 ||
				v.DuplicateSamples != 0 || v.NaNAltered != 0 || v.ShiftedTimestamps != 0 || v.StalenessIgnored != 0 || v.ReadErrors != 0 {
				t.Errorf("read-back %+v: want every checked sample exact", v)
			}
			if !strings.Contains(rr.stdout, proto) {
				t.Errorf("the summary does not name %s", proto)
			}
		})
	}
}

// TestRW2AgainstDebianPrometheus writes remote write 2.0 to Prometheus 2.42, which predates
// it: its handler reads the 2.0 body as a 1.0 request with no series, answers 204 and stores
// nothing. tsbench counts the samples acked but unconfirmed and says so; the read-back shows
// them missing, so nothing is lost from the account unnoticed.
func TestRW2AgainstDebianPrometheus(t *testing.T) {
	parallel(t)
	requireBinaries(t, "prometheus")
	prom := startStorage(t, storage.KindPrometheus, "prom")
	cfg := fmt.Sprintf(`
duration: 15s
targetsCount: 5
scrapeInterval: 5s
queryInterval: 10s
remoteStorages:
  prom: {writeURL: %sapi/v1/write, readURL: %s, protocol: prometheus-rw2}
`, prom.URL, prom.URL)
	start := time.Now()
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.results == nil || (rr.code != 0 && rr.code != 3) {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	w := storageResult(t, rr.results, "prom").Write
	if w == nil {
		t.Fatal("no write section")
	}
	if ok, diff := w.Balanced(); !ok || w.GeneratedSamples == 0 {
		t.Errorf("accounting off by %d: %+v", diff, w)
	}
	if w.UnconfirmedSamples == 0 || w.UnconfirmedSamples != w.AckedSamples || w.Protocol != "prometheus-rw2" {
		t.Errorf("acked %d, unconfirmed %d, protocol %q: want every acked sample unconfirmed", w.AckedSamples, w.UnconfirmedSamples, w.Protocol)
	}
	const note = "receiver did not confirm RW 2.0 writes"
	if len(w.Notes) != 1 || !strings.Contains(w.Notes[0], note) || !strings.Contains(rr.stdout, "note prom: "+note) {
		t.Errorf("notes %q; the summary must say %q", w.Notes, note)
	}
	if n := seriesCount(t, prom.URL, `{job=~".+"}`, start); n != 0 {
		t.Errorf("Prometheus 2.42 holds %d series from 2.0 requests, want none", n)
	}
	// Every checked sample shows missing (a NaN one as NaN altered: it is not told apart).
	v := storageResult(t, rr.results, "prom").Verify
	if v == nil || v.CheckedSamples == 0 || v.MissingSamples+v.NaNAltered != v.CheckedSamples {
		t.Fatalf("read-back %+v: every checked sample must show missing", v)
	}
	// The verdict says so in one line: stored nothing of what it acked, over which protocol.
	if sn := v.StoredNothing; sn == nil || sn.Protocol != "prometheus-rw2" || sn.Acked != w.AckedSamples {
		t.Errorf("stored nothing %+v, want protocol prometheus-rw2 and acked %d", sn, w.AckedSamples)
	}
	if want := fmt.Sprintf("read-back prom: stored nothing: it answered 2xx to %d samples over prometheus-rw2", w.AckedSamples); !strings.Contains(rr.stdout, want) {
		t.Errorf("the summary does not say %q", want)
	}
}

// receiverProtocols names the storages startReceivers starts, by their protocol.
var receiverProtocols = map[string]string{"rw1": "prometheus-rw1", "rw2": "prometheus-rw2", "otlp": "otlp-http"}

// startReceivers starts one Prometheus receiver in-process per protocol, stopped at the
// test's end, and returns them with their remoteStorages entries.
func startReceivers(t *testing.T) (map[string]*storagetest.Receiver, string) {
	t.Helper()
	recvs := map[string]*storagetest.Receiver{}
	var storages strings.Builder
	for _, name := range []string{"otlp", "rw1", "rw2"} {
		r, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := r.Close(); err != nil {
				t.Error(err)
			}
		})
		recvs[name] = r
		path := storagetest.WritePath
		if name == "otlp" {
			path = storagetest.OTLPPath
		}
		fmt.Fprintf(&storages, "  %s: {writeURL: %s%s, readURL: %s/, protocol: %s}\n", name, r.URL, path, r.URL, receiverProtocols[name])
	}
	return recvs, storages.String()
}

// checkAppended: the receiver's TSDB appended exactly what tsbench counts acked, its
// workload's samples and the freshness canary's.
func checkAppended(t *testing.T, recv *storagetest.Receiver, s results.Storage) {
	t.Helper()
	if n, err := recv.Appended(); err != nil || n-int64(canary(s)) != s.Write.AckedSamples {
		t.Errorf("the TSDB appended %d samples (%v), tsbench acked %d and %.0f freshness canaries", n, err, s.Write.AckedSamples, canary(s))
	}
}
