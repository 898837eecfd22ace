package query

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the read path's self-metrics, fed from the same events as the results. The query
// label is the rule's, panel's or lookup's name, never its text: ~80 names per storage with
// the default plan.
type Metrics struct {
	duration *prometheus.HistogramVec
	executed *prometheus.CounterVec
	errors   *prometheus.CounterVec
	warnings *prometheus.CounterVec
	missed   *prometheus.CounterVec
}

// NewMetrics registers the read path's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	labels := []string{"storage", "kind", "query"}
	return &Metrics{
		duration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tsbench_query_duration_seconds",
			Help: "Latency of queries from their scheduled time to the end of the answer.",
			// 1 ms to ~65 s: a cached lookup to a query near the default 30 s timeout.
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 17),
		}, labels),
		executed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_query_executed_total",
			Help: "Queries sent whose answer or failure is known.",
		}, labels),
		errors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_query_errors_total",
			Help: "Failed queries by reason: http_<code>, status_error:<errorType>, timeout, bad_body, network.",
		}, append(labels, "reason")),
		warnings: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_query_warnings_total",
			Help: "Successful queries whose answer carried warnings.",
		}, labels),
		missed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_query_missed_total",
			Help: "Scheduled evaluations never sent: the previous one of the same query was still running or waiting.",
		}, labels),
	}
}
