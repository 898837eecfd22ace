package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
)

// startLocals starts the default storages side by side; if one fails, the others are stopped.
// Their retention covers the history; they keep native histograms and exemplars when sent.
func startLocals(ctx context.Context, keep bool, history time.Duration, native, exemplars bool, logger *slog.Logger) ([]*local.Process, error) {
	var (
		mu     sync.Mutex
		locals []*local.Process
		errs   []error
		wg     sync.WaitGroup
	)
	for _, kind := range defaultStorages() {
		wg.Go(func() {
			l, err := local.StartWith(ctx, storage.Kind(kind), kind, keep, history, local.SampleTypeFlags(storage.Kind(kind), native, exemplars), logger)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			locals = append(locals, l)
		})
	}
	wg.Wait()
	slices.SortFunc(locals, func(a, b *local.Process) int { return strings.Compare(a.Name, b.Name) })
	if err := errors.Join(errs...); err != nil {
		for _, l := range locals {
			_ = l.Stop()
		}
		return nil, fmt.Errorf("start the default storages: %w", err)
	}
	return locals, nil
}

// stopLocals stops the storages tsbench started, or with Keep leaves them and says where.
func stopLocals(locals []*local.Process, opts Options) {
	for _, l := range locals {
		if opts.Keep {
			opts.Logger.Info("storage left running (-keep)", "storage", l.Name, "url", l.URL, "pid", l.Storage.PID,
				"data_dir", l.DataDir, "log", l.LogPath)
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "kept running: %s at %s (pid %d, data %s); stop it with: kill %d\n",
					l.Name, l.URL, l.Storage.PID, l.DataDir, l.Storage.PID)
			}
			continue
		}
		if err := l.Stop(); err != nil {
			opts.Logger.Warn("stop storage", "storage", l.Name, "err", err)
		}
	}
}
