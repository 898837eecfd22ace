package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// seriesRun is a run of two storages with late and out-of-order samples and one spike.
func seriesRun(refused int64) *results.Run {
	start := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	at := func(s int) string { return start.Add(time.Duration(s) * time.Second).Format(time.RFC3339Nano) }
	res := func(cpu float64) *results.Resources {
		return &results.Resources{Timeline: []results.ResourcePoint{
			{Time: at(15), CPUCores: new(cpu), RSSBytes: new(100.0 * (1 << 20))},
			{Time: at(25), CPUCores: new(2 * cpu), RSSBytes: new(150.0 * (1 << 20))},
		}}
	}
	r := &results.Run{StartTime: start, EndTime: start.Add(time.Minute), Workload: results.Workload{
		Targets: 20, SeriesPerTarget: 839, ActiveSeries: 8390,
		Series: &results.WorkloadSeries{SeriesWritten: 25170, Events: []results.Event{{Name: "spike", Start: start.Add(20 * time.Second), End: start.Add(30 * time.Second)}}},
	}}
	for _, name := range []string{"prom", "vm"} {
		s := results.Storage{
			Name: name, Resources: res(0.5),
			Write: &results.Write{
				Late:       &results.WriteHeld{Sent: 100, Acked: 100, Refused: map[string]int64{}},
				OutOfOrder: &results.WriteHeld{Sent: 50, Acked: 50, Refused: map[string]int64{}},
			},
			Verify: &results.Verify{Late: &results.VerifyHeld{Checked: 90, Stored: 90}, OutOfOrder: &results.VerifyHeld{Checked: 40, Stored: 40}},
			Series: &results.StorageSeries{Events: []results.EventFigures{{
				Name: "spike", Start: start.Add(20 * time.Second),
				CPUCores: results.Change{Before: new(0.5), During: new(1.0)},
			}}},
		}
		if name == "prom" {
			s.Write.OutOfOrder = &results.WriteHeld{Sent: 50, Acked: 50 - refused, Refused: map[string]int64{"http_400": refused}}
			s.Verify.OutOfOrder.Stored = 0
		}
		r.Storages = append(r.Storages, s)
	}
	return r
}

// TestSeriesInReport: the summary, the HTML and compare show the held samples' accounts and
// read-back, and the events with their figures.
func TestSeriesInReport(t *testing.T) {
	r := seriesRun(50)
	var sum bytes.Buffer
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"LATE AND OUT-OF-ORDER SAMPLES", "out of order refused http_400", "refused (0 of 40)", "stored (40 of 40)",
		"series: 25170 written in all, 8390 active at the end",
		"spike at +20s for 10s: prom cpu 0.500 → 1.000 cores",
	} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<h2>Cardinality events</h2>`, `class="event" data-event="spike"`, `data-title="active series"`, `data-title="series created"`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	c := Compare([]*results.Run{seriesRun(50)}, seriesRun(0))
	found := false
	for _, row := range c.Rows {
		if row.Storage == "prom" && row.Figure == "write.outOfOrder.refused" {
			found = true
			if !row.Flagged || *row.Old != 50 || *row.New != 0 {
				t.Errorf("compare row %+v: want 50 → 0 flagged", row)
			}
		}
	}
	if !found {
		t.Error("compare has no write.outOfOrder.refused row")
	}
	events := map[string]bool{}
	for _, row := range c.Rows {
		if strings.HasPrefix(row.Figure, "series.events[") {
			events[row.Storage+" "+row.Figure] = true
		}
	}
	if !events["prom series.events[0].spike.cpuCores"] || !events["vm series.events[0].spike.cpuCores"] {
		t.Errorf("compare's event rows %v: want each storage's spike CPU", events)
	}
}
