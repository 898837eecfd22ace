package storage

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayout keeps the split docs/development.md writes down (issue 30): storage, which every
// reader imports, imports neither local (processes) nor storagetest, and only test files
// import storagetest, so the tsbench binary carries no test receiver.
func TestLayout(t *testing.T) {
	const (
		local       = "github.com/tsbench/tsbench/internal/storage/local"
		storagetest = "github.com/tsbench/tsbench/internal/storage/storagetest"
	)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
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
		dir, test := filepath.ToSlash(filepath.Dir(rel)), strings.HasSuffix(path, "_test.go")
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if dir == "internal/storage" && (imp == local || imp == storagetest) {
				t.Errorf("%s imports %s: storage imports neither local nor storagetest", rel, imp)
			}
			if imp == storagetest && !test {
				t.Errorf("%s imports %s: only tests may", rel, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
