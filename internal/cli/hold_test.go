package cli

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// A held run serves its results, and report merge reads them by URL: how the Helm chart's
// results are fetched.
func TestHoldServesResultsForMerge(t *testing.T) {
	dir := t.TempDir()
	r := &results.Run{
		SchemaVersion: results.SchemaVersion, StartTime: time.Unix(1_700_000_000, 0).UTC(),
		Shard: &results.Shard{Index: 0, Count: 1, Lead: true},
	}
	if _, err := r.WriteFile(dir); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hold(ctx, addr, dir, slog.New(slog.DiscardHandler)) }()
	var got *results.Run
	for range 50 { // until the server listens
		if got, err = readResults(t.Context(), "http://"+addr+"/results.json"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got.Shard == nil || got.Shard.Count != 1 || !got.StartTime.Equal(r.StartTime) {
		t.Errorf("fetched %+v, want the results written", got)
	}
	if _, err := readResults(t.Context(), "http://"+addr+"/nothing.json"); err == nil {
		t.Error("a missing results file was read")
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err != nil {
		t.Error(err)
	}
}
