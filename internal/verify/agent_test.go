package verify

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestAgentSeriesAndMarkers: in scrape mode the agent's own series are left out of an answer,
// and so are its staleness markers: as an export shows them, anywhere, and as a query shows
// them (NaN) after a series' last sample, beyond the shift its numbers show; not a NaN within
// that shift, nor anything without AgentMarkers.
func TestAgentSeriesAndMarkers(t *testing.T) {
	ls := []label{{Name: "__name__", Value: "fake"}, {Name: "instance", Value: "h"}}
	u := &unit{series: map[string]*expSeries{keyOf(ls): {labels: ls, samples: []expSample{{t: 1000, v: 1}, {t: 2000, v: math.NaN()}}}}}
	answer := func() *result {
		return &result{Type: "matrix", Series: []series{
			{Labels: []label{{Name: "__name__", Value: "up"}, {Name: "instance", Value: "h"}}, Points: []point{{T: 1000, V: 1}}},
			{Labels: ls, Points: []point{{T: 1003, V: 1}, {T: 1500, V: math.Float64frombits(staleNaNBits)}, {T: 2002, V: math.NaN()}, {T: 2200, V: math.NaN()}, {T: 7000, V: math.NaN()}}},
		}}
	}
	v := &Verifier{interval: 5000, IgnoreNames: []string{"up"}, AgentMarkers: true}
	got := answer()
	v.ignore(got)
	v.dropAgentMarkers(u, got)
	// The numbers are 3ms off: a NaN 2ms after the last sample is its copy, one 200ms after a marker.
	want := &result{Type: "matrix", Series: []series{{Labels: ls, Points: []point{{T: 1003, V: 1}, {T: 2002, V: math.NaN()}}}}}
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs(), cmp.AllowUnexported(result{}, series{}, label{}, point{})); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	plain := &Verifier{interval: 5000}
	got = answer()
	plain.ignore(got)
	plain.dropAgentMarkers(u, got)
	if diff := cmp.Diff(answer(), got, cmpopts.EquateNaNs(), cmp.AllowUnexported(result{}, series{}, label{}, point{})); diff != "" {
		t.Errorf("without scrape mode the answer changed (-want +got):\n%s", diff)
	}
}
