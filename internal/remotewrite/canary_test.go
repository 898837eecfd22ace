package remotewrite

import (
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// TestCanaryInEveryProtocol writes one canary request in each protocol into Prometheus' own
// receive side: each is acked, and the TSDB holds both series with the value and timestamp
// sent; a refusal is the storage's status and an error.
func TestCanaryInEveryProtocol(t *testing.T) {
	series := [][]workload.Label{
		{{Name: "__name__", Value: "tsbench_canary"}, {Name: "canary", Value: "x"}, {Name: "instance", Value: "x"}, {Name: "job", Value: "tsbench_canary"}},
		{{Name: "__name__", Value: "tsbench_canary_series"}, {Name: "canary", Value: "x"}, {Name: "canary_ts", Value: "1700000000123"}, {Name: "instance", Value: "x"}, {Name: "job", Value: "tsbench_canary"}},
	}
	want := map[string][]storagetest.Sample{
		`{__name__="tsbench_canary", canary="x", instance="x", job="tsbench_canary"}`:                                   {{T: 1700000000123, V: 1700000000123}},
		`{__name__="tsbench_canary_series", canary="x", canary_ts="1700000000123", instance="x", job="tsbench_canary"}`: {{T: 1700000000123, V: 1700000000123}},
	}
	for name, st := range map[string]config.Storage{
		"rw1":       {},
		"rw2":       {Protocol: config.ProtocolRW2},
		"otlp":      {Protocol: config.ProtocolOTLP},
		"otlp-none": {Protocol: config.ProtocolOTLP, OTLPCompression: config.OTLPNone},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close() })
			st.WriteURL = r.URL + storagetest.WritePath
			if st.Protocol == config.ProtocolOTLP {
				st.WriteURL = r.URL + storagetest.OTLPPath
			}
			c := newCanary(t, st)
			if status, err := c.Write(t.Context(), series, 1700000000123, 1700000000123); err != nil || status/100 != 2 {
				t.Fatalf("status %d, err %v: want a 2xx", status, err)
			}
			got, err := r.Series(0, math.MaxInt64)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "out of order sample", http.StatusBadRequest)
		}))
		defer srv.Close()
		status, err := newCanary(t, config.Storage{WriteURL: srv.URL}).Write(t.Context(), series, 1, 1)
		if status != http.StatusBadRequest || err == nil || err.Error() != "canary write: http 400: out of order sample" {
			t.Errorf("status %d, err %v", status, err)
		}
	})
}

func newCanary(t *testing.T, st config.Storage) *Canary {
	t.Helper()
	client, err := storage.NewClient("x", st, storage.Write, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCanary(st, client)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
