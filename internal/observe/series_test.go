package observe

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestSeriesCreated: each storage's own count of created series, nil where the page has none.
func TestSeriesCreated(t *testing.T) {
	cases := map[string]*float64{
		"vm_new_timeseries_created_total 4195\n": new(4195.0),
		"# TYPE prometheus_tsdb_head_series_created_total counter\nprometheus_tsdb_head_series_created_total 839\n": new(839.0),
		"process_cpu_seconds_total 1\n": nil,
	}
	for page, want := range cases {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		got := fromFamilies(families).SeriesCreated
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("%q: series created %v, want %v", page, deref(got), deref(want))
		}
	}
}

// TestSeriesCreatedMerged: a storage observed through /proc and its /metrics keeps the
// created-series count of whichever gives it.
func TestSeriesCreatedMerged(t *testing.T) {
	n := 839.0
	if got := (rates{}).or(rates{created: &n}).created; got == nil || *got != n {
		t.Errorf("proc or metrics: created %v, want %v", got, n)
	}
	if got := (rates{created: &n}).or(rates{}).created; got == nil || *got != n {
		t.Errorf("metrics or proc: created %v, want %v", got, n)
	}
}

// TestSeriesCreatedOverComponents: a cluster's created series are its components' sum,
// unknown when none counts them.
func TestSeriesCreatedOverComponents(t *testing.T) {
	a, b := 100.0, 23.0
	if got := addRates([]rates{{created: &a}, {}, {created: &b}}).created; got == nil || *got != 123 {
		t.Errorf("created over components %v, want 123", got)
	}
	if got := addRates([]rates{{}, {}}).created; got != nil {
		t.Errorf("created %v where no component counts them, want unknown", *got)
	}
}
