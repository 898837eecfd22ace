package storage

// KindCortex is Cortex, and Mimir, its fork: the same metric names (cortex_), told apart by
// their messages.
const KindCortex = "cortex"

// Cortex is what tsbench knows of Cortex and Mimir clusters that a user brings: tsbench does
// not start one, and does not guess its kind from its pages (nothing it does differs by it
// but what is here). Its figures come from its components' /metrics pages, added up.
func (families) Cortex() Family {
	return Family{
		Kind: KindCortex, Order: 40,
		Version: []VersionLabel{{Metric: "cortex_build_info", Label: "version"}},
		// The ingesters' local blocks only, per tenant (name confirmed in Mimir's mixin and
		// ingester tests). Their WAL and head chunks have no size gauge, and the blocks
		// shipped to object storage are not on local disk: never complete.
		Disk: DiskGroup{
			Required: []string{"cortex_ingester_tsdb_storage_blocks_bytes"},
			Uncounted: "cortex_ingester_tsdb_storage_blocks_bytes is the ingesters' local blocks only: their WAL and head chunks " +
				"have no size metric and the blocks in object storage are not on local disk; " +
				"set dataDir to a directory that holds all of the storage's data",
		}.Read,
		// Per tenant: distributors count each sample once; ingesters count it once per
		// replica (replication factor 3 by default), so they are only a fallback.
		Ingested: []Selector{{Name: "cortex_distributor_received_samples_total"}, {Name: "cortex_ingester_ingested_samples_total"}},
		Limits:   append(mimirLimits(), cortexLimits()...),
	}
}

// mimirLimits: grafana/mimir pkg/ingester/errors.go, pkg/distributor/validate.go. Every
// limit's message (since 2.2) ends "(err-mimir-ID). To adjust the related per-tenant
// limit(s), configure -FLAG [and -FLAG], ...": the id tells them from Cortex', so they come
// first.
func mimirLimits() []Limit {
	return []Limit{
		{
			Name: "series per tenant", Family: "Mimir", Match: `per-user series limit of (\d+) exceeded \(err-mimir-max-series-per-user\)`,
			Raise: "-ingester.max-global-series-per-user (max_global_series_per_user in limits or a tenant's overrides)",
		},
		{
			Name: "series per metric name", Family: "Mimir", Match: `per-metric series limit of (\d+) exceeded \(err-mimir-max-series-per-metric\)`,
			Raise: "-ingester.max-global-series-per-metric (max_global_series_per_metric)",
		},
		{
			Name: "ingestion rate (samples/s per tenant)", Family: "Mimir",
			Match: `ingestion rate limit, set to ([0-9.e+]+) items/s.*\(err-mimir-tenant-max-ingestion-rate\)`,
			Raise: "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size (ingestion_rate, ingestion_burst_size)",
		},
		{
			Name: "out-of-order samples", Family: "Mimir", Match: `\(err-mimir-sample-out-of-order\)`,
			Raise: "-ingester.out-of-order-time-window (out_of_order_time_window)",
		},
		{
			Name: "samples older than the head", Family: "Mimir", Match: `\(err-mimir-sample-timestamp-too-old\)`,
			Raise: "-ingester.out-of-order-time-window (out_of_order_time_window)",
		},
		{
			Name: "label names per series", Family: "Mimir", Match: `\(err-mimir-max-label-names-per-series\)`,
			Raise: "-validation.max-label-names-per-series (max_label_names_per_series)",
		},
		// Any other Mimir limit: its id, and the flags its message names.
		{
			Name: "err-mimir-$1", Family: "Mimir", Match: `\(err-mimir-([a-z0-9-]+)\)`,
			Raise: "see Mimir's runbook for err-mimir-$1", RaiseFrom: `configure (-[a-z0-9.-]+)(?: and (-[a-z0-9.-]+))?`,
		},
	}
}

// cortexLimits: cortexproject/cortex pkg/ingester/limiter.go, pkg/distributor/distributor.go
// (and Mimir before 2.2).
func cortexLimits() []Limit {
	return []Limit{
		{
			Name: "series per tenant", Family: "Cortex", Match: `per-user series limit of (\d+) exceeded`,
			Raise: "-ingester.max-series-per-user (per ingester, default 5000000) or -ingester.max-global-series-per-user (across the cluster)",
		},
		{
			Name: "series per metric name", Family: "Cortex", Match: `per-metric series limit of (\d+) exceeded`,
			Raise: "-ingester.max-series-per-metric (per ingester, default 50000) or -ingester.max-global-series-per-metric",
		},
		{
			Name: "ingestion rate (samples/s per tenant)", Family: "Cortex", Match: `ingestion rate limit \(([0-9.e+]+)\) exceeded`,
			Raise: "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size (ingestion_rate, ingestion_burst_size)",
		},
	}
}
