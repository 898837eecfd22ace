package local

import (
	"strings"

	"github.com/tsbench/tsbench/internal/storage"
)

// SampleTypeFlags are the flags a local storage needs to store native histograms and
// exemplars: Prometheus takes native histograms only with --enable-feature=native-histograms
// (2.40 to 3.7; later versions ignore the flag) and keeps exemplars only with
// --enable-feature=exemplar-storage; VictoriaMetrics has no such flags.
func SampleTypeFlags(kind storage.Kind, native, exemplars bool) []string {
	if kind != storage.KindPrometheus {
		return nil
	}
	var features []string
	if native {
		features = append(features, "native-histograms")
	}
	if exemplars {
		features = append(features, "exemplar-storage")
	}
	if len(features) == 0 {
		return nil
	}
	return []string{"--enable-feature=" + strings.Join(features, ",")}
}
