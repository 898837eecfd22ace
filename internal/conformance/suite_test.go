package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/promql/parser"
)

func TestMain(m *testing.M) {
	EnableParserFeatures() // before any test parses, as tsbench conformance does
	os.Exit(m.Run())
}

// The embedded files are the module's, byte for byte: the suite is the one of the version
// tsbench depends on.
func TestEmbeddedFilesMatchModule(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "github.com/prometheus/prometheus").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "promql", "promqltest", "testdata")
	want, err := filepath.Glob(filepath.Join(dir, "*.test"))
	if err != nil || len(want) == 0 {
		t.Fatalf("module test files: %v %v", want, err)
	}
	for _, path := range want {
		a, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := testFiles.ReadFile("testdata/promql/" + filepath.Base(path))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s: the embedded copy differs from the module's (%v): cp %s internal/conformance/testdata/promql/", filepath.Base(path), err, path)
		}
	}
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Files) != len(want) || s.Evals() != 1867 {
		t.Errorf("%d files, %d evals; want %d files, 1867 evals", len(s.Files), s.Evals(), len(want))
	}
}

// Each file lists the features its evals need to parse, and every file delayed name removal,
// which the runner's engine has on.
func TestFeatures(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range s.Files {
		got[f.Name] = f.Features
	}
	for file, want := range map[string][]string{
		"selectors.test":           {FeatureDelayedNameRemoval},
		"fill-modifier.test":       {FeatureFillModifiers, FeatureDelayedNameRemoval},
		"limit.test":               {FeatureDelayedNameRemoval, FeatureExperimentalFunctions},
		"extended_vectors.test":    {FeatureDelayedNameRemoval, FeatureExtendedRangeSelector},
		"duration_expression.test": {FeatureDelayedNameRemoval, FeatureDurationExpr},
	} {
		if diff := cmp.Diff(want, got[file]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", file, diff)
		}
	}
	if parser.EnableExperimentalFunctions && parser.ExperimentalDurationExpr && parser.EnableExtendedRangeSelectors && parser.EnableBinopFillModifiers {
		return
	}
	t.Error("the parser's features are not all left on")
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"unknown command", "load 1m\n  a 1\n\nfoo bar\n", "x.test:4: invalid command \"foo bar\""},
		{"bad step", "load 1x\n  a 1\n", "x.test:1: invalid step \"1x\""},
		{"bad series", "load 1m\n  a{ 1\n", "x.test:2: "},
		{"bad eval", "eval sometimes a\n", "x.test:1: invalid eval command"},
		{"bad expect", "eval instant at 0 a\n  expect nothing\n", "x.test:2: invalid expect statement"},
		{"bad time", "eval instant at soon a\n", "x.test:1: invalid timestamp \"soon\""},
		{"end before start", "eval range from 5m to 1m step 1m a\n", "x.test:1: end 1m before start 5m"},
		{"many values for an instant", "eval instant at 0 a\n  a 1 2\n", "x.test:2: expecting multiple values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile("x.test", tc.input)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want one starting %q", err, tc.want)
			}
		})
	}
}

// A load's series defined twice keeps the second definition, as the runner's; evals see the
// loads since the last clear, and a load after an eval starts a new block with them all.
func TestBlocks(t *testing.T) {
	f, err := ParseFile("x.test", `
load 1m
  a 1 2
  a 3 4

eval instant at 1m a
  a 4

load 1m
  b 5

eval instant at 0 b
  b 5

eval range from 0 to 1m step 1m a
  a 3 4

clear

eval instant at 0 1
  1
`)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int // loads, evals per block
	for _, b := range f.Blocks {
		got = append(got, [2]int{len(b.Loads), len(b.Evals)})
	}
	if diff := cmp.Diff([][2]int{{1, 1}, {2, 2}, {0, 1}}, got); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
	if s := f.Blocks[0].Loads[0].Series; len(s) != 1 || s[0].Samples[0].V != 3 {
		t.Errorf("a defined twice: %+v, want the second definition only", s)
	}
}

// No block's intervals overlap another's (a gap apart), every base is aligned as its
// subqueries need, the newest interval ends before now, and the whole suite fits in 9 days.
func TestLayoutKeepsBlocksApart(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var blocks []*Block
	for _, f := range s.Files {
		blocks = append(blocks, f.Blocks...)
	}
	now := time.Date(2026, 11, 25, 12, 34, 56, 0, time.UTC)
	placed, total := Layout(blocks, now)
	if total > 9*24*time.Hour || total < 24*time.Hour {
		t.Errorf("span %s, want between 1 and 9 days", total)
	}
	var all []span
	for _, p := range placed {
		if p.Base%alignment(p.Block) != 0 {
			t.Errorf("%s:%d: base %d not a multiple of %d", p.File, p.Evals[0].Line, p.Base, alignment(p.Block))
		}
		for _, iv := range intervals(p.Block) {
			all = append(all, span{iv.lo + p.Base, iv.hi + p.Base})
		}
	}
	slices.SortFunc(all, func(a, b span) int { return int(a.lo - b.lo) })
	for i := 1; i < len(all); i++ {
		if all[i].lo < all[i-1].hi+gap.Milliseconds() {
			t.Fatalf("intervals %v and %v closer than %s", all[i-1], all[i], gap)
		}
	}
	if last := all[len(all)-1].hi; last > now.Add(-gap).UnixMilli() {
		t.Errorf("newest interval ends %s, after now - gap", time.UnixMilli(last).UTC())
	}
	if p, d := Layout(nil, now); len(p) != 0 || d != 0 {
		t.Errorf("an empty layout: %v, %s", p, d)
	}
}

func TestShift(t *testing.T) {
	for in, want := range map[string]string{
		`metric @ 100`:                   `metric @ 1000100`,
		`metric @ 1m40s offset 50s`:      `metric @ 1000100 offset 50s`,
		`metric @ -50`:                   `metric @ 999950`,
		`metric{a="x @ 100"} @ 0.5`:      `metric{a="x @ 100"} @ 1000000.5`,
		`rate(metric[1m] @ start())`:     `rate(metric[1m] @ start())`,
		`sum_over_time(m[10s:5s] @ 200)`: `sum_over_time(m[10s:5s] @ 1000200)`,
	} {
		if got := Shift(in, 1_000_000_000); got != want {
			t.Errorf("Shift(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTimeValued(t *testing.T) {
	for in, want := range map[string]string{
		`rate(metric[5m])`:                        "",
		`timestamp(metric)`:                       "shift",
		`time()`:                                  "shift",
		`ts_of_max_over_time(metric[1m])`:         "shift",
		`time() - timestamp(metric)`:              "absolute",
		`timestamp(metric) - 1`:                   "absolute",
		`hour()`:                                  "absolute",
		`hour(metric)`:                            "",
		`vector(time())`:                          "absolute",
		`label_replace(m, "a", "time()", "", "")`: "",
	} {
		if got := timeValued(in); got != want {
			t.Errorf("timeValued(%q) = %q, want %q", in, got, want)
		}
	}
}

// The evals over native histograms are told from the others by their data and expectation:
// by the series their selectors match, not by the shape of the selectors (a selector without
// a name reads native histograms only where it matches a series of them).
func TestReadsNativeHistograms(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		line int
		want bool
	}{
		{"operators.test", 296, true},  // http_requests_histogram != 80
		{"operators.test", 18, false},  // SUM(http_requests_total) BY (job) - COUNT(...)
		{"histograms.test", 551, true}, // histogram_quantile(0, testhistogram3): load_with_nhcb's series
		{"histograms.test", 541, false},
		{"limit.test", 49, true},        // limitk(1, http_requests{instance="histogram_1"})
		{"limit.test", 162, false},      // ... http_requests{instance!~"histogram_[0-9]"} ...
		{"functions.test", 1810, false}, // absent_over_time({job="grok"}[20m]): no histogram has job="grok"
		{"nosuch.test", 1, false},
	} {
		if got := s.ReadsNativeHistograms(c.file, c.line); got != c.want {
			t.Errorf("%s:%d: %v, want %v", c.file, c.line, got, c.want)
		}
	}
}
