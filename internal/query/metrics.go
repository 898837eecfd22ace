package query

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the read path's self-metrics, fed from the same events as the results.
type Metrics struct {
	duration *prometheus.HistogramVec
	executed *prometheus.CounterVec
	errors   *prometheus.CounterVec
	missed   *prometheus.CounterVec
}

// NewMetrics registers the read path's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		duration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tsbench_query_duration_seconds",
			Help: "Latency of queries from their scheduled time to the end of the answer.",
			// 1 ms to ~65 s: a cached lookup to a query near the default 30 s timeout.
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 17),
		}, []string{"storage", "kind"}),
		executed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_query_executed_total",
			Help: "Queries sent whose answer or failure is known.",
		}, []string{"storage", "kind"}),
		errors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_query_errors_total",
			Help: "Failed queries by reason: http_<code>, status_error:<errorType>, timeout, bad_body, network.",
		}, []string{"storage", "kind", "reason"}),
		missed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_query_missed_total",
			Help: "Scheduled evaluations never sent: the previous one of the same query was still running or waiting.",
		}, []string{"storage", "kind"}),
	}
}
