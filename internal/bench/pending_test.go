package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// stallsAfter is an honest storage in front of the receiver at target that, once it has
// answered after writes, answers no write until the writer gives up on it (a storage starved
// or hung at the end of a run, whose last samples are still pending when the drain ends), or
// with refuse answers each 400 (its samples dropped). It counts answers, not time: on a busy
// machine a run's first write can come seconds after it started.
func stallsAfter(t *testing.T, target string, after int64, refuse bool) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	released := make(chan struct{})
	var answered atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != storagetest.WritePath {
			proxy.ServeHTTP(w, r)
			return
		}
		switch {
		case answered.Load() < after:
			proxy.ServeHTTP(w, r)
			answered.Add(1)
		case refuse:
			http.Error(w, "refused", http.StatusBadRequest)
		default:
			_, _ = io.Copy(io.Discard, r.Body) // read: the server then sees the sender hang up
			select {
			case <-r.Context().Done(): // the sender's timeout, or the drain's end
			case <-released:
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(released) }) // before Close, which waits for the handlers
	return srv.URL
}

// stallRun runs 4 s of 2 targets into a stallsAfter front that stalls (or refuses, with
// refuse) after its first two writes, read back from the receiver behind it, and into a storage beside it
// that answers all along, and returns both storages' results.
func stallRun(t *testing.T, refuse bool) (stalls, honest *results.Storage) {
	t.Helper()
	dir := t.TempDir()
	recv, other := storagetest.StartT(t, storagetest.Options{}), storagetest.StartT(t, storagetest.Options{})
	front := stallsAfter(t, recv.URL, 2, refuse)
	profile, err := storagetest.SmallProfile(filepath.Join("..", "..", "profiles", "node_exporter.json"), dir, 150)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bench.yaml")
	yaml := fmt.Sprintf(`targetsCount: 2
profile: %s
scrapeInterval: 1s
duration: 4s
drainTimeout: 1s
queryInterval: 1s
verifySamples: 100000
freshness: {interval: 0s}
remoteStorages:
  stalls: {writeURL: %s%s, readURL: %s}
  honest: {writeURL: %s%s, readURL: %s}
`, profile, front, storagetest.WritePath, recv.URL, other.URL, storagetest.WritePath, other.URL)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(tsbench.Assets, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer // the handler serializes its writes; read once Run has returned
	res, err := Run(context.Background(), p, Options{VerifyTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), `msg="load stopped; draining pending samples and queries in flight" deadline=1s`) {
		t.Errorf("the drain's deadline is not the config's drainTimeout (1s):\n%s", log.String())
	}
	for _, name := range []string{"stalls", "honest"} {
		st := res.Storage(name)
		if st.Write == nil || st.Verify == nil {
			t.Fatalf("%s: no write or read-back: %+v", name, st)
		}
		if ok, diff := st.Write.Balanced(); !ok {
			t.Fatalf("%s: accounting off by %d", name, diff)
		}
	}
	return res.Storage("stalls"), res.Storage("honest")
}

// TestPendingAtTheEndIsNotMissing: a storage that stops answering writes near the end of a
// run holds samples pending when the drain ends. The read-back stops before the oldest of
// them (verify.pendingFrom) and counts none missing: they are in the account as pending, and
// a storage that acked everything it was sent returned all of it (the matrix's dropSamples
// cell once counted a starved run's last 14 s of unsent samples as the liar's, issue 37).
//
// Its rules are still compared with the other storage's, over the window both had settled:
// read back alone, they once were compared with nothing (e2e TestOTLPLabelMapping in CI).
func TestPendingAtTheEndIsNotMissing(t *testing.T) {
	st, honest := stallRun(t, false)
	w, v := st.Write, st.Verify
	if w.PendingSamples == 0 {
		t.Fatalf("want samples pending at the end: %+v", w)
	}
	if v.PendingFrom == nil || !v.CheckedTo.Equal(v.PendingFrom.Add(-time.Millisecond)) {
		t.Errorf("read back to %s, pendingFrom %v: want the read-back to end just before the oldest pending sample", v.CheckedTo, v.PendingFrom)
	}
	if v.CheckedSamples == 0 || v.MissingSamples != 0 || !v.Exact() {
		t.Errorf("verdict %q (checked %d, missing %d, errors %q, read back %s..%s, examples %q; write %+v): want the samples acked before the stall, all returned",
			v.Verdict(), v.CheckedSamples, v.MissingSamples, v.Errors, v.CheckedFrom, v.CheckedTo, v.Examples, *w)
	}
	if honest.Verify.PendingFrom != nil || !honest.Verify.CheckedTo.After(v.CheckedTo) {
		t.Errorf("honest read back to %s (pendingFrom %v): want its own window, beyond stalls' %s", honest.Verify.CheckedTo, honest.Verify.PendingFrom, v.CheckedTo)
	}
	for _, s := range []*results.Storage{st, honest} {
		if c := s.Verify; c.RulesCompared == 0 || len(c.RuleDiffs) != 0 {
			t.Errorf("%s: %d rules compared, differences %+v (not compared: %q): want the rules compared across both storages, alike",
				s.Name, c.RulesCompared, c.RuleDiffs, c.RulesNotCompared)
		}
	}
}

// TestDroppedIsNotMissing: the samples of writes a storage refused (400: dropped) are not
// looked for (verify.notAckedSamples): the storage returned every sample it acked.
func TestDroppedIsNotMissing(t *testing.T) {
	st, _ := stallRun(t, true)
	w, v := st.Write, st.Verify
	if w.DroppedSamples["http_400"] == 0 || w.PendingSamples != 0 {
		t.Fatalf("want samples dropped as http_400, none pending: %+v", w)
	}
	if v.NotAckedSamples == 0 || v.CheckedSamples == 0 || v.MissingSamples != 0 || !v.Exact() {
		t.Errorf("verdict %q (checked %d, missing %d, not acked %d, errors %q): want the refused samples not looked for, the rest all returned",
			v.Verdict(), v.CheckedSamples, v.MissingSamples, v.NotAckedSamples, v.Errors)
	}
}
