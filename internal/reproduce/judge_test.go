package reproduce

import (
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
)

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		published, measured, tolerance float64
		want                           string
	}{
		{7, 5.43, 0.3, results.Holds},
		{7, 7 * 1.3, 0.3, results.Holds},
		{7, 7 / 1.31, 0.3, results.DoesNotHold},
		{0.3, 0.63, 0.5, results.DoesNotHold},
		{1, 1, 0, results.Holds},
		{1, 0, 0, results.DoesNotHold},
		{0, 0, 0, results.Holds},
		{0, 1, 0, results.DoesNotHold},
	} {
		if got := verdict(c.published, c.measured, c.tolerance); got != c.want {
			t.Errorf("verdict(%g, %g, %g) = %q, want %q", c.published, c.measured, c.tolerance, got, c.want)
		}
	}
}

// TestJudgeRows: a ratio row between two storages, a storage the article measured that is
// absent (its reason from the data file), a figure tsbench does not measure, and RAM per
// series at too few series for it to mean anything.
func TestJudgeRows(t *testing.T) {
	res := func(bps, rssStart, rssMax float64) results.Storage {
		return results.Storage{
			Write: &results.Write{},
			Resources: &results.Resources{
				History:     &results.Resources{BytesPerSample: &bps},
				RSSBytesMax: &rssMax,
				Timeline:    []results.ResourcePoint{{RSSBytes: &rssStart}},
			},
		}
	}
	vm, prom := res(0.6, 20e6, 200e6), res(3.3, 30e6, 400e6)
	vm.Name, prom.Name = "victoriametrics", "prometheus"
	r := &results.Run{Workload: results.Workload{Targets: 10, ActiveSeries: 8390}, Storages: []results.Storage{prom, vm}}
	pub := &Published{
		Name: "x", Setup: Setup{Targets: 3400}, Absent: map[string]string{"mimir": "not installed"},
		Figures: []Figure{
			{Figure: "disk ratio", Value: 7, Unit: "×", Measure: "bytesPerSample", Storage: "prometheus/victoriametrics", Tolerance: 0.3},
			{Figure: "mimir disk", Value: 3, Unit: "×", Measure: "bytesPerSample", Storage: "mimir/victoriametrics", Tolerance: 0.3},
			{Figure: "index", Value: 20, Unit: "×", Unmeasured: "not measured apart"},
			{Figure: "ram", Value: 5.3, Unit: "×", Measure: "rssMaxPerSeries", Storage: "prometheus/victoriametrics", Tolerance: 0.3},
		},
	}
	rep := Judge(r, pub, 1)
	if rep.ArticleScale != 340 {
		t.Errorf("article scale %g, want 340", rep.ArticleScale)
	}
	rows := rep.Rows
	if rows[0].Verdict != results.Holds || rows[0].MeasuredValue == nil || *rows[0].MeasuredValue != 5.5 {
		t.Errorf("ratio row %+v: want 3.3/0.6 = 5.5, holding 7 within ×/÷ 1.3", rows[0])
	}
	for i, want := range []string{1: "mimir: not installed", 2: "not measured apart", 3: "comparable from 100000 active series, 12× the targets"} {
		if i == 0 {
			continue
		}
		if rows[i].Verdict != results.NotComparable || !strings.Contains(rows[i].Reason, want) {
			t.Errorf("row %d %+v: want not comparable here, %q", i, rows[i], want)
		}
	}
}

// "Stale series returned" needs a series that went stale in what was read back: a run
// without churn has none, and its 0 would read as "handles staleness".
func TestStalenessNeedsStaleSeries(t *testing.T) {
	pub := &Published{Name: "x", Setup: Setup{Targets: 1}, Figures: []Figure{
		{Figure: "stale series returned", Value: 1, Unit: "flag", Measure: "stalenessIgnored", Storage: "victoriametrics"},
	}}
	for _, tt := range []struct {
		name    string
		verify  results.Verify
		verdict string
	}{
		{"no stale marker checked", results.Verify{CheckedSamples: 100}, results.NotComparable},
		{"staleness ignored", results.Verify{CheckedSamples: 100, CheckedStaleMarkers: 4, StalenessIgnored: 2}, results.Holds},
		{"staleness honoured", results.Verify{CheckedSamples: 100, CheckedStaleMarkers: 4}, results.DoesNotHold},
	} {
		r := &results.Run{Workload: results.Workload{Targets: 1}, Storages: []results.Storage{{Name: "victoriametrics", Verify: &tt.verify, Write: &results.Write{}, Resources: &results.Resources{}}}}
		if row := Judge(r, pub, 1).Rows[0]; row.Verdict != tt.verdict {
			t.Errorf("%s: %s (%s), want %s", tt.name, row.Verdict, row.Reason, tt.verdict)
		}
	}
}
