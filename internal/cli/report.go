package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/report"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// cmdReport re-renders a results file, compares runs, or merges shards.
func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) > 0 && args[0] == "compare" {
		return cmdCompare(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "merge" {
		return cmdMerge(ctx, args[1:], stdout)
	}
	fs := newFlagSet("report")
	out := fs.String("out", "", "directory for report.html (default: the results file's directory)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return ExitUsage, err
	}
	if len(pos) != 1 {
		return ExitUsage, usageErrorf("usage: tsbench report RESULTS.json [-out DIR] | tsbench report compare OLD.json|DIR... NEW.json [-out DIR] | tsbench report merge -out DIR SHARD.json...")
	}
	res, err := results.ReadFile(pos[0])
	if err != nil {
		return ExitError, err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Dir(pos[0])
	}
	if err := report.WriteSummary(stdout, res); err != nil {
		return ExitError, err
	}
	path := filepath.Join(dir, "report.html")
	if err := writeFile(path, func(w io.Writer) error { return report.WriteHTML(w, res) }); err != nil {
		return ExitError, err
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", path)
	return ExitOK, nil
}

// compareUsage is report compare's synopsis, in its usage errors.
const compareUsage = "usage: tsbench report compare OLD.json|DIR... NEW.json [-out DIR] [-fail-on RULES] [-map OLD=NEW]"

func cmdCompare(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("report compare")
	out := fs.String("out", "", "directory for compare.html (default: the new results file's directory)")
	failOn := fs.String("fail-on", "", "exit 3 when a figure changed past a limit: comma-separated [storage:]figure>+change or figure<-change, e.g. 'query.p99>+20%,bytesPerSample>+10%'; end a rule in ~noise to fail only beyond the old runs' noise too, and in ?ok (after ~noise) to pass a figure unknown in the old runs or the new one, which fails otherwise (the new run's compareThresholds apply as well)")
	renames := map[string]string{}
	fs.Func("map", "old=new: compare the old runs' storage old with the new run's new (repeat, or comma-separate, for several)", func(v string) error {
		return addRenames(renames, v)
	})
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return ExitUsage, withHelpText(err, compareArgs)
	}
	if len(pos) < 2 {
		return ExitUsage, usageErrorf("%s", compareUsage)
	}
	newPath := pos[len(pos)-1]
	olds, err := readOldRuns(pos[:len(pos)-1], newPath)
	if err != nil {
		return ExitError, err
	}
	cur, err := results.ReadFile(newPath)
	if err != nil {
		return ExitError, err
	}
	rules, errRules := compareRules(*failOn, cur)
	if err := errors.Join(errRules, renameStorages(olds, cur, renames)); err != nil {
		return ExitUsage, err // every mistake at once
	}
	c := report.Compare(olds, cur)
	if err := c.WriteText(stdout); err != nil {
		return ExitError, err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Dir(newPath)
	}
	path := filepath.Join(dir, "compare.html")
	if err := writeFile(path, c.WriteHTML); err != nil {
		return ExitError, err
	}
	fmt.Fprintf(stdout, "\ncompare: %s\n", path)
	if len(rules) == 0 {
		return ExitOK, nil
	}
	verdicts := threshold.Gate(olds, cur, rules)
	if err := report.WriteGate(stdout, verdicts); err != nil {
		return ExitError, err
	}
	if n := threshold.Failed(verdicts); n > 0 {
		fmt.Fprintf(stderr, "tsbench report compare: %d of %d compare thresholds failed\n", n, len(verdicts))
		return ExitThreshold, nil
	}
	return ExitOK, nil
}

// compareArgs explains report compare's arguments in its -h, under its usage lines.
const compareArgs = `The last file is the new run; before it, one old run or several: results files,
or directories, each standing for every *.json in it and every results.json one level
down (DIR/*/results.json: the -out directories of several runs), in name order, the new
run's file left out. Each figure's baseline is the median of the old runs that know it.
With two old runs or more its noise (for ~noise rules and the ! flag) is their spread,
t(0.975, n-1)*s*sqrt(1+1/n) around their mean: a 95 % prediction interval for one new
run. With one old run, the noise comes from that run's per-interval values.`

// readOldRuns reads the old runs: each path a results file or a directory (see compareArgs),
// whose files leave out the new run's. A file named twice is a usage error: it would count
// twice in the median and narrow the spread.
func readOldRuns(paths []string, newPath string) ([]*results.Run, error) {
	skip, err := filepath.Abs(newPath)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var olds []*results.Run
	for _, p := range paths {
		files, err := resultsFiles(p, skip)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			abs, err := filepath.Abs(f)
			if err != nil {
				return nil, err
			}
			if seen[abs] {
				return nil, usageErrorf("%s is named twice as an old run", f)
			}
			seen[abs] = true
			r, err := results.ReadFile(f)
			if err != nil {
				return nil, err
			}
			olds = append(olds, r)
		}
	}
	return olds, nil
}

// resultsFiles is path itself, or for a directory every *.json in it and every results.json
// one level down, in name order, but the file skip (an absolute path).
func resultsFiles(path, skip string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return []string{path}, nil // results.ReadFile says what is wrong with it
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		f := filepath.Join(path, e.Name())
		if e.IsDir() {
			f = filepath.Join(f, "results.json")
		} else if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && abs != skip {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no old run in it: no *.json or */results.json besides the new run", path)
	}
	return files, nil
}

// addRenames reads -map's "old=new[,old=new...]" into renames.
func addRenames(renames map[string]string, v string) error {
	for pair := range strings.SplitSeq(v, ",") {
		from, to, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || from == "" || to == "" {
			return fmt.Errorf("%q is not old=new (the old run's storage name = the new run's)", pair)
		}
		if _, dup := renames[from]; dup {
			return fmt.Errorf("%q is mapped twice", from)
		}
		renames[from] = to
	}
	return nil
}

// renameStorages gives the old runs' storages the new run's names -map pairs them with; an
// old name must be in one old run at least.
func renameStorages(olds []*results.Run, cur *results.Run, renames map[string]string) error {
	var errs []error
	for _, from := range slices.Sorted(maps.Keys(renames)) {
		to := renames[from]
		found := false
		for _, old := range olds {
			if s := old.Storage(from); s != nil {
				s.Name, found = "\x00"+to, true // renamed apart from every name, then set: a=b,b=a swaps
			}
		}
		if !found {
			errs = append(errs, usageErrorf("-map %s=%s: no old run has a storage %q (they have: %s)", from, to, from, strings.Join(oldNames(olds), ", ")))
		}
		if cur.Storage(to) == nil {
			errs = append(errs, usageErrorf("-map %s=%s: the new run has no storage %q (it has: %s)", from, to, to, strings.Join(names(cur), ", ")))
		}
	}
	for _, old := range olds {
		for i := range old.Storages {
			old.Storages[i].Name = strings.TrimPrefix(old.Storages[i].Name, "\x00")
		}
	}
	return errors.Join(errs...)
}

// oldNames are the old runs' storage names, each once, in the order first seen.
func oldNames(olds []*results.Run) []string {
	var ns []string
	for _, old := range olds {
		for _, n := range names(old) {
			if !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
	}
	return ns
}

func names(r *results.Run) []string {
	var ns []string
	for _, s := range r.Storages {
		ns = append(ns, s.Name)
	}
	return ns
}

// compareRules are -fail-on's rules and the new run's compareThresholds.
func compareRules(failOn string, cur *results.Run) ([]threshold.CompareRule, error) {
	fromFlag, errFlag := threshold.ParseCompareRules("-fail-on", threshold.SplitRules(failOn), names(cur))
	exprs, err := configList(cur.Config, "compareThresholds")
	if err != nil {
		return nil, err
	}
	fromConfig, errConfig := threshold.ParseCompareRules("the new run's compareThresholds", exprs, names(cur))
	if err := errors.Join(errFlag, errConfig); err != nil {
		return nil, usageErrorf("%s", joinLines(err))
	}
	var rules []threshold.CompareRule
	seen := map[threshold.CompareRule]bool{}
	for _, r := range append(fromFlag, fromConfig...) {
		key := r
		key.Expr = "" // the same rule written twice ("p99>+20%", "query.p99 > +20%") is checked once
		if !seen[key] {
			seen[key] = true
			rules = append(rules, r)
		}
	}
	return rules, nil
}

// cmdMerge adds up the results of every shard of one run into DIR/results.json and
// report.html, evaluates the config's thresholds on the sum, and exits as run would.
func cmdMerge(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	fs := newFlagSet("report merge")
	out := fs.String("out", "", "directory for the merged results.json and report.html, or - for the results.json alone on stdout (required)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return ExitUsage, err
	}
	if *out == "" || len(pos) == 0 {
		return ExitUsage, usageErrorf("usage: tsbench report merge -out DIR|- SHARD.json... (every shard's results.json of one run, e.g. shard-*/results.json, as files or http URLs)")
	}
	var runs []*results.Run
	for _, path := range pos {
		r, err := readResults(ctx, path)
		if err != nil {
			return ExitError, err
		}
		runs = append(runs, r)
	}
	res, err := results.Merge(runs)
	if err != nil {
		return ExitError, fmt.Errorf("merge %d files: %w", len(pos), err)
	}
	exprs, err := configList(res.Config, "thresholds")
	if err != nil {
		return ExitError, err
	}
	var names []string
	for _, s := range res.Storages {
		names = append(names, s.Name)
	}
	ts, err := threshold.Parse(exprs, names)
	if err != nil {
		return ExitError, fmt.Errorf("thresholds of the shards' config: %w", err)
	}
	res.Thresholds = threshold.Evaluate(ts, res)
	if *out == "-" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return ExitOK, enc.Encode(res)
	}
	return finish(res, *out, stdout)
}

// readResults reads a results file, or fetches it when it is an http(s) URL (a pod's
// `tsbench run -hold`).
func readResults(ctx context.Context, path string) (*results.Run, error) {
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		return results.ReadFile(path)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: %s (is the run still going? its results appear when it ends)", path, resp.Status)
	}
	return results.Parse(b, path)
}

// configList reads a list of strings (thresholds, compareThresholds) of a results file's config.
func configList(cfg any, key string) ([]string, error) {
	m, _ := cfg.(map[string]any)
	list, _ := m[key].([]any)
	var exprs []string
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("config.%s: %v is not a string", key, e)
		}
		exprs = append(exprs, s)
	}
	return exprs, nil
}

// writeFile creates path and writes it with render, reporting a failed close.
func writeFile(path string, render func(io.Writer) error) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return render(f)
}
