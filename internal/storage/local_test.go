package storage

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"
)

// requireBinary skips when a storage binary is missing, but fails under CI=true: CI installs it.
func requireBinary(t *testing.T, bin string) {
	t.Helper()
	if _, err := exec.LookPath(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed: scripts/install-deps.sh installs it", bin)
		}
		t.Skipf("%s not installed", bin)
	}
}

func TestStartStop(t *testing.T) {
	for _, kind := range []string{KindVictoriaMetrics, KindPrometheus} {
		t.Run(kind, func(t *testing.T) {
			requireBinary(t, specs()[kind].binary)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l, err := Start(ctx, kind, "x", slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(l.Storage.MetricsURLs[0])
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || len(body) == 0 {
				t.Errorf("GET /metrics: %d, %d bytes", resp.StatusCode, len(body))
			}
			if err := l.Stop(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-l.Exited():
			default:
				t.Error("process still running after Stop")
			}
			if _, err := os.Stat(l.DataDir); !os.IsNotExist(err) {
				t.Errorf("data dir left behind: %v", err)
			}
		})
	}
}

func TestStartMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), KindPrometheus, "prom", slog.New(slog.DiscardHandler))
	want := `prometheus not found on PATH: install the Debian package "prometheus"`
	if err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("got %v, want prefix %q", err, want)
	}
}
