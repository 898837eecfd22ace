package bench

import (
	"context"
	"net/http"
	"sync"

	"github.com/tsbench/tsbench/internal/freshness"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/remotewrite"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// newProbers makes the freshness canary of every storage that gets writes and answered the
// query API, on the lead shard (once for all shards); none when freshness.interval is 0. Its
// schedule is held to a tenth of the query plan's load (freshness.NewSchedule).
func (r *run) newProbers() error {
	r.fresh = map[string]*freshness.Prober{}
	if !r.cfg.Freshness.On() || !r.cfg.Lead() {
		return nil
	}
	load := readLoad(r.p.Plan)
	logged := false
	for _, name := range r.cfg.StorageNames() {
		st := r.cfg.RemoteStorages[name]
		if qa := r.queryAPI[name]; st.DisableWrite || qa == nil || !qa.Available {
			continue
		}
		wc, err := storage.NewClient(name, st, storage.Write, 1)
		if err != nil {
			return err
		}
		wc.HTTP.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		canary, err := remotewrite.NewCanary(st, wc)
		if err != nil {
			return err
		}
		rc, err := storage.NewClient(name, st, storage.Read, 3) // a connection per probe
		if err != nil {
			return err
		}
		p := freshness.New(name, r.cfg.Freshness, load, canary, query.NewAPI(rc, st.ReadURL), r.cfg.ObserveInterval, r.log)
		r.fresh[name] = p
		if !logged { // one schedule for every storage
			logged = true
			sc := p.Schedule()
			r.log.Info("freshness canary", "write_interval", sc.Write, "polls_per_sample", len(sc.Polls),
				"first_poll", sc.Polls[0], "last_poll", sc.Polls[len(sc.Polls)-1],
				"queries_per_second", sc.QueriesPerSecond(), "read_load_queries_per_second", load)
		}
	}
	return nil
}

// readLoad is the queries per second the plan asks of each storage: each query once per its
// interval (the default rules, dashboard and index lookups: 55/10s + 8/30s + 3/1m + 12/30s =
// 6.2). A storage's own pace (missed evaluations) is not in it: it is the load as planned.
func readLoad(plan *query.Plan) float64 {
	if plan == nil {
		return 0
	}
	var qps float64
	for _, q := range plan.Queries {
		if q.Interval > 0 {
			qps += 1 / q.Interval.Seconds()
		}
	}
	return qps
}

// runProbers runs each storage's canary from the moment the storage caught up (at once
// without history) until ctx ends. A canary sample is stamped with the wall clock: one
// written while the storage catches up would make its newest sample hours newer than the
// history still to come, and a TSDB head refuses samples more than half a block range (1 h)
// older than its newest as out of bounds (issue 36: Prometheus refused 80 % of 24 h).
func (r *run) runProbers(ctx context.Context) {
	var wg sync.WaitGroup
	for name, p := range r.fresh {
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-r.writer.CaughtUp(name):
			}
			_ = p.Run(ctx)
		})
	}
	wg.Wait()
}

// ackedNothingStored completes the read-back's "stored nothing" with the samples the storage
// acked, or takes it back when the write account shows none acked: then the drops say why.
func ackedNothingStored(s *results.Storage) {
	if s.Verify == nil || s.Verify.StoredNothing == nil || s.Write == nil {
		return
	}
	if s.Write.AckedSamples == 0 {
		s.Verify.StoredNothing = nil
		return
	}
	s.Verify.StoredNothing.Acked = s.Write.AckedSamples
}
