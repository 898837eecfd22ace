package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMergeSeries: the shards' held accounts, held read-backs and series written add up.
func TestMergeSeries(t *testing.T) {
	a, b := shardRun(0, 2, true, 100, 90, 10), shardRun(1, 2, false, 100, 100, 0)
	for i, r := range []*Run{a, b} {
		n := int64(i + 1)
		r.Workload.Series = &WorkloadSeries{SeriesWritten: 10 * n, Timeline: []SeriesPoint{{Active: n, Created: 2 * n}}}
		w, v := r.Storages[0].Write, r.Storages[0].Verify
		w.OutOfOrder = &WriteHeld{Sent: 5 * n, Acked: n, Refused: map[string]int64{"http_400": 4 * n}}
		v.OutOfOrder = &VerifyHeld{Checked: 4 * n, Stored: n}
	}
	m, err := Merge([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	want := &WorkloadSeries{SeriesWritten: 30, Timeline: []SeriesPoint{{Active: 3, Created: 6}}}
	if diff := cmp.Diff(want, m.Workload.Series); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
	s := m.Storage("vm")
	if diff := cmp.Diff(&WriteHeld{Sent: 15, Acked: 3, Refused: map[string]int64{"http_400": 12}}, s.Write.OutOfOrder); diff != "" {
		t.Errorf("write.outOfOrder (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&VerifyHeld{Checked: 12, Stored: 3}, s.Verify.OutOfOrder); diff != "" {
		t.Errorf("verify.outOfOrder (-want +got):\n%s", diff)
	}
	if s.Write.Late != nil || s.Verify.Late != nil {
		t.Errorf("late %+v %+v: none was sent", s.Write.Late, s.Verify.Late)
	}
}
