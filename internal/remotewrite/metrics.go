package remotewrite

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the write path's own metrics, every one labelled with the storage.
type Metrics struct {
	generated *prometheus.CounterVec
	acked     *prometheus.CounterVec
	dropped   *prometheus.CounterVec
	retries   *prometheus.CounterVec
	requests  *prometheus.CounterVec
	sentBytes *prometheus.CounterVec
	pending   *prometheus.GaugeVec
	lag       *prometheus.GaugeVec
}

// NewMetrics registers the write path's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	return &Metrics{
		generated: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_remotewrite_generated_samples_total",
			Help: "Samples generated for a storage, every copy counted.",
		}, []string{"storage"}),
		acked: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_remotewrite_acked_samples_total",
			Help: "Samples the storage acknowledged with a 2xx.",
		}, []string{"storage"}),
		dropped: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_remotewrite_dropped_samples_total",
			Help: "Samples given up, by reason: http_<status> for a 3xx or 4xx (http_400, http_413), retry_timeout, queue_full, invalid_labels.",
		}, []string{"storage", "reason"}),
		retries: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_remotewrite_retries_total",
			Help: "Requests sent again after a network error, a 5xx or a 429.",
		}, []string{"storage"}),
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_remotewrite_requests_total",
			Help: "Remote-write requests by HTTP status, or network_error.",
		}, []string{"storage", "status"}),
		sentBytes: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_remotewrite_sent_bytes_total",
			Help: "Compressed request bytes sent, retries included.",
		}, []string{"storage"}),
		pending: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tsbench_remotewrite_pending_samples",
			Help: "Samples generated but neither acked nor dropped yet.",
		}, []string{"storage"}),
		lag: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tsbench_remotewrite_lag_seconds",
			Help: "Now minus the scheduled time of the oldest sample not yet acked or dropped.",
		}, []string{"storage"}),
	}
}
