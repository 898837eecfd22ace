package storage

import (
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestFamilies checks what every family must say of itself, whichever it is: a kind of its
// own in lower case, an Order of its own, a local start that names its binary, package and
// readiness path, limits whose patterns compile.
func TestFamilies(t *testing.T) {
	kinds, orders := map[Kind]bool{}, map[int]Kind{}
	for _, f := range Families() {
		if f.Kind == "" || string(f.Kind) != strings.ToLower(string(f.Kind)) || kinds[f.Kind] {
			t.Errorf("kind %q: want a lower-case kind of its own", f.Kind)
		}
		kinds[f.Kind] = true
		if k, ok := orders[f.Order]; ok {
			t.Errorf("%s and %s have the same Order %d", k, f.Kind, f.Order)
		}
		orders[f.Order] = f.Kind
		if f.Kind.Family().Kind != f.Kind {
			t.Errorf("%s: Kind.Family does not find it", f.Kind)
		}
		if l := f.Local; l != nil && (l.Binary == "" || l.Package == "" || !strings.HasPrefix(l.ReadyPath, "/") || l.Args == nil) {
			t.Errorf("%s: local start %+v: want a binary, its package, a readiness path and its flags", f.Kind, *l)
		}
		for _, l := range f.Limits {
			for _, re := range []string{l.Match, l.RaiseFrom} {
				if _, err := regexp.Compile(re); err != nil {
					t.Errorf("%s: limit %q: %v", f.Kind, l.Name, err)
				}
			}
			if l.Name == "" || l.Family == "" || l.Raise == "" {
				t.Errorf("%s: limit %+v: want its name, who says it and what raises it", f.Kind, l)
			}
		}
	}
	if got := Kind("no such kind").Family(); got.Kind != "" || got.Local != nil {
		t.Errorf("an unknown kind's family %+v, want the zero Family", got)
	}
}

// page parses a /metrics page in the text format.
func page(t *testing.T, text string) Page {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}
