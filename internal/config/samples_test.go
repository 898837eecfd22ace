package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNativeHistogramsForms: the short form and the mapping give the same keys; unset is false.
func TestNativeHistogramsForms(t *testing.T) {
	two := int32(2)
	for file, want := range map[string]NativeHistograms{
		"testdata/native.good.yaml":       {Send: NativeBoth, FromSummaries: true, Schema: &two},
		"testdata/native-short.good.yaml": {Send: NativeOn},
		"testdata/minimal.good.yaml":      {Send: NativeOff},
	} {
		c, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, c.NativeHistograms); diff != "" {
			t.Errorf("%s (-want +got):\n%s", file, diff)
		}
		if wantPct := map[bool]float64{true: 2.5}[file == "testdata/native.good.yaml"]; c.Exemplars.Percent != wantPct {
			t.Errorf("%s: exemplars.percent %v, want %v", file, c.Exemplars.Percent, wantPct)
		}
	}
}
