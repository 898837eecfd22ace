package bench

import (
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/report"
)

func TestBytesPerSampleUsesAckedByThen(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	disk := func(v float64) *float64 { return &v }
	res := &report.Resources{Timeline: []report.ResourcePoint{
		{Time: t0.Format(time.RFC3339), DiskBytes: disk(100)},                        // nothing acked yet
		{Time: t0.Add(10 * time.Second).Format(time.RFC3339), DiskBytes: disk(1000)}, // 100 acked
		{Time: t0.Add(25 * time.Second).Format(time.RFC3339), DiskBytes: disk(3000)}, // 300 acked at 20 s
		{Time: t0.Add(30 * time.Second).Format(time.RFC3339)},                        // disk unknown
	}}
	writes := []report.WritePoint{
		{Time: t0.Add(10 * time.Second), Acked: 100},
		{Time: t0.Add(20 * time.Second), Acked: 300},
		{Time: t0.Add(30 * time.Second), Acked: 600},
	}
	bytesPerSample(res, writes)
	want := []*float64{nil, disk(10), disk(10), nil}
	for i, p := range res.Timeline {
		got := p.BytesPerSample
		if (got == nil) != (want[i] == nil) || (got != nil && *got != *want[i]) {
			t.Errorf("point %d: bytes per sample %v, want %v", i, deref(got), deref(want[i]))
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
