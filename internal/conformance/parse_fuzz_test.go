package conformance

import (
	"strings"
	"testing"
)

// ParseFile never panics; an error always names the file and a line.
func FuzzParseFile(f *testing.F) {
	for _, name := range []string{"at_modifier.test", "literals.test", "staleness.test"} {
		b, err := testFiles.ReadFile("testdata/promql/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("load 1m\n  a{ 1\n")
	f.Add("eval_fail instant at 0 a\n  expected_fail_regexp (\n")
	f.Fuzz(func(t *testing.T, input string) {
		if _, err := ParseFile("f.test", input); err != nil && !strings.HasPrefix(err.Error(), "f.test:") {
			t.Errorf("error %q does not name the file and line", err)
		}
	})
}
