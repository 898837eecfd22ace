package remotewrite

import (
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// limitRules are tried in order, the first match wins: Mimir's messages (since 2.2) carry
// an error id and are told from Cortex' by it, so they come first. Each family's own are in
// its file in package storage (storage.Limit says why they are matched as text).
func limitRules() []storage.Limit {
	return slices.Concat([]storage.Limit{
		// grafana/mimir pkg/ingester/errors.go, pkg/distributor/validate.go: every limit's
		// message ends "(err-mimir-ID). To adjust the related per-tenant limit(s), configure
		// -FLAG [and -FLAG], ...".
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

		// cortexproject/cortex pkg/ingester/limiter.go, pkg/distributor/distributor.go (and
		// Mimir before 2.2).
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
	}, storage.AllLimits())
}

// limitLog keeps the limits one storage's refusals named. The zero value is ready; its rules
// are compiled at the first refusal, which most runs never see.
type limitLog struct {
	mu     sync.Mutex // guards limits, seen
	limits *storage.Limits
	seen   []results.WriteLimit
}

// recognizeLocked returns the limit body names, or ok=false.
func (ll *limitLog) recognizeLocked(status int, body string) (l results.WriteLimit, ok bool) {
	if ll.limits == nil {
		ll.limits = storage.NewLimits(limitRules())
	}
	m, ok := ll.limits.Recognize(body)
	if !ok {
		return results.WriteLimit{}, false
	}
	return results.WriteLimit{Limit: m.Name, Family: m.Family, Value: m.Value, Raise: m.Raise, Status: status, Message: strings.TrimSpace(body)}, true
}

// note records a refusal's body: the first time a limit is named, it is logged with what
// raises it; every time, it is counted. Answers that are not refusals name nothing.
func (ll *limitLog) note(status int, body string, log *slog.Logger) {
	if status < 400 || body == "" {
		return
	}
	ll.mu.Lock()
	l, ok := ll.recognizeLocked(status, body)
	if !ok {
		ll.mu.Unlock()
		return
	}
	for i := range ll.seen {
		if ll.seen[i].Limit == l.Limit && ll.seen[i].Family == l.Family {
			ll.seen[i].Requests++
			ll.mu.Unlock()
			return
		}
	}
	l.Requests = 1
	ll.seen = append(ll.seen, l)
	ll.mu.Unlock()
	log.Warn("storage refused writes at one of its limits; raise it on the storage to benchmark this load",
		"limit", l.Limit, "value", l.Value, "family", l.Family, "raise", l.Raise, "status", status)
}

// results returns a copy of the limits met, nil when none.
func (ll *limitLog) results() []results.WriteLimit {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if len(ll.seen) == 0 {
		return nil
	}
	return append([]results.WriteLimit(nil), ll.seen...)
}
