package verify

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/tsbench/tsbench/internal/results"
)

// Metrics are the read-back's self-metrics while the load runs (issue 19): what a person
// watching a week-long run needs to see before the end, fed from the same checks as the results.
type Metrics struct {
	checks  *prometheus.CounterVec
	checked *prometheus.CounterVec
	wrong   *prometheus.CounterVec
	lost    *prometheus.CounterVec
	seconds *prometheus.GaugeVec
}

// NewMetrics registers the read-back's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	labels := []string{"storage"}
	return &Metrics{
		checks: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_verify_checks_total",
			Help: "Read-back checks made while the load runs (verifyInterval).",
		}, labels),
		checked: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_verify_checked_samples_total",
			Help: "Samples the checks during the run looked for.",
		}, labels),
		wrong: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_verify_wrong_samples_total",
			Help: "Samples the checks during the run found missing, changed, duplicated, unexpected or NaN altered.",
		}, labels),
		lost: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsbench_verify_lost_after_ack_samples_total",
			Help: "Samples a check found and a later check did not: lost after the storage acked them.",
		}, labels),
		seconds: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tsbench_verify_check_duration_seconds",
			Help: "How long the last check during the run took.",
		}, labels),
	}
}

// observe counts one storage's check; m may be nil.
func (m *Metrics) observe(name string, c results.Check) {
	if m == nil {
		return
	}
	m.checks.WithLabelValues(name).Inc()
	m.checked.WithLabelValues(name).Add(float64(c.Checked))
	m.wrong.WithLabelValues(name).Add(float64(c.Missing + c.Changed + c.Duplicate + c.Unexpected + c.NaNAltered))
	m.lost.WithLabelValues(name).Add(float64(c.LostAfterAck))
	m.seconds.WithLabelValues(name).Set(c.Seconds)
}
