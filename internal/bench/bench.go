// Package bench is one benchmark run: it starts the local storages when the config names none,
// wires the write, read, observe and verify paths to every storage, stops them in order and
// assembles the results.
//
// Invariant: shutdown runs in one order — stop the load, drain the writes (bounded by
// drainTimeout), wait for the queries in flight, verify, snapshot, assemble — and a storage
// that fails on the way is reported, never the reason the results are not written.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
	"github.com/tsbench/tsbench/internal/threshold"
	"github.com/tsbench/tsbench/internal/workload"
)

// DefaultProfilePath is the embedded node_exporter profile.
const DefaultProfilePath = "profiles/node_exporter.json"

// defaultStorages are the kinds started when the config names no storage, each named
// after its kind, in name order.
func defaultStorages() []string {
	var names []string
	for _, k := range storage.DefaultKinds() {
		names = append(names, string(k))
	}
	return names
}

// Options are the run's settings that are not part of the benchmark's config.
type Options struct {
	// HTTPListenAddr serves tsbench's own /metrics, and the live report at / with
	// LiveReport; "" serves nothing.
	HTTPListenAddr string
	// LiveReport renders the live report (live.go); nil serves none.
	LiveReport LiveReport
	// LiveGrace is how long the live report's address keeps answering once the run has ended
	// and Finish has written the report, with that report and its path (live.go); only when
	// the page was loaded during the run, and the run was not interrupted. 0: not at all.
	LiveGrace time.Duration
	// Finish, when set, is given the results once the run has ended, while the live report's
	// address still answers; it writes them and the report, and returns the report's path
	// ("" when it could not be written), which the live page then names.
	Finish func(res *results.Run) (report string)
	// Keep leaves the storages tsbench started running after the run.
	Keep bool
	// Progress receives a progress line every ProgressEvery; nil prints none.
	Progress      io.Writer
	ProgressEvery time.Duration
	// VerifyTimeout bounds the read-back at the end.
	VerifyTimeout time.Duration
	// Out is the directory of results.json: the checkpoints go there (checkpointInterval);
	// "" writes none.
	Out    string
	Logger *slog.Logger
}

func (o *Options) setDefaults() {
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 10 * time.Second
	}
	if o.VerifyTimeout <= 0 {
		o.VerifyTimeout = 3 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// ConfigError is a problem of the config found while loading what it names (profile, rules,
// thresholds): the user fixes the file.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Prepared is a config with everything it names loaded and checked.
type Prepared struct {
	Config     *config.Config
	Profile    *workload.Profile
	Plan       *query.Plan
	Thresholds []threshold.Threshold
}

// Prepare loads the profile, the query plan and the thresholds of cfg; assets holds the
// embedded defaults. Every problem is returned at once, as a ConfigError.
func Prepare(assets fs.FS, cfg *config.Config) (*Prepared, error) {
	p := &Prepared{Config: cfg}
	var errs []error
	var err error
	if cfg.Profile == "" {
		p.Profile, err = workload.LoadProfile(assets, DefaultProfilePath)
	} else {
		p.Profile, err = workload.LoadProfileFile(cfg.Profile)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("profile: %w", err))
	}
	if p.Plan, err = query.LoadPlan(assets, cfg); err != nil {
		errs = append(errs, err) // named by its key (queryRules, rangeQueries) at the source
	}
	if p.Thresholds, err = threshold.Parse(cfg.Thresholds, storageNames(cfg)); err != nil {
		errs = append(errs, err)
	}
	if _, err = threshold.ParseCompareRules("compareThresholds", cfg.CompareThresholds, storageNames(cfg)); err != nil {
		errs = append(errs, err) // checked now, applied by report compare
	}
	if len(errs) > 0 {
		return nil, &ConfigError{errors.Join(errs...)}
	}
	return p, nil
}

// storageNames are the configured storages, or the default ones when there are none.
func storageNames(cfg *config.Config) []string {
	if len(cfg.RemoteStorages) > 0 {
		return cfg.StorageNames()
	}
	return defaultStorages()
}

// Warnings are the things a user should know before the run starts.
func (p *Prepared) Warnings() []string {
	w := append(p.Config.Warnings(), p.Plan.Warnings()...)
	w = append(w, p.Config.NativeHistogramWarnings(p.Profile.HasType("histogram"), p.Profile.HasType("summary"))...)
	return append(w, p.Config.HistoryWarnings(len(p.Profile.Series))...)
}

// Run runs the benchmark until ctx ends or the configured duration passes, then shuts down
// in order, hands the results to opts.Finish and returns them. An error means there are no
// results (a storage could not be started, a port could not be opened); a storage failing
// during the run is in the results.
func Run(ctx context.Context, p *Prepared, opts Options) (*results.Run, error) {
	opts.setDefaults()
	cfg := *p.Config
	var locals []*local.Process
	if len(cfg.RemoteStorages) == 0 {
		var err error
		if locals, err = startLocals(ctx, opts.Keep, cfg.History, cfg.NativeHistograms.On(), cfg.Exemplars.Percent > 0, opts.Logger); err != nil {
			return nil, err
		}
		defer stopLocals(locals, opts)
		cfg.RemoteStorages = map[string]config.Storage{}
		for _, l := range locals {
			cfg.RemoteStorages[l.Name] = l.Storage
		}
	}
	apis, err := checkQueryAPIs(ctx, &cfg, opts.Logger)
	if err != nil {
		return nil, err
	}
	set, err := readSettings(ctx, &cfg, locals, opts.Logger)
	if err != nil {
		return nil, err
	}
	r, err := newRun(&cfg, p, opts, locals, apis, set)
	if err != nil {
		return nil, err
	}
	defer r.close()
	for _, l := range locals {
		go r.watchExit(l)
	}
	run := r.run
	if cfg.ScrapeModeOn() {
		if cfg.Shard.Of() > 1 {
			return nil, &ConfigError{fmt.Errorf("-shard %s: scrape mode runs one tsbench (the agent scrapes its targets)", cfg.Shard)}
		}
		run = r.runScrape // scrape.go: an agent writes, not tsbench
	}
	res, err := run(ctx)
	if err != nil {
		return nil, err
	}
	r.finish(ctx, res) // live.go
	return res, nil
}
