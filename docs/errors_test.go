package docs_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/cli"
)

// TestConfigErrorsExample: the config with mistakes in docs/configuration.md gets, from
// `tsbench validate`, the very errors the page shows after it.
func TestConfigErrorsExample(t *testing.T) {
	b, err := os.ReadFile("configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\n# bench.yaml, with")
	if !ok {
		t.Fatal("configuration.md: no ```yaml block opening with # bench.yaml, with")
	}
	config, rest, _ := strings.Cut(rest, "```")
	_, shown, ok := strings.Cut(rest, "```text\n")
	if !ok {
		t.Fatal("configuration.md: no ```text block after the config with mistakes")
	}
	shown, _, _ = strings.Cut(shown, "```")
	path := filepath.Join(t.TempDir(), "bench.yaml")
	// "#" closes the comment line the cut above began in, so every line keeps its number.
	if err := os.WriteFile(path, []byte("#"+config), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"validate", "-config", path}, io.Discard, &stderr); code != cli.ExitUsage {
		t.Errorf("exit %d, want %d", code, cli.ExitUsage)
	}
	got := strings.ReplaceAll(stderr.String(), path, "bench.yaml")
	if diff := cmp.Diff(shown, got); diff != "" {
		t.Errorf("configuration.md shows errors tsbench validate does not give (-page +tsbench):\n%s", diff)
	}
}
