package bench

import (
	"context"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/conformance"
	"github.com/tsbench/tsbench/internal/results"
)

// Conformance runs Prometheus' PromQL test files against every storage of the config, one
// storage after the other, or, when it names none, against the local storages a run starts,
// started fresh for it (their default retention, 15 and 31 days, holds the suite's span),
// Prometheus with native histograms on: the suite writes them. A
// storage that cannot be tested at all is named under its problems; the others go on.
func Conformance(ctx context.Context, p *Prepared, opts Options) (*results.Run, error) {
	opts.setDefaults()
	suite, err := conformance.Builtin()
	if err != nil {
		return nil, err
	}
	cfg := *p.Config
	if len(cfg.RemoteStorages) == 0 {
		locals, err := startLocals(ctx, opts.Keep, 0, true, cfg.Exemplars.Percent > 0, opts.Logger)
		if err != nil {
			return nil, err
		}
		defer stopLocals(locals, opts)
		cfg.RemoteStorages = map[string]config.Storage{}
		for _, l := range locals {
			cfg.RemoteStorages[l.Name] = l.Storage
		}
	}
	res := &results.Run{SchemaVersion: results.SchemaVersion, StartTime: time.Now().UTC(), Config: cfg.Redacted()}
	for _, name := range cfg.StorageNames() {
		s := results.Storage{Name: name}
		out, err := conformance.Run(ctx, suite, name, cfg.RemoteStorages[name], time.Now(), opts.Logger)
		if err != nil {
			s.Problems = append(s.Problems, "conformance: "+err.Error())
		}
		s.Conformance = out
		res.Storages = append(res.Storages, s)
	}
	res.EndTime = time.Now().UTC()
	return res, nil
}
