package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// roundLabel is the label every series of a round carries when the run has several rounds
// and storages tsbench did not start: each round's data stays apart from the others', so no
// read-back or check of one round reads another's.
const roundLabel = "round"

// RunRounds runs the benchmark p.Config.Rounds times (Run for each round) and returns the
// last round's results with every round's figures in Rounds; with one round it is Run. The
// storages tsbench starts are started fresh for each round; those named in remoteStorages
// are not, so each round writes under its own round label and the results name them in
// NotFresh. Each round writes its checkpoints under round-N in opts.Out. An interrupt ends the
// round under way (its results are kept, marked Interrupted) and starts no other.
// opts.Finish is given the last round's results only, with every round's figures in them.
func RunRounds(ctx context.Context, p *Prepared, opts Options) (*results.Run, error) {
	stopped := interruptClock(ctx)
	n := max(1, p.Config.Rounds)
	var last *results.Run
	var rounds []results.Round
	for i := 1; i <= n && (i == 1 || ctx.Err() == nil); i++ {
		o := opts
		if n > 1 {
			o.Out = roundDir(opts.Out, i)
			o.Logger = opts.Logger.With("round", i)
		}
		o.Finish = func(res *results.Run) string {
			res.SetStatuses()
			markInterrupted(res, stopped(), p.Config.Duration, i, n)
			rounds = append(rounds, results.RoundOf(i, res))
			if i < n && ctx.Err() == nil {
				return "" // not the last round: its figures are in the last one's results
			}
			addRounds(res, rounds, p.Config)
			if opts.Finish == nil {
				return ""
			}
			return opts.Finish(res)
		}
		res, err := Run(ctx, roundOf(p, i, n), o)
		if err != nil {
			return nil, fmt.Errorf("round %d of %d: %w", i, n, err)
		}
		last = res
	}
	return last, nil
}

// addRounds puts every round's figures in the last round's results, from the first round's
// start.
func addRounds(res *results.Run, rounds []results.Round, cfg *config.Config) {
	if cfg.Rounds <= 1 {
		return
	}
	res.Rounds = rounds
	res.StartTime = rounds[0].StartTime
	if len(cfg.RemoteStorages) > 0 {
		res.NotFresh = cfg.StorageNames()
	}
}

func roundDir(out string, i int) string {
	if out == "" {
		return ""
	}
	return filepath.Join(out, fmt.Sprintf("round-%d", i))
}

// roundOf is the config of round i of n: with several rounds and storages tsbench does not
// start, the profile's series carry round="i".
func roundOf(p *Prepared, i, n int) *Prepared {
	if n == 1 || len(p.Config.RemoteStorages) == 0 {
		return p
	}
	q := *p
	prof := *p.Profile
	prof.Series = slices.Clone(p.Profile.Series)
	for j := range prof.Series {
		prof.Series[j].Labels = withLabel(prof.Series[j].Labels, roundLabel, strconv.Itoa(i))
	}
	q.Profile = &prof
	return &q
}

// withLabel is labels (sorted by name) with name=value added in its place.
func withLabel(labels []workload.Label, name, value string) []workload.Label {
	out := slices.Clone(labels)
	at, _ := slices.BinarySearchFunc(out, name, func(l workload.Label, n string) int {
		switch {
		case l.Name < n:
			return -1
		case l.Name > n:
			return 1
		}
		return 0
	})
	return slices.Insert(out, at, workload.Label{Name: name, Value: value})
}

// interruptClock returns when ctx was cancelled (an interrupt), zero while it was not.
func interruptClock(ctx context.Context) func() time.Time {
	var mu sync.Mutex // guards at
	var at time.Time
	context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		at = time.Now()
	})
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return at
	}
}

// markInterrupted records an interrupt that came before the configured duration ended: a
// run of no duration ends by an interrupt as planned.
func markInterrupted(res *results.Run, at time.Time, duration time.Duration, round, rounds int) {
	if at.IsZero() || duration == 0 || at.Sub(res.StartTime) >= duration {
		return
	}
	res.Interrupted = &results.Interrupted{
		At: at.Sub(res.StartTime).Round(time.Second).String(), Of: duration.String(),
	}
	if rounds > 1 {
		res.Interrupted.Round = fmt.Sprintf("%d of %d", round, rounds)
	}
}
