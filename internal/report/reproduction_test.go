package report

import (
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
)

// TestReproductionSaysVersions: the published vs measured table says the versions the
// article measured and those of this run, in the summary and report.html.
func TestReproductionSaysVersions(t *testing.T) {
	r := fixture()
	r.Reproduction = &results.Reproduction{Name: "node-exporter-24h", Article: "000", Scale: 1, Date: "2020-02", Versions: "VictoriaMetrics 1.32.5, Prometheus 2.15.2", Hardware: "n1-standard-4"}
	r.Storages[0].Version = "3.10.0"
	r.Storages[1].Version = "v1.150.0"
	var sum, page strings.Builder
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"published: 2020-02; VictoriaMetrics 1.32.5, Prometheus 2.15.2", "measured: prometheus 3.10.0, victoriametrics v1.150.0"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
		if !strings.Contains(page.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
