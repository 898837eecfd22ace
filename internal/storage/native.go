package storage

// NativeHistogramFlags are the flags a local storage needs to store native histograms:
// Prometheus 2.x takes them only with --enable-feature=native-histograms (2.40 to 3.7; later
// versions ignore the flag); VictoriaMetrics needs none.
func NativeHistogramFlags(kind string, native bool) []string {
	if native && kind == KindPrometheus {
		return []string{"--enable-feature=native-histograms"}
	}
	return nil
}
