package docs_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/storage"
)

// TestFamiliesDocumented: every storage family has a row in the table of "Adding a storage
// family" (docs/development.md), naming its kind and a file that exists; and a row names no
// kind tsbench does not know.
func TestFamiliesDocumented(t *testing.T) {
	page := readPage(t, "development.md")
	_, section, ok := strings.Cut(page, "\n## Adding a storage family\n")
	if !ok {
		t.Fatal("development.md has no section ## Adding a storage family")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| [^|]+ \\| `([a-z0-9]+)` \\| `([^`]+)` \\|")
	rows := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		rows[m[1]] = m[2]
		if _, err := os.Stat("../" + m[2]); err != nil {
			t.Errorf("development.md: the row of %s names %s: %v", m[1], m[2], err)
		}
	}
	for _, f := range storage.Families() {
		if _, ok := rows[string(f.Kind)]; !ok {
			t.Errorf("development.md: family %s has no row in the table of ## Adding a storage family: add | Name | `%s` | `internal/storage/<file>.go` | what tsbench knows |", f.Kind, f.Kind)
		}
		delete(rows, string(f.Kind))
	}
	for kind := range rows {
		t.Errorf("development.md: a row names the family %s, which internal/storage does not have", kind)
	}
}
