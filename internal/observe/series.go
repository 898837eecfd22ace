package observe

import dto "github.com/prometheus/client_model/go"

// seriesCreated is the storage's own count of the series it created since it started, for
// the series section's figures (issue 22); nil when it exposes none.
func seriesCreated(families map[string]*dto.MetricFamily) *float64 {
	for _, name := range []string{"vm_new_timeseries_created_total", "prometheus_tsdb_head_series_created_total"} {
		if v, ok := sum(families, name); ok {
			return &v
		}
	}
	return nil
}

// addCreated is the created series over a cluster's components that count them; nil when
// none does.
func addCreated(parts []rates) *float64 {
	var total *float64
	for _, p := range parts {
		if p.created != nil {
			total = new(*p.created + valueOr0(total))
		}
	}
	return total
}

func valueOr0(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
