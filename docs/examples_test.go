package docs_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tsbench/tsbench/internal/cli"
)

// runsFor finds, in an example's opening comment, how long it runs.
var runsFor = regexp.MustCompile(`(?m)^# .*\bRuns (\d|until|the)`)

// TestExamplesValidate: every config under examples/ passes `tsbench validate` (run from the
// repository's root, as its paths are written) and opens with a comment that says what it
// shows and how long it runs ("Runs 10 minutes").
func TestExamplesValidate(t *testing.T) {
	t.Chdir("..")
	files, err := filepath.Glob("examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	files = append(files, "examples/ci/bench.yaml")
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if c := cli.Main(context.Background(), []string{"validate", "-config", f}, &stdout, &stderr); c != cli.ExitOK {
				t.Errorf("tsbench validate -config %s: exit %d\n%s", f, c, stderr.String())
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			header, _, _ := strings.Cut(string(b), "\n\n")
			if !strings.HasPrefix(header, "# ") || !runsFor.MatchString(header) {
				t.Errorf("%s: open it with a comment saying what it shows and how long it runs, e.g. \"# ... Runs 10 minutes.\"", f)
			}
		})
	}
}

// TestCIWorkflow: the GitHub Actions example is a workflow whose job runs the generic script,
// and the script exists and is executable.
func TestCIWorkflow(t *testing.T) {
	b, err := os.ReadFile("../examples/ci/release-candidate.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(false)
	if err := dec.Decode(&wf); err != nil {
		t.Fatal(err)
	}
	runs := false
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			runs = runs || strings.Contains(s.Run, "examples/ci/compare-release.sh")
		}
	}
	if wf.On["workflow_dispatch"] == nil || !runs {
		t.Errorf("release-candidate.yml: want a workflow_dispatch workflow with a step running examples/ci/compare-release.sh")
	}
	st, err := os.Stat("../examples/ci/compare-release.sh")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&0o111 == 0 {
		t.Errorf("examples/ci/compare-release.sh: mode %v, want executable", st.Mode())
	}
}
