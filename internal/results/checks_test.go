package results

import (
	"testing"
	"time"
)

// TestAddCheckBoundsAndKeepsCounts: a week of checks every 10 minutes fits MaxChecks entries
// that add up to every check, spread evenly, and the one check that lost data still shows.
func TestAddCheckBoundsAndKeepsCounts(t *testing.T) {
	base := time.Unix(1_700_000_000, 0).UTC()
	var checks []Check
	var total Check
	const n = 7 * 24 * 6
	for i := range n {
		c := Check{At: base.Add(time.Duration(i) * 10 * time.Minute), Checked: 100, Reads: 3, Checks: 1, Seconds: float64(i % 7)}
		if i == 500 {
			c.Missing, c.LostAfterAck = 40, 40
		}
		c.AddTo(&total)
		checks = AddCheck(checks, c)
	}
	if len(checks) != MaxChecks {
		t.Fatalf("%d checks kept, want %d", len(checks), MaxChecks)
	}
	var sum Check
	lossShown := 0
	for _, c := range checks {
		c.AddTo(&sum)
		if c.LostAfterAck > 0 {
			lossShown++
		}
		if c.Checks < n/MaxChecks/2 || c.Checks > 2*n/MaxChecks+1 {
			t.Errorf("entry at %s adds up %d checks: not spread evenly", c.At, c.Checks)
		}
	}
	if sum != total || total.Checks != n || total.LostAfterAck != 40 || total.Seconds != 6 || lossShown != 1 {
		t.Errorf("kept entries add up to %+v, want %+v (%d checks, 40 lost, in one entry; %d entries show it)", sum, total, n, lossShown)
	}
	if !checks[0].At.Equal(base) {
		t.Errorf("first entry at %s, want %s", checks[0].At, base)
	}
}

// TestMergeChecksOfShards: shards check at the same moments, each its own targets: the merged
// checks add up per moment, count each moment once, and keep the earliest loss.
func TestMergeChecksOfShards(t *testing.T) {
	base := time.Unix(1_700_000_000, 0).UTC()
	shard := func(lostAt int) *Verify {
		v := &Verify{Continuous: &Continuous{IntervalSeconds: 600, CheckedTo: base.Add(20 * time.Minute)}}
		for k := 1; k <= 2; k++ {
			c := Check{At: base.Add(time.Duration(k) * 10 * time.Minute), Checked: 100, Rechecked: 10, Checks: 1}
			if k == lostAt {
				c.Missing, c.LostAfterAck = 5, 5
				v.LostAfterAck, v.LostAfterAckAt = 5, &c.At
			}
			v.Checks = AddCheck(v.Checks, c)
			c.AddTo(&v.Continuous.Total)
		}
		return v
	}
	m := mergeVerifies([]*Verify{shard(2), shard(1)}, false)
	if len(m.Checks) != 2 || m.Checks[0].Checked != 200 || m.Checks[0].Checks != 1 || m.Checks[1].LostAfterAck != 5 {
		t.Errorf("merged checks %+v", m.Checks)
	}
	if tot := m.Continuous.Total; tot.Checks != 2 || tot.Checked != 400 || tot.LostAfterAck != 10 {
		t.Errorf("merged total %+v, want 2 checks of 400 samples, 10 lost", tot)
	}
	if m.LostAfterAck != 10 || m.LostAfterAckAt == nil || !m.LostAfterAckAt.Equal(base.Add(10*time.Minute)) {
		t.Errorf("lostAfterAck %d at %v, want 10 at the first check", m.LostAfterAck, m.LostAfterAckAt)
	}
}
