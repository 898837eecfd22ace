package remotewrite

import (
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"github.com/tsbench/tsbench/internal/results"
)

// limitRule recognizes one limit in the body of a storage's refusal (issue 31): a user who
// brings a Mimir or a Cortex meets its per-tenant defaults (10k samples/s and 150k series
// for Mimir) far below a benchmark's load, and a count of 429s alone does not say which.
// The messages are the storages' own (their source, cited per rule); they are matched as
// text because that is all a storage sends, and they are stable because their users grep
// their logs for them.
type limitRule struct {
	limit, family, raise string
	// match finds the message; its first group, when it has one, is the limit's value.
	match string
}

// limitRules are tried in order, the first match wins: Mimir's messages (since 2.2) carry
// an error id and are told from Cortex' by it, so they come first.
func limitRules() []limitRule {
	const ooo = "Prometheus: storage.tsdb.out_of_order_time_window in its config file; " +
		"Thanos receive: --tsdb.out-of-order.time-window; Cortex: -ingester.out-of-order-time-window"
	return []limitRule{
		// grafana/mimir pkg/ingester/errors.go, pkg/distributor/validate.go: every limit's
		// message ends "(err-mimir-ID). To adjust the related per-tenant limit(s), configure
		// -FLAG [and -FLAG], ...".
		{
			limit: "series per tenant", family: "Mimir", match: `per-user series limit of (\d+) exceeded \(err-mimir-max-series-per-user\)`,
			raise: "-ingester.max-global-series-per-user (max_global_series_per_user in limits or a tenant's overrides)",
		},
		{
			limit: "series per metric name", family: "Mimir", match: `per-metric series limit of (\d+) exceeded \(err-mimir-max-series-per-metric\)`,
			raise: "-ingester.max-global-series-per-metric (max_global_series_per_metric)",
		},
		{
			limit: "ingestion rate (samples/s per tenant)", family: "Mimir",
			match: `ingestion rate limit, set to ([0-9.e+]+) items/s.*\(err-mimir-tenant-max-ingestion-rate\)`,
			raise: "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size (ingestion_rate, ingestion_burst_size)",
		},
		{
			limit: "out-of-order samples", family: "Mimir", match: `\(err-mimir-sample-out-of-order\)`,
			raise: "-ingester.out-of-order-time-window (out_of_order_time_window)",
		},
		{
			limit: "samples older than the head", family: "Mimir", match: `\(err-mimir-sample-timestamp-too-old\)`,
			raise: "-ingester.out-of-order-time-window (out_of_order_time_window)",
		},
		{
			limit: "label names per series", family: "Mimir", match: `\(err-mimir-max-label-names-per-series\)`,
			raise: "-validation.max-label-names-per-series (max_label_names_per_series)",
		},
		// Any other Mimir limit: its id, and the flags its message names.
		{limit: "err-mimir-$1", family: "Mimir", match: `\(err-mimir-([a-z0-9-]+)\)`, raise: "$flags"},

		// cortexproject/cortex pkg/ingester/limiter.go, pkg/distributor/distributor.go (and
		// Mimir before 2.2).
		{
			limit: "series per tenant", family: "Cortex", match: `per-user series limit of (\d+) exceeded`,
			raise: "-ingester.max-series-per-user (per ingester, default 5000000) or -ingester.max-global-series-per-user (across the cluster)",
		},
		{
			limit: "series per metric name", family: "Cortex", match: `per-metric series limit of (\d+) exceeded`,
			raise: "-ingester.max-series-per-metric (per ingester, default 50000) or -ingester.max-global-series-per-metric",
		},
		{
			limit: "ingestion rate (samples/s per tenant)", family: "Cortex", match: `ingestion rate limit \(([0-9.e+]+)\) exceeded`,
			raise: "-distributor.ingestion-rate-limit and -distributor.ingestion-burst-size (ingestion_rate, ingestion_burst_size)",
		},

		// VictoriaMetrics lib/writeconcurrencylimiter: a 503 after -insert.maxQueueDuration
		// ("cannot handle more than N concurrent inserts during D", as 1.79.5 answers; newer
		// releases say "because N concurrent insert requests are executed"); a request too big.
		{
			limit: "concurrent inserts", family: "VictoriaMetrics", match: `(?s)(\d+) concurrent insert.*maxConcurrentInserts`,
			raise: "-maxConcurrentInserts (its default grows with the CPU cores; on vminsert in a cluster) or -insert.maxQueueDuration (default 1m), or a lower writeConcurrency",
		},
		{
			limit: "request size", family: "VictoriaMetrics", match: `maxInsertRequestSize=(\d+)`,
			raise: "-maxInsertRequestSize, or a lower maxSamplesPerRequest",
		},

		// Prometheus' TSDB (storage.ErrOutOfOrderSample, ErrOutOfBounds, ErrTooOldSample), as
		// Prometheus' receiver, Thanos receive and Cortex' ingesters answer it.
		{limit: "out-of-order samples", family: "Prometheus TSDB", match: `out of order sample`, raise: ooo},
		{
			limit: "samples older than the head", family: "Prometheus TSDB", match: `out of bounds|too old sample`,
			raise: ooo + "; or start the storage empty",
		},
	}
}

// limitLog keeps the limits one storage's refusals named. The zero value is ready; its rules
// are compiled at the first refusal, which most runs never see.
type limitLog struct {
	mu    sync.Mutex // guards rules, flags, seen
	rules []compiledRule
	flags *regexp.Regexp // the flags a Mimir message says to configure
	seen  []results.WriteLimit
}

type compiledRule struct {
	limitRule
	re *regexp.Regexp
}

// recognizeLocked returns the limit body names, or ok=false.
func (ll *limitLog) recognizeLocked(status int, body string) (l results.WriteLimit, ok bool) {
	if ll.rules == nil {
		for _, r := range limitRules() {
			ll.rules = append(ll.rules, compiledRule{limitRule: r, re: regexp.MustCompile(r.match)})
		}
		ll.flags = regexp.MustCompile(`configure (-[a-z0-9.-]+)(?: and (-[a-z0-9.-]+))?`)
	}
	for _, r := range ll.rules {
		m := r.re.FindStringSubmatch(body)
		if m == nil {
			continue
		}
		l = results.WriteLimit{Limit: r.limit, Family: r.family, Raise: r.raise, Status: status, Message: strings.TrimSpace(body)}
		if len(m) > 1 {
			l.Value = m[1]
			l.Limit = strings.ReplaceAll(l.Limit, "$1", m[1])
			if strings.HasPrefix(l.Limit, "err-mimir-") {
				l.Value = ""
			}
		}
		if l.Raise == "$flags" {
			l.Raise = "see Mimir's runbook for " + l.Limit
			if f := ll.flags.FindStringSubmatch(body); f != nil {
				l.Raise = strings.TrimSuffix(f[1]+" and "+f[2], " and ")
			}
		}
		return l, true
	}
	return results.WriteLimit{}, false
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
