package bench

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/local"
	"github.com/tsbench/tsbench/internal/verify"
)

// settings are each storage's settings that change what tsbench measures and the warnings of
// those that hide data from the checks, and its version, by storage name.
type settings struct {
	flags, warnings map[string][]string
	versions        map[string]string
}

// readSettings reads, before the workload's clock starts, each storage's own settings that
// change what tsbench measures (issue 39), from the storages with a readURL: they join the
// flags a storage tsbench started was given (a setting given is not repeated), and each that
// hides data from the checks is logged as a warning and kept for the summary and the report.
// A storage whose settings cannot be read is said so once, at info: the run goes on without.
func readSettings(ctx context.Context, cfg *config.Config, locals []*local.Process, log *slog.Logger) (settings, error) {
	set := settings{flags: map[string][]string{}, warnings: map[string][]string{}, versions: map[string]string{}}
	kinds := map[string]string{}
	for _, l := range locals {
		kinds[l.Name], set.flags[l.Name], set.versions[l.Name] = l.Kind, l.Settings, l.Version
	}
	checks := storage.ChecksOf(cfg, verify.DefaultSettle)
	var mu sync.Mutex // guards set
	_, err := eachReader(cfg, func(name string, st config.Storage, client *storage.Client) {
		if v := readVersion(ctx, client, st.ReadURL, name, log); v != "" {
			mu.Lock()
			set.versions[name] = v
			mu.Unlock()
		}
		kind, read, err := storage.ReadSettings(ctx, client, st.ReadURL, storage.Kind(kinds[name]))
		if err != nil {
			log.Info("storage settings not read: what changes the figures is not known", "storage", name, "err", err)
			return
		}
		warnings := storage.SettingsWarnings(kind, read, checks)
		mu.Lock()
		defer mu.Unlock()
		set.flags[name] = mergeSettings(set.flags[name], read)
		set.warnings[name] = warnings
		log.Info("storage settings", "storage", name, "kind", kind, "settings", strings.Join(set.flags[name], " "))
		for _, w := range warnings {
			log.Warn("storage setting hides data from the checks", "storage", name, "warning", w)
		}
	})
	if err != nil {
		return set, &ConfigError{err}
	}
	return set, nil
}

// readVersion is the version the storage says it is, "" when it names none (then a local
// storage keeps its binary's package version); logged either way.
func readVersion(ctx context.Context, c *storage.Client, readURL, name string, log *slog.Logger) string {
	v, err := storage.ReadVersion(ctx, c, readURL)
	switch {
	case err != nil:
		log.Info("storage version not read", "storage", name, "err", err)
	case v == "":
		log.Info("storage names no version on its /metrics page", "storage", name)
	default:
		log.Info("storage version", "storage", name, "version", v)
	}
	return v
}

// mergeSettings are the flags given, then each setting read whose name none of them sets.
func mergeSettings(given []string, read []storage.Setting) []string {
	out := slices.Clone(given)
	for _, s := range read {
		set := false
		for _, g := range given {
			set = set || strings.HasPrefix(strings.TrimLeft(g, "-"), s.Name+"=")
		}
		if !set {
			out = append(out, s.Flag)
		}
	}
	return out
}
