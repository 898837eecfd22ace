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
// query API, on the lead shard (once for all shards); none when freshness.interval is 0.
func (r *run) newProbers() error {
	r.fresh = map[string]*freshness.Prober{}
	if !r.cfg.Freshness.On() || !r.cfg.Lead() {
		return nil
	}
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
		r.fresh[name] = freshness.New(name, r.cfg.Freshness, canary, query.NewAPI(rc, st.ReadURL), r.cfg.ObserveInterval, r.log)
	}
	return nil
}

// runProbers runs every canary until ctx ends.
func (r *run) runProbers(ctx context.Context) {
	var wg sync.WaitGroup
	for _, p := range r.fresh {
		wg.Go(func() { _ = p.Run(ctx) })
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
