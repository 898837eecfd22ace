package threshold

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportDirection keeps the rule docs/development.md writes down (issue 30): threshold
// imports no tsbench package but results, and no package but cli imports report, so no stage
// of a run depends on how its results are rendered. Test files may import report (a benchmark
// measures report.html's size).
func TestImportDirection(t *testing.T) {
	const module = "github.com/tsbench/tsbench/internal/"
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, ".."+string(filepath.Separator))))
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			inner, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if pkg == "threshold" && inner != "results" {
				t.Errorf("%s imports %s: threshold may import only results", path, imp)
			}
			if inner == "report" && pkg != "cli" {
				t.Errorf("%s imports %s: only cli may import report", path, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
