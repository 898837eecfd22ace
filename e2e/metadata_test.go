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

// TestMetadataIntoPrometheusReceiver sends the default profile (help, unit and type per
// family) over each protocol into Prometheus' own receiver, with sendMetadata: remote write
// 1.0 sends the metadata in requests of their own, counted apart from the samples, which the
// TSDB appended exactly as acked. Read back through /api/v1/metadata (the receiver serves
// what its remote-write handler appended): 2.0's metadata is kept family for family; 1.0's
// metadata field is ignored by Prometheus' handler and OTLP's is not recorded, so both are
// dropped.
func TestMetadataIntoPrometheusReceiver(t *testing.T) {
	parallel(t)
	recvs, storages := startReceivers(t)
	cfg := `
duration: 10s
targetsCount: 5
scrapeInterval: 5s
queryInterval: 10s
sendMetadata: true
remoteStorages:
` + storages
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	want := map[string]string{"rw1": "dropped", "rw2": "kept", "otlp": "dropped"}
	for name, verdict := range want {
		t.Run(name, func(t *testing.T) {
			s := storageResult(t, rr.results, name)
			w := s.Write
			if w == nil || w.AckedSamples == 0 || w.AckedSamples != w.GeneratedSamples {
				t.Fatalf("write %+v: want every sample acked", w)
			}
			checkAppended(t, recvs[name], s)
			if name == "rw1" {
				checkMetadataSent(t, w)
			} else if w.Metadata != nil {
				t.Errorf("metadata requests %+v over %s: want none (its series carry it)", w.Metadata, name)
			}
			checkMetadata(t, s.Verify, verdict)
		})
	}
}

// TestMetadataAgainstDebianPrometheusAndVictoriaMetrics sends the metadata over remote write
// 1.0 (sendMetadata) to Prometheus 2.42 and VictoriaMetrics: both answer 2xx and neither
// shows any of it at /api/v1/metadata (Prometheus answers from its scrape targets only).
func TestMetadataAgainstDebianPrometheusAndVictoriaMetrics(t *testing.T) {
	parallel(t)
	requireBinaries(t, "prometheus", "victoria-metrics")
	prom := startStorage(t, storage.KindPrometheus, "prom")
	vm := startStorage(t, storage.KindVictoriaMetrics, "vm")
	cfg := fmt.Sprintf(`
duration: 10s
targetsCount: 5
scrapeInterval: 5s
queryInterval: 10s
sendMetadata: true
remoteStorages:
  prom: {writeURL: %sapi/v1/write, readURL: %s}
  vm: {writeURL: %sapi/v1/write, readURL: %s}
`, prom.URL, prom.URL, vm.URL, vm.URL)
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	for _, name := range []string{"prom", "vm"} {
		t.Run(name, func(t *testing.T) {
			s := storageResult(t, rr.results, name)
			if w := s.Write; w == nil || w.AckedSamples == 0 || w.AckedSamples != w.GeneratedSamples {
				t.Fatalf("write %+v: want every sample acked", w)
			}
			checkMetadataSent(t, s.Write)
			checkMetadata(t, s.Verify, "dropped")
		})
	}
}

// checkMetadataSent checks that 1.0's metadata requests were sent, answered 2xx, and counted
// apart from the samples' requests.
func checkMetadataSent(t *testing.T, w *results.Write) {
	t.Helper()
	m := w.Metadata
	if m == nil || m.Families < 100 || m.BytesSent == 0 || m.RequestsByStatus["204"]+m.RequestsByStatus["200"] == 0 {
		t.Errorf("metadata requests %+v: want every family of the default profile sent, answered 2xx", m)
	}
}

// checkMetadata checks the metadata read-back's verdict, and for kept that every family was.
func checkMetadata(t *testing.T, v *results.Verify, verdict string) {
	t.Helper()
	if v == nil || v.Metadata == nil {
		t.Fatal("no metadata read-back")
	}
	m := v.Metadata
	if m.Verdict != verdict || m.Families < 100 {
		t.Errorf("metadata read-back %+v: want verdict %s over the profile's families", m, verdict)
	}
	if verdict == "kept" && m.Kept != m.Families {
		t.Errorf("metadata read-back %+v: want every family kept", m)
	}
	if verdict == "dropped" && m.Missing != m.Families {
		t.Errorf("metadata read-back %+v: want every family missing", m)
	}
}

// TestCreatedTimestampsIntoPrometheusReceiver writes remote write 2.0 into Prometheus' own
// receiver with and without created-timestamp-zero-ingestion and looks for the zero samples
// at each target's process start. Both say dropped: without the feature nothing is stored;
// with it, the head takes a zero sample only at most half a block (1 h) before the samples
// (TestReceiverCreatedZeroSampleWithinAnHour), and the simulated process starts lie 1 h to a
// week before the run. The floats read back exact beside it.
func TestCreatedTimestampsIntoPrometheusReceiver(t *testing.T) {
	parallel(t)
	var storages strings.Builder
	for _, name := range []string{"ct", "plain"} {
		r, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{CreatedZeroIngestion: name == "ct"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := r.Close(); err != nil {
				t.Error(err)
			}
		})
		fmt.Fprintf(&storages, "  %s: {writeURL: %s%s, readURL: %s, protocol: prometheus-rw2}\n", name, r.URL, storagetest.WritePath, r.URL)
	}
	cfg := `
duration: 10s
targetsCount: 5
scrapeInterval: 5s
queryInterval: 10s
remoteStorages:
` + storages.String()
	rr := runTsbench(t, 2*time.Minute, cfg)
	if rr.code != 0 || rr.results == nil {
		t.Fatalf("exit code %d; stderr:\n%s", rr.code, rr.stderr)
	}
	for name, verdict := range map[string]string{"ct": "dropped", "plain": "dropped"} {
		s := storageResult(t, rr.results, name)
		v := s.Verify
		if v == nil || v.CheckedSamples == 0 || v.MissingSamples+v.UnexpectedSamples+v.ChangedValues != 0 {
			t.Errorf("%s: read-back %+v: want every checked float exact", name, v)
		}
		if v == nil || v.Created == nil {
			t.Fatalf("%s: no created-timestamp read-back", name)
		}
		c := v.Created
		if c.Verdict != verdict || c.Checked < 100 || c.Missing != c.Checked {
			t.Errorf("%s: created read-back %+v: want %s", name, c, verdict)
		}
	}
}
