package results

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// results.json tells "nothing dropped" (droppedSamples absent), a count, and "could not
// read" (null, with the reason) apart (issue 37); read back, the reason still says which.
func TestConformanceDroppedSamplesJSON(t *testing.T) {
	for _, tc := range []struct {
		name    string
		c       Conformance
		dropped any // droppedSamples as JSON decodes it; absent when "absent"
	}{
		{name: "none dropped", c: Conformance{}, dropped: "absent"},
		{name: "some dropped", c: Conformance{DroppedSamples: 9}, dropped: float64(9)},
		{name: "read-back failed", c: Conformance{ReadBackError: "1 of 2 reads of the data written failed"}, dropped: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(&Storage{Name: "s", Conformance: &tc.c})
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Conformance map[string]any `json:"conformance"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			got, ok := m.Conformance["droppedSamples"]
			if !ok {
				got = "absent"
			}
			if diff := cmp.Diff(tc.dropped, got); diff != "" {
				t.Errorf("droppedSamples in %s (-want +got):\n%s", b, diff)
			}
			var back Storage
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.c, *back.Conformance); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}
