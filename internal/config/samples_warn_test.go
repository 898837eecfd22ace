package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNativeHistogramWarnings: a nativeHistograms setting that sends no native histogram with
// the profile is named, with the key that would send them (issue 31).
func TestNativeHistogramWarnings(t *testing.T) {
	on := "nativeHistograms: true sends no native histogram: the profile has no histogram family, only summaries; " +
		"set nativeHistograms: {send: true, fromSummaries: true} to send its summaries as native histograms"
	for _, tc := range []struct {
		name                  string
		n                     NativeHistograms
		histograms, summaries bool
		want                  []string
	}{
		{"off", NativeHistograms{Send: NativeOff}, false, true, nil},
		{"true, summaries only (the default profile)", NativeHistograms{Send: NativeOn}, false, true, []string{on}},
		{"both, summaries only", NativeHistograms{Send: NativeBoth}, false, true, []string{
			"nativeHistograms: both sends no native histogram: the profile has no histogram family, only summaries; " +
				"set nativeHistograms: {send: both, fromSummaries: true} to send its summaries as native histograms",
		}},
		{"true with fromSummaries", NativeHistograms{Send: NativeOn, FromSummaries: true}, false, true, nil},
		{"true, histograms", NativeHistograms{Send: NativeOn}, true, false, nil},
		{"true, neither", NativeHistograms{Send: NativeOn}, false, false, []string{
			"nativeHistograms: true sends no native histogram: the profile has neither histogram families nor summaries",
		}},
		{"fromSummaries without send", NativeHistograms{Send: NativeOff, FromSummaries: true}, false, true, []string{
			"nativeHistograms.fromSummaries: has no effect with send: false; set nativeHistograms: {send: true, fromSummaries: true} to send the summaries as native histograms",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.NativeHistograms = tc.n
			if diff := cmp.Diff(tc.want, c.NativeHistogramWarnings(tc.histograms, tc.summaries)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
