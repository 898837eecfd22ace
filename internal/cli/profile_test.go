package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/workload"
)

// `tsbench profile metadata` fills a profile file's help and units in place from one scrape.
func TestProfileMetadata(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "# HELP up_seconds_total Up time.\n# TYPE up_seconds_total counter\nup_seconds_total 1\n")
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "p.json")
	err := os.WriteFile(path, []byte(`{"source":"test","series":[{"name":"up_seconds_total","type":"counter","shape":{"kind":"counter","rate":1}}]}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Main(t.Context(), []string{"profile", "metadata", "-url", srv.URL, "-profile", path}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "help text for 1 of 1 series") {
		t.Errorf("stdout %q", stdout.String())
	}
	p, err := workload.LoadProfileFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Series[0]; s.Help != "Up time." || s.Unit != "seconds" || s.Shape.Rate != 1 {
		t.Errorf("series %+v: want help and unit filled, shape kept", s)
	}
	stderr.Reset()
	if code := Main(t.Context(), []string{"profile", "metadata", "-url", srv.URL}, &stdout, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), "-url and -profile are required") {
		t.Errorf("without -profile: exit %d, stderr %q", code, stderr.String())
	}
}
