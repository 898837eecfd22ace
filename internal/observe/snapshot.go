package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
)

// snapshotResult is the size of a storage's snapshot, or why there is none.
type snapshotResult struct {
	bytes *float64
	err   string
}

// reason is why there is no size; "" when there is one.
func (s snapshotResult) reason() string {
	switch {
	case s.bytes != nil:
		return ""
	case s.err == "":
		return "no snapshot was taken (Snapshot not called)"
	}
	return s.err
}

// Snapshot takes a snapshot of every storage whose API allows it and whose data dir tsbench
// can read, measures it like `du -L` (hard links once) and deletes it. It never fails the
// run: a storage that cannot be snapshotted gets a reason.
func (o *Observer) Snapshot(ctx context.Context) {
	for _, ob := range o.targets {
		res := ob.takeSnapshot(ctx)
		switch {
		case res.err != "" && ob.DataDir != "" && ob.BaseURL != "":
			ob.log.Warn("no snapshot size", "reason", res.err)
		case res.err != "":
			ob.log.Info("no snapshot size", "reason", res.err)
		}
		o.mu.Lock()
		ob.snapshot = res
		o.mu.Unlock()
	}
}

func (ob *observed) takeSnapshot(ctx context.Context) snapshotResult {
	if ob.DataDir == "" {
		return snapshotResult{err: "no dataDir: the snapshot could not be measured"}
	}
	if ob.BaseURL == "" {
		return snapshotResult{err: "no readURL to ask for a snapshot"}
	}
	kind := ob.kind()
	snap := kind.Family().Snapshot
	if snap == nil {
		return snapshotResult{err: fmt.Sprintf("storage kind %q: snapshots are taken of %s only", kind, storage.KindsWhere(func(f storage.Family) bool { return f.Snapshot != nil }))}
	}
	name, err := snap.Create(ctx, ob.call)
	if err == nil && (name == "" || strings.ContainsAny(name, `/\`) || name == "..") {
		err = fmt.Errorf("unexpected snapshot name %q", name)
	}
	if err != nil {
		return snapshotResult{err: err.Error()}
	}
	dir := filepath.Join(ob.DataDir, "snapshots", name)
	n, err := dirBytes(dir)
	res := snapshotResult{bytes: &n}
	if err != nil {
		res = snapshotResult{err: err.Error()}
	}
	if err := snap.Delete(ctx, ob.call, name, dir); err != nil { // the size stands; the leftover is worth a warning
		ob.log.Warn("could not delete the snapshot", "dir", dir, "err", err)
	}
	return res
}

func (ob *observed) call(ctx context.Context, method, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, ob.BaseURL+path, nil)
	if err != nil { // its text quotes the URL, password included
		return fmt.Errorf("%s %s: invalid URL", method, config.RedactURL(ob.BaseURL+path))
	}
	resp, err := ob.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, config.RedactURL(ob.BaseURL+path), storage.StripURL(err))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_, _ = io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, config.RedactURL(ob.BaseURL+path), err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d %s", method, config.RedactURL(ob.BaseURL+path), resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if into == nil {
		return nil
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s %s: %w", method, config.RedactURL(ob.BaseURL+path), err)
	}
	return nil
}
