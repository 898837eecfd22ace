package bench

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/verify"
)

// readSettings reads, before the load, each storage's own settings that change what tsbench
// measures (issue 39), from the storages with a readURL: they join the flags a storage tsbench
// started was given (a setting given is not repeated), and each that hides data from the
// checks is logged as a warning and kept for the summary and the report. A storage whose
// settings cannot be read is said so once, at info: the run goes on without them.
func (r *run) readSettings(ctx context.Context) {
	checks := storage.ChecksOf(r.cfg, verify.DefaultSettle)
	var wg sync.WaitGroup
	for _, name := range r.cfg.StorageNames() {
		st := r.cfg.RemoteStorages[name]
		if st.ReadURL == "" || r.readers[name] == nil {
			continue
		}
		wg.Go(func() {
			kind, read, err := storage.ReadSettings(ctx, r.readers[name], st.ReadURL, r.kinds[name])
			if err != nil {
				r.log.Info("storage settings not read: what changes the figures is not known", "storage", name, "err", err)
				return
			}
			warnings := storage.SettingsWarnings(kind, read, checks)
			r.mu.Lock()
			defer r.mu.Unlock()
			r.settings[name] = mergeSettings(r.settings[name], read)
			r.settingsWarnings[name] = warnings
			r.log.Info("storage settings", "storage", name, "kind", kind, "settings", strings.Join(r.settings[name], " "))
			for _, w := range warnings {
				r.log.Warn("storage setting hides data from the checks", "storage", name, "warning", w)
			}
		})
	}
	wg.Wait()
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
