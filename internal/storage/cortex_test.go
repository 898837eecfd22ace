package storage

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCortexMetrics: the ingesters' local blocks are never all of the disk; a distributor's
// count is the best ingestion counter, an ingester's (once per replica) the fallback.
func TestCortexMetrics(t *testing.T) {
	f := Kind(KindCortex).Family()
	p := page(t, `cortex_ingester_tsdb_storage_blocks_bytes{user="anonymous"} 1000
cortex_distributor_received_samples_total{user="anonymous"} 60000
cortex_ingester_ingested_samples_total{user="anonymous"} 180000
`)
	if _, why, ok := f.Disk(p); !ok || !strings.Contains(why, "local blocks only") {
		t.Errorf("disk %q %v: want exposed and unknown, the local blocks only", why, ok)
	}
	if v, ok := p.Select(f.Ingested[0]); f.Ingested[0].Name != "cortex_distributor_received_samples_total" || v != 60000 || !ok {
		t.Errorf("best ingestion counter %s: %v %v, want the distributor's 60000", f.Ingested[0].Name, v, ok)
	}
	if f.Local != nil || f.MetricPrefix != "" {
		t.Error("tsbench neither starts a Cortex nor guesses its kind")
	}
}

// TestCortexLimits: Mimir's and Cortex' messages, as their source writes them (Cortex' as
// Cortex 1.21.1 answered tsbench: docs/storages.md#cortex), are recognised among every
// family's limits as theirs: Mimir's by its error id before Cortex' older words.
func TestCortexLimits(t *testing.T) {
	limits := NewLimits(AllLimits())
	for _, tc := range []struct {
		body string
		want LimitMet
	}{
		{
			"per-user series limit of 150000 exceeded (err-mimir-max-series-per-user). To adjust the related per-tenant limit, " +
				"configure -ingester.max-global-series-per-user, or contact your service administrator.",
			LimitMet{Name: "series per tenant", Family: "Mimir", Value: "150000", Raise: "-ingester.max-global-series-per-user (max_global_series_per_user in limits or a tenant's overrides)"},
		},
		{
			"the sample has been rejected because its timestamp is too old (err-mimir-sample-timestamp-too-old). " +
				`The affected sample has timestamp 2026-01-01T00:00:00Z and is from series {__name__="node_load1"}`,
			LimitMet{Name: "samples older than the head", Family: "Mimir", Raise: "-ingester.out-of-order-time-window (out_of_order_time_window)"},
		},
		{
			"received a series whose number of exemplars exceeds the limit (err-mimir-max-exemplars-per-series). " +
				"To adjust the related per-tenant limit, configure -ingester.max-global-exemplars-per-user, or contact your service administrator.",
			LimitMet{Name: "err-mimir-max-exemplars-per-series", Family: "Mimir", Raise: "-ingester.max-global-exemplars-per-user"},
		},
		{
			"the request has been rejected (err-mimir-some-new-limit)",
			LimitMet{Name: "err-mimir-some-new-limit", Family: "Mimir", Raise: "see Mimir's runbook for err-mimir-some-new-limit"},
		},
		{
			"user=bench: per-user series limit of 5000000 exceeded, please contact administrator to raise it " +
				"(local limit: 5000000 global limit: 0 actual local limit: 5000000)",
			LimitMet{Name: "series per tenant", Family: "Cortex", Value: "5000000", Raise: "-ingester.max-series-per-user (per ingester, default 5000000) or -ingester.max-global-series-per-user (across the cluster)"},
		},
	} {
		got, ok := limits.Recognize(tc.body)
		if !ok {
			t.Errorf("not recognised: %q", tc.body)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.body, diff)
		}
	}
}
