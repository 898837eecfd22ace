package remotewrite

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// The storages' own messages, as their source writes them (Cortex' as Cortex 1.21.1 answered
// tsbench, by hand: docs/storages.md#cortex).
const (
	mimirSeries = "per-user series limit of 150000 exceeded (err-mimir-max-series-per-user). To adjust the related per-tenant limit, " +
		"configure -ingester.max-global-series-per-user, or contact your service administrator."
	mimirRate = "the request has been rejected because the tenant exceeded the ingestion rate limit, set to 10000 items/s with a maximum " +
		"allowed burst of 200000. This limit is applied on the total number of samples, exemplars and metadata received across all " +
		"distributors (err-mimir-tenant-max-ingestion-rate). To adjust the related per-tenant limits, configure " +
		"-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size, or contact your service administrator."
)

func TestLimitRecognized(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       results.WriteLimit // Status, Requests and Message left out
	}{
		{"mimir series", mimirSeries, results.WriteLimit{
			Limit: "series per tenant", Family: "Mimir", Value: "150000",
			Raise: "-ingester.max-global-series-per-user (max_global_series_per_user in limits or a tenant's overrides)",
		}},
		{"mimir ingestion rate", mimirRate, results.WriteLimit{
			Limit: "ingestion rate (samples/s per tenant)", Family: "Mimir", Value: "10000",
			Raise: "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size (ingestion_rate, ingestion_burst_size)",
		}},
		{"mimir, another limit: its id and flags", "received a series whose number of exemplars exceeds the limit (err-mimir-max-exemplars-per-series). " +
			"To adjust the related per-tenant limit, configure -ingester.max-global-exemplars-per-user, or contact your service administrator.", results.WriteLimit{
			Limit: "err-mimir-max-exemplars-per-series", Family: "Mimir", Raise: "-ingester.max-global-exemplars-per-user",
		}},
		{"cortex series", "user=bench: per-user series limit of 5000000 exceeded, please contact administrator to raise it " +
			"(local limit: 5000000 global limit: 0 actual local limit: 5000000)", results.WriteLimit{
			Limit: "series per tenant", Family: "Cortex", Value: "5000000",
			Raise: "-ingester.max-series-per-user (per ingester, default 5000000) or -ingester.max-global-series-per-user (across the cluster)",
		}},
		{
			"cortex per metric (1.21.1, through its distributor)", "maxFailure (quorum) on a given error family, addr=127.0.0.1:19095 state=ACTIVE zone=, " +
				"rpc error: code = Code(400) desc = user=fake: per-metric series limit of 50000 exceeded for metric node_cpu_seconds_total, " +
				"please contact administrator to raise it (local limit: 50000 global limit: 0 actual local limit: 50000) for series " +
				`{__name__="node_cpu_seconds_total", cpu="4", instance="host-000325:9100", job="node_exporter", mode="idle", revision="0"}`,
			results.WriteLimit{
				Limit: "series per metric name", Family: "Cortex", Value: "50000",
				Raise: "-ingester.max-series-per-metric (per ingester, default 50000) or -ingester.max-global-series-per-metric",
			},
		},
		{"cortex ingestion rate", "ingestion rate limit (25000) exceeded while adding 5000 samples and 0 metadata", results.WriteLimit{
			Limit: "ingestion rate (samples/s per tenant)", Family: "Cortex", Value: "25000",
			Raise: "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size (ingestion_rate, ingestion_burst_size)",
		}},
		{"victoriametrics concurrent inserts", "cannot process insert request for 60.000 seconds because 4 concurrent insert requests are executed. " +
			"Possible solutions: to reduce workload; to increase compute resources at the server; to increase -insert.maxQueueDuration; " +
			"to increase -maxConcurrentInserts", results.WriteLimit{
			Limit: "concurrent inserts", Family: "VictoriaMetrics", Value: "4",
			Raise: "-maxConcurrentInserts (its default grows with the CPU cores; on vminsert in a cluster) or -insert.maxQueueDuration (default 1m), or a lower writeConcurrency",
		}},
		{"victoriametrics concurrent inserts, 1.79.5 as it answered", `remoteAddr: "127.0.0.1:46100"; requestURI: /api/v1/write; ` +
			"cannot handle more than 1 concurrent inserts during 1ms; possible solutions: increase `-insert.maxQueueDuration`, " +
			"increase `-maxConcurrentInserts`, increase server capacity", results.WriteLimit{
			Limit: "concurrent inserts", Family: "VictoriaMetrics", Value: "1",
			Raise: "-maxConcurrentInserts (its default grows with the CPU cores; on vminsert in a cluster) or -insert.maxQueueDuration (default 1m), or a lower writeConcurrency",
		}},
		{"prometheus out of order", "out of order sample", results.WriteLimit{
			Limit: "out-of-order samples", Family: "Prometheus TSDB",
			Raise: "Prometheus: storage.tsdb.out_of_order_time_window in its config file; Thanos receive: --tsdb.out-of-order.time-window; " +
				"Cortex: -ingester.out-of-order-time-window",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ll limitLog
			got, ok := ll.recognizeLocked(429, tc.body)
			if !ok {
				t.Fatalf("not recognized: %q", tc.body)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(results.WriteLimit{}, "Status", "Message")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	var ll limitLog
	for _, body := range []string{"", "snappy: corrupt input", "unauthorized"} {
		if l, ok := ll.recognizeLocked(400, body); ok {
			t.Errorf("%q recognized as %+v", body, l)
		}
	}
}

// A Mimir answering 429 with its ingestion-rate message: the storage's results name the
// limit once, with every answer that named it counted, and the log says it once, with the
// storage and what raises it.
func TestLimitNamedOnceFromMimir429(t *testing.T) {
	const refusals = 3
	rc, srv := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n < refusals {
			http.Error(w, mimirRate, http.StatusTooManyRequests)
			return false
		}
		return true
	})
	var logs strings.Builder
	w := newWriter(t, map[string]config.Storage{"mimir": writeTo(srv.URL)}, slog.New(slog.NewTextHandler(&logs, nil)),
		func(c *config.Config) { c.WriteConcurrency = 1 })
	runFor(t, w, 500*time.Millisecond)
	r := w.Results("mimir")
	if r.RequestsByStatus["429"] != refusals || r.AckedSamples != r.GeneratedSamples {
		t.Fatalf("account %+v (%d requests): want %d 429s, every sample acked after retries", r, rc.requests, refusals)
	}
	want := []results.WriteLimit{{
		Limit: "ingestion rate (samples/s per tenant)", Family: "Mimir", Value: "10000",
		Raise:  "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size (ingestion_rate, ingestion_burst_size)",
		Status: 429, Requests: refusals, Message: mimirRate,
	}}
	if diff := cmp.Diff(want, r.Limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	const msg = "storage refused writes at one of its limits"
	if n := strings.Count(logs.String(), msg); n != 1 || !strings.Contains(logs.String(), "storage=mimir") ||
		!strings.Contains(logs.String(), "-distributor.ingestion-rate-limit") {
		t.Errorf("logged %q %d times, want once with the storage and the flag:\n%s", msg, n, logs.String())
	}
}
