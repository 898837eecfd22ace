package cli

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/reproduce"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// TestReproduceEveryScenario runs each scenario at a tiny scale (one target of 150 series,
// 10 minutes of history, 2 s live) against in-process receivers named as the article's
// storages, and checks that every published figure got a row with a verdict: a measured
// figure, or not comparable here with the reason (the receivers are not processes tsbench
// observes, so their resources are unknown; Mimir is not among them).
func TestReproduceEveryScenario(t *testing.T) {
	names, err := reproduce.Names(tsbench.Assets)
	if err != nil || len(names) != 4 {
		t.Fatalf("scenarios %v (%v): want 4", names, err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := runTiny(t, name)
			rep := res.Reproduction
			pub, err := reproduce.LoadPublished(tsbench.Assets, name)
			if err != nil {
				t.Fatal(err)
			}
			if rep == nil || rep.Name != name || len(rep.Rows) != len(pub.Figures) || rep.Scale != 0.01 {
				t.Fatalf("reproduction %+v: want %s's %d rows at scale 0.01", rep, name, len(pub.Figures))
			}
			for _, row := range rep.Rows {
				switch row.Verdict {
				case results.Holds, results.DoesNotHold:
					if row.MeasuredValue == nil || row.Measured == "" {
						t.Errorf("%s: %s without a measured figure", row.Figure, row.Verdict)
					}
				case results.NotComparable:
					if row.Reason == "" {
						t.Errorf("%s: not comparable here without a reason", row.Figure)
					}
				default:
					t.Errorf("%s: verdict %q", row.Figure, row.Verdict)
				}
			}
		})
	}
}

// runTiny runs tsbench reproduce name at scale 0.01 against in-process receivers.
func runTiny(t *testing.T, name string) *results.Run {
	t.Helper()
	dir := t.TempDir()
	var storages strings.Builder
	for _, s := range []string{"prometheus", "victoriametrics"} {
		recv, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = recv.Close() })
		fmt.Fprintf(&storages, "  %s: {writeURL: %s%s, readURL: %s}\n", s, recv.URL, storagetest.WritePath, recv.URL)
	}
	overrides := fmt.Sprintf("profile: %s\nhistory: 10m\nduration: 2s\nverifySamples: 200\nremoteStorages:\n%s", smallProfile(t, dir), storages.String())
	path := filepath.Join(dir, "overrides.yaml")
	if err := os.WriteFile(path, []byte(overrides), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	args := []string{"reproduce", name, "-scale", "0.01", "-config", path, "-out", out, "-httpListenAddr", ""}
	if code := Main(context.Background(), args, &stdout, &stderr); code != ExitOK && code != ExitThreshold {
		t.Fatalf("tsbench reproduce exited %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "published vs measured: "+name) {
		t.Errorf("the summary has no published vs measured table:\n%s", stdout.String())
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !bytes.Contains(html, []byte("<h2>Published vs measured</h2>")) {
		t.Errorf("report.html (%v) has no published vs measured section", err)
	}
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestReproduceUsage: an unknown scenario, a missing one and a scale of 0 are usage errors.
func TestReproduceUsage(t *testing.T) {
	for _, args := range [][]string{{"reproduce"}, {"reproduce", "nope"}, {"reproduce", "node-exporter-24h", "-scale", "0"}} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), args, &stdout, &stderr); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d:\n%s", args, code, ExitUsage, stderr.String())
		}
	}
}
