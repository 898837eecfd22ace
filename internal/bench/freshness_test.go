package bench

import (
	"math"
	"testing"
	"time"

	"github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/freshness"
	"github.com/tsbench/tsbench/internal/query"
)

// TestCanaryLoadIsATenthOfTheReadLoad: the default plan reads 6.2 queries/s from each
// storage (55 rules every 10s, 7 panels every 30s and 4 every minute, 12 index
// lookups every 30s), and the default
// canary's schedule asks a tenth of that or less; with queryInterval 2s, five times as many
// rules, the canary writes more often and still asks a tenth.
func TestCanaryLoadIsATenthOfTheReadLoad(t *testing.T) {
	for _, c := range []struct {
		queryInterval time.Duration
		load          float64
		write         time.Duration
	}{
		{10 * time.Second, 55.0/10 + 7.0/30 + 4.0/60 + 12.0/30, 38710 * time.Millisecond},
		{2 * time.Second, 55.0/2 + 7.0/30 + 4.0/60 + 12.0/30, 8511 * time.Millisecond},
	} {
		cfg := config.Default()
		cfg.QueryInterval = c.queryInterval
		plan, err := query.LoadPlan(tsbench.Assets, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		load := readLoad(plan)
		if math.Abs(load-c.load) > 1e-9 {
			t.Errorf("queryInterval %s: read load %.4f queries/s, want %.4f", c.queryInterval, load, c.load)
		}
		s := freshness.NewSchedule(cfg.Freshness, load)
		if q := s.QueriesPerSecond(); q > freshness.LoadShare*load || s.Write != c.write {
			t.Errorf("queryInterval %s: the canary writes every %s and asks %.3f queries/s: want every %s, at most %.3f", c.queryInterval, s.Write, q, c.write, freshness.LoadShare*load)
		}
	}
}
