package reproduce

import (
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPublishedFiguresAreTheArticles reads the articles' figures a second time, from issue
// 36's table and the seeds, and checks each data file carries them: every figure, its value
// and unit, and the setup they are divided by.
func TestPublishedFiguresAreTheArticles(t *testing.T) {
	type fig struct {
		value float64
		unit  string
	}
	want := map[string]struct {
		setup   Setup
		figures map[string]fig
	}{
		"node-exporter-24h": {Setup{Targets: 3400, SamplesPerSecond: 280e3, ActiveSeries: 2.8e6, Samples: 24.5e9}, map[string]fig{
			"ingestion rate": {280e3, "samples/s"}, "active series": {2.8e6, "series"}, "samples stored in 24 h": {24.5e9, "samples"},
			"disk after 24 h, VictoriaMetrics": {7.2, "GB"}, "disk after 24 h, Prometheus": {52.3, "GB"},
			"disk after 24 h, Prometheus over VictoriaMetrics": {7, "×"},
			"RSS, VictoriaMetrics":                             {4.3, "GB"}, "RSS, Prometheus": {14, "GB"},
			"RSS peak, Prometheus over VictoriaMetrics": {5.3, "×"},
			"RSS over the 24 h, Prometheus":             {14 / 6.5, "×"}, "RSS over the 24 h, VictoriaMetrics": {1, "×"},
			"CPU, VictoriaMetrics": {(1.5 + 1.75) / 2, "cores"}, "CPU, Prometheus": {(1.5 + 1.75) / 2, "cores"},
			"disk writes, VictoriaMetrics": {2, "MB/s"}, "disk writes, Prometheus": {2, "MB/s"},
			"disk write spikes, Prometheus over VictoriaMetrics": {50.0 / 15, "×"},
			"disk read spikes, Prometheus over VictoriaMetrics":  {95.0 / 15, "×"},
			"disk space spikes, Prometheus over VictoriaMetrics": {15.0 / 4, "×"},
		}},
		"precision-and-semantics": {Setup{}, map[string]fig{
			"snapshot size after days, Prometheus over VictoriaMetrics":  {13016742.0 / 11459543, "×"},
			"snapshot size after hours, Prometheus over VictoriaMetrics": {90.0 / 78, "×"},
			"the snapshot ratio's trend":                                 {0, "×"},
			"index size, Prometheus over VictoriaMetrics":                {8.8e6 / 427e3, "×"},
			"values changed, VictoriaMetrics":                            {1, "flag"}, "values changed, Prometheus": {0, "flag"},
			"NaN dropped, VictoriaMetrics": {1, "flag"}, "NaN dropped, Prometheus": {0, "flag"},
			"stale series returned, VictoriaMetrics": {1, "flag"}, "stale series returned, Prometheus": {0, "flag"},
			"PromQL semantics, VictoriaMetrics": {1, "flag"}, "PromQL semantics, Prometheus": {0, "flag"},
			"index lookups, VictoriaMetrics over Prometheus": {math.Sqrt(2.0 * 4.4), "×"},
		}},
		"cluster-24h": {Setup{Targets: 6000, SamplesPerSecond: 360e3, ActiveSeries: 5.5e6, Samples: 31e9}, map[string]fig{
			"ingestion rate": {360e3, "samples/s"}, "active series": {5.5e6, "series"}, "samples sent in 24 h": {31e9, "samples"},
			"CPU, Mimir over VictoriaMetrics": {1.7, "×"}, "RAM, Mimir over VictoriaMetrics": {5, "×"}, "disk, Mimir over VictoriaMetrics": {3, "×"},
			"query p50, VictoriaMetrics": {math.Sqrt(0.1 * 0.5), "s"}, "query p50, Mimir": {math.Sqrt(0.1 * 0.5), "s"},
			"query p99 at most, VictoriaMetrics": {20, "s"}, "query p99 at most, Mimir": {47, "s"},
		}},
		"100m-samples": {Setup{SamplesPerSecond: 100e6, ActiveSeries: 1e9}, map[string]fig{
			"samples per generator CPU-second": {100e6 / (16 * 8), "samples/core-second"},
			"generator RAM per active series":  {16 * 25, "GB"},
			"bytes on the wire per sample":     {2, "GB/s"},
		}},
	}
	fsys := os.DirFS("../..")
	for name, w := range want {
		p, err := LoadPublished(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w.setup, p.Setup); diff != "" {
			t.Errorf("%s setup (-want +got):\n%s", name, diff)
		}
		got := map[string]fig{}
		for _, f := range p.Figures {
			got[f.Figure] = fig{f.Value, f.Unit}
		}
		// Published to three or four digits: 2.97 for √(2.0 × 4.4) = 2.966.
		approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 0.002*math.Max(math.Abs(a), math.Abs(b)) })
		if diff := cmp.Diff(w.figures, got, approx, cmp.AllowUnexported(fig{})); diff != "" {
			t.Errorf("%s figures (-want +got):\n%s", name, diff)
		}
	}
}
