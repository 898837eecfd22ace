package cli

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestEveryCommandHelp: every command's and subcommand's -h (-help, --help, and `tsbench help
// COMMAND`) prints its usage line, positional arguments included, on stdout and exits 0, with
// nothing on stderr (issue 39: report -h named neither RESULTS.json nor compare and merge,
// version -h was empty, profile -h exited 2).
func TestEveryCommandHelp(t *testing.T) {
	tests := map[string][]string{
		"run":              {"  tsbench run [-config FILE] [-duration D]"},
		"validate":         {"  tsbench validate [-config] FILE [-connect]\n"},
		"report":           {"  tsbench report RESULTS.json [-out DIR]\n", "  tsbench report compare OLD.json|DIR... NEW.json", "  tsbench report merge -out DIR|- SHARD.json|URL...\n"},
		"report compare":   {"  tsbench report compare OLD.json|DIR... NEW.json [-out DIR]", "write DIR/compare.html", "The last file is the new run", "  -fail-on string"},
		"report merge":     {"  tsbench report merge -out DIR|- SHARD.json|URL...\n", "  -out string"},
		"conformance":      {"  tsbench conformance [-config FILE]"},
		"profile":          {"  tsbench profile capture -url URL -out FILE", "  tsbench profile metadata -url URL -profile FILE\n"},
		"profile capture":  {"  tsbench profile capture -url URL -out FILE", "  -scrapes int"},
		"profile metadata": {"  tsbench profile metadata -url URL -profile FILE\n", "  -profile string"},
		"reproduce":        {"  tsbench reproduce NAME [-scale S]", "  -scale float"},
		"version":          {"  tsbench version\n", "tsbench --version"},
	}
	for _, name := range slices.Sorted(maps.Keys(commands())) {
		if _, ok := tests[name]; !ok {
			t.Errorf("command %s has no case here: add its usage line", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tests)) {
		cmd := strings.Fields(name)
		for _, args := range [][]string{
			append(slices.Clone(cmd), "-h"), append(slices.Clone(cmd), "-help"), append(slices.Clone(cmd), "--help"),
			append([]string{"help"}, cmd...),
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				if code := Main(t.Context(), args, &stdout, &stderr); code != ExitOK {
					t.Errorf("exit %d, want %d", code, ExitOK)
				}
				if !strings.HasPrefix(stdout.String(), "Usage:\n  tsbench "+name) {
					t.Errorf("stdout does not open with the usage line:\n%s", stdout.String())
				}
				for _, want := range tests[name] {
					if !strings.Contains(stdout.String(), want) {
						t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
					}
				}
				if stderr.Len() > 0 {
					t.Errorf("stderr: %s", stderr.String())
				}
			})
		}
	}
}

// TestVersionFlag: `tsbench --version` and `-version` print what `tsbench version` does.
func TestVersionFlag(t *testing.T) {
	var want bytes.Buffer
	if code := Main(t.Context(), []string{"version"}, &want, &want); code != ExitOK || !strings.HasPrefix(want.String(), "tsbench ") {
		t.Fatalf("tsbench version: exit %d, %q", code, want.String())
	}
	for _, flag := range []string{"--version", "-version"} {
		var stdout, stderr bytes.Buffer
		if code := Main(t.Context(), []string{flag}, &stdout, &stderr); code != ExitOK || stdout.String() != want.String() || stderr.Len() > 0 {
			t.Errorf("tsbench %s: exit %d, stdout %q, stderr %q; want 0 and %q", flag, code, stdout.String(), stderr.String(), want.String())
		}
	}
}

// TestUsageErrorsShowUsage: a flag or argument a command does not take exits 2 with the
// problem and the command's usage lines on stderr, once, and nothing on stdout.
func TestUsageErrorsShowUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-bogus"}, "tsbench run: flag provided but not defined: -bogus\nusage:\n  tsbench run [-config FILE]"},
		{[]string{"validate"}, "tsbench validate: a config FILE is required\nusage:\n  tsbench validate [-config] FILE [-connect]\n"},
		{[]string{"validate", "a.yaml", "b.yaml"}, `tsbench validate: unexpected argument "b.yaml": validate checks one config file`},
		{[]string{"profile"}, "tsbench profile: missing command: capture or metadata\nusage:\n  tsbench profile capture -url URL -out FILE"},
		{[]string{"profile", "captur"}, `tsbench profile: unknown command "captur": capture or metadata`},
		{[]string{"profile", "capture", "-url", "http://127.0.0.1:1/metrics"}, "-url and -out are required\nusage:\n  tsbench profile capture -url URL"},
		{[]string{"version", "now"}, `tsbench version: unexpected argument "now"`},
		{[]string{"help", "frobnicate"}, `tsbench: unknown command "frobnicate"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Main(t.Context(), tc.args, &stdout, &stderr); code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
			if n := strings.Count(stderr.String(), "flag provided"); n > 1 {
				t.Errorf("the problem is printed %d times:\n%s", n, stderr.String())
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout: %s", stdout.String())
			}
		})
	}
}
