package docs_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// module is tsbench's module path; an import under it is a tsbench package.
const module = "github.com/tsbench/tsbench"

// TestImportLevels: every import of a tsbench package by a non-test Go file of the module
// keeps the level table of docs/development.md (issue 38): down the levels only, within a
// row's "imports only", from a package its "imported only by" names; and every package is in
// exactly one row. It replaces threshold's TestImportDirection and storage's TestLayout,
// whose rules are now rows of the table.
func TestImportLevels(t *testing.T) {
	for _, p := range levelProblems(t, "development.md", "docs/development.md", "..") {
		t.Error(p)
	}
}

// TestImportLevelsFindProblems: on a small tree and table, each kind of mistake is named, with
// its file or line and what to do, and nothing else: the check can fail.
func TestImportLevelsFindProblems(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"levels.md": "Some prose.\n\n" +
			"| level | package | imports only | imported only by |\n" +
			"|---|---|---|---|\n" +
			"| 0 | `tsbench` | | |\n" +
			"| 0 | `internal/config` | | |\n" +
			"| 0 | `internal/results` | | |\n" +
			"| 1 | `internal/storage` | | |\n" +
			"| 1 | `internal/storage/storagetest` | | tests only |\n" +
			"| 1 | `internal/threshold` | `internal/results` | |\n" +
			"| 2 | `internal/storage/local` | | internal/bench |\n" +
			"| 2 | `internal/report` | | `internal/cli` |\n" +
			"| 3 | `internal/bench` | | |\n" +
			"| 4 | `internal/cli` | | |\n" +
			"| 4 | `internal/config` | | |\n" +
			"| 5 | `internal/gone` | | |\n" +
			"| x | `internal/odd` | | `internal/nosuch` |\n" +
			"\nMore prose.\n",
		"assets.go":                               "package tsbench\n",
		"internal/config/config.go":               "package config\n",
		"internal/results/results.go":             imports("results", "internal/config"),
		"internal/storage/storagetest/st.go":      imports("storagetest", "internal/results"),
		"internal/storage/storage.go":             imports("storage", "internal/config", "internal/storage/local", "internal/storage/storagetest"),
		"internal/storage/storage_test.go":        imports("storage_test", "internal/storage/storagetest", "internal/storage/local"),
		"internal/storage/local/local.go":         imports("local", "internal/storage"),
		"internal/threshold/threshold.go":         imports("threshold", "internal/results", "internal/config"),
		"internal/report/report.go":               imports("report", "internal/results", "internal/threshold"),
		"internal/bench/bench.go":                 imports("bench", "internal/report", "internal/storage/local", "tsbench"),
		"internal/bench/bench_test.go":            imports("bench", "internal/report"),
		"internal/cli/cli.go":                     imports("cli", "internal/bench", "internal/report"),
		"internal/extra/extra.go":                 imports("extra", "internal/cli"),
		"internal/bench/testdata/bad.go":          imports("bad", "internal/cli"),
		"internal/_old/old.go":                    imports("old", "internal/cli"),
		"tools/lint/go.mod":                       "module lint\n",
		"tools/lint/lint.go":                      imports("lint", "internal/cli"),
		"internal/testonly/testonly_test.go":      imports("testonly", "internal/cli"),
		"internal/storage/storagetest/readme.txt": "not Go\n",
	}
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := levelProblems(t, filepath.Join(root, "levels.md"), "levels.md", root)
	want := []string{
		"levels.md:11: write the packages of the last two cells in backticks, separated by commas, or tests only (in the last), or leave the cell empty",
		"levels.md:15 lists internal/config again (first on line 6): keep one row",
		"levels.md:17: the level of internal/odd is \"x\", not a number: write its level, 0 or more",
		"levels.md:17 names internal/nosuch, which is in no row: add its row or correct the path",
		"levels.md:16 lists internal/gone, which has no non-test Go file: remove the row or correct the path",
		"levels.md:17 lists internal/odd, which has no non-test Go file: remove the row or correct the path",
		"internal/extra is in no row: add it to the level table in levels.md (| level | `internal/extra` | | |, its level above every package it imports)",
		"internal/bench/bench.go imports internal/report, which only internal/cli may import (its row in the level table of levels.md)",
		"internal/results/results.go imports internal/config: internal/config is on level 0, internal/results on level 0; a package imports only packages of lower levels (the level table of levels.md)",
		"internal/storage/storage.go imports internal/storage/local: internal/storage/local is on level 2, internal/storage on level 1; a package imports only packages of lower levels (the level table of levels.md)",
		"internal/storage/storage.go imports internal/storage/storagetest, which only test files may import (its row in the level table of levels.md)",
		"internal/threshold/threshold.go imports internal/config: internal/threshold imports only internal/results (its row in the level table of levels.md)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// imports is a Go file of package pkg importing the tsbench packages paths (from the module's
// root; tsbench is the root).
func imports(pkg string, paths ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport (\n", pkg)
	for _, p := range paths {
		if p == "tsbench" {
			p = module
		} else {
			p = module + "/" + p
		}
		fmt.Fprintf(&b, "\t_ %q\n", p)
	}
	b.WriteString("\t_ \"fmt\"\n)\n")
	return b.String()
}

// row is one package's row of the level table.
type row struct {
	line  int
	level int // -1 when its cell is not a number (reported)
	// only lists the packages this one may import ("imports only"); nil when the levels
	// alone decide.
	only []string
	// by lists the packages whose non-test files may import this one ("imported only
	// by"); nil when the levels alone decide, empty for tests only.
	by []string
}

// levelProblems checks the imports of every non-test Go file under root against the level
// table of page (named shown in failures), one sentence each, saying what to do.
func levelProblems(t *testing.T, page, shown, root string) []string {
	t.Helper()
	table, problems := levelTable(t, page, shown)
	files := goFiles(t, root)
	packages := map[string]bool{}
	for _, f := range files {
		packages[f.pkg] = true
	}
	for _, p := range byLine(table) {
		if !packages[p] {
			problems = append(problems, fmt.Sprintf("%s:%d lists %s, which has no non-test Go file: remove the row or correct the path", shown, table[p].line, p))
		}
	}
	var missing []string
	for p := range packages {
		if _, ok := table[p]; !ok {
			missing = append(missing, p)
		}
	}
	slices.Sort(missing)
	for _, p := range missing {
		problems = append(problems, fmt.Sprintf("%s is in no row: add it to the level table in %s (| level | `%s` | | |, its level above every package it imports)", p, shown, p))
	}
	for _, f := range files {
		from, ok := table[f.pkg]
		if !ok {
			continue
		}
		for _, imp := range f.imports {
			to, ok := table[imp]
			switch {
			case !ok:
				continue // reported above, or no package: the build fails
			case to.by != nil && len(to.by) == 0:
				problems = append(problems, fmt.Sprintf("%s imports %s, which only test files may import (its row in the level table of %s)",
					f.path, imp, shown))
			case to.level >= from.level && from.level >= 0 && to.level >= 0:
				problems = append(problems, fmt.Sprintf("%s imports %s: %s is on level %d, %s on level %d; a package imports only packages of lower levels (the level table of %s)",
					f.path, imp, imp, to.level, f.pkg, from.level, shown))
			case from.only != nil && !slices.Contains(from.only, imp):
				problems = append(problems, fmt.Sprintf("%s imports %s: %s imports only %s (its row in the level table of %s)",
					f.path, imp, f.pkg, strings.Join(from.only, ", "), shown))
			case to.by != nil && !slices.Contains(to.by, f.pkg):
				problems = append(problems, fmt.Sprintf("%s imports %s, which only %s may import (its row in the level table of %s)",
					f.path, imp, strings.Join(to.by, ", "), shown))
			}
		}
	}
	return problems
}

var (
	levelHeader = regexp.MustCompile(`^\|\s*level\s*\|\s*package\s*\|\s*imports only\s*\|\s*imported only by\s*\|$`)
	pathCell    = regexp.MustCompile("`([^`]+)`")
)

// levelTable reads the level table of page: the table whose header is | level | package |
// imports only | imported only by |, one package per row.
func levelTable(t *testing.T, page, shown string) (map[string]row, []string) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]row{}
	var problems []string
	found, in := false, false
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		switch {
		case levelHeader.MatchString(line):
			found, in = true, true
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
			continue
		case strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			problems = append(problems, fmt.Sprintf("%s:%d has %d cells, not 4 (level, package, imports only, imported only by)", shown, n, len(cells)))
			continue
		}
		names := pathCell.FindAllStringSubmatch(cells[1], -1)
		if len(names) != 1 {
			problems = append(problems, fmt.Sprintf("%s:%d: name one package in backticks in the package cell, not %q", shown, n, strings.TrimSpace(cells[1])))
			continue
		}
		pkg := names[0][1]
		if first, ok := table[pkg]; ok {
			problems = append(problems, fmt.Sprintf("%s:%d lists %s again (first on line %d): keep one row", shown, n, pkg, first.line))
			continue
		}
		level, err := strconv.Atoi(strings.TrimSpace(cells[0]))
		if err != nil || level < 0 {
			problems = append(problems, fmt.Sprintf("%s:%d: the level of %s is %q, not a number: write its level, 0 or more", shown, n, pkg, strings.TrimSpace(cells[0])))
			level = -1
		}
		only, ok1 := pathList(cells[2])
		by, ok2 := pathList(cells[3])
		if !ok1 || !ok2 {
			problems = append(problems, fmt.Sprintf("%s:%d: write the packages of the last two cells in backticks, separated by commas, or tests only (in the last), or leave the cell empty", shown, n))
		}
		table[pkg] = row{line: n, level: level, only: only, by: by}
	}
	if !found {
		t.Fatalf("%s: no level table (a header | level | package | imports only | imported only by |)", shown)
	}
	for _, p := range byLine(table) {
		for _, named := range append(slices.Clone(table[p].only), table[p].by...) {
			if _, ok := table[named]; !ok {
				problems = append(problems, fmt.Sprintf("%s:%d names %s, which is in no row: add its row or correct the path", shown, table[p].line, named))
			}
		}
	}
	return table, problems
}

// byLine are the packages of table in the order of their rows.
func byLine(table map[string]row) []string {
	var ps []string
	for p := range table {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b string) int { return table[a].line - table[b].line })
	return ps
}

// pathList reads a cell listing packages in backticks: nil when it is empty (no rule), empty
// for "tests only"; not ok when it is neither and names no package in backticks.
func pathList(cell string) ([]string, bool) {
	switch cell = strings.TrimSpace(cell); cell {
	case "":
		return nil, true
	case "tests only":
		return []string{}, true
	}
	var list []string
	for _, m := range pathCell.FindAllStringSubmatch(cell, -1) {
		list = append(list, m[1])
	}
	return list, list != nil
}

// goFile is one non-test Go file: its path and package (from the module's root, tsbench for
// the root itself), and the tsbench packages it imports, named the same way.
type goFile struct {
	path, pkg string
	imports   []string
}

// goFiles parses the imports of every non-test Go file under root, as the go command sees
// the module: not in testdata, in a directory whose name begins with . or _, nor in another
// module (a directory with its own go.mod).
func goFiles(t *testing.T, root string) []goFile {
	t.Helper()
	var files []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		g := goFile{path: filepath.ToSlash(rel), pkg: tsbenchPackage(module + "/" + filepath.ToSlash(filepath.Dir(rel)))}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if p := tsbenchPackage(imp); p != "" {
				g.imports = append(g.imports, p)
			}
		}
		files = append(files, g)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// tsbenchPackage names an import path as the level table does: from the module's root,
// tsbench for the root; "" for a package of another module.
func tsbenchPackage(imp string) string {
	if imp == module || imp == module+"/." {
		return "tsbench"
	}
	p, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return ""
	}
	return p
}
