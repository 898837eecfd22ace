package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTable: a case listed not applicable is n/a whatever its result; an applicable case
// that failed, or never ended, fails the run with what it printed; an entry that matches
// no case is warned of.
func TestTable(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run([]string{"-na", "testdata/na.txt", "rw2=testdata/rw2.json", "rw1=testdata/rw1.json"}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit %d, want 1 (an applicable case failed)", code)
	}
	want := `case         level  rw2         rw1
TestA/bad    SHOULD FAIL        pass
TestA/named  MUST   n/a         n/a
TestA/ok     MUST   pass        pass
TestB        MAY    UNFINISHED  pass

FAIL rw2 TestA/bad: retry_test.go:49: ⚠️ SHOULD level requirement not met (recommended): got 4 requests
UNFINISHED rw2 TestB: it printed nothing

rw2: 4 cases: 3 apply, 1 pass, 2 fail; 1 not applicable
rw1: 4 cases: 3 apply, 3 pass, 0 fail; 1 not applicable

not applicable (scripts/sendercompliance/not-applicable.txt):
  TestA/named [rw1,rw2]: looks up the suite's own series
`
	if diff := cmp.Diff(strings.Fields(want), strings.Fields(stdout.String())); diff != "" {
		t.Errorf("table (-want +got, by words):\n%s\ngot:\n%s", diff, stdout.String())
	}
	if w := "testdata/na.txt:3 matches no case of the rw1 run"; !strings.Contains(stderr.String(), w) {
		t.Errorf("stderr %q, want %q", stderr.String(), w)
	}
}

// TestMarkdown: a row per test function, its cases as applicable / passed per protocol.
func TestMarkdown(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"-markdown", "-na", "testdata/na.txt", "rw2=testdata/rw2.json"}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := "| test | cases | level | rw2: apply / pass |\n|---|---|---|---|\n" +
		"| TestA | 3 | SHOULD, MUST | 2 / 1 |\n| TestB | 1 | MAY | 1 / 0 |\n\n" +
		"- rw2: 4 cases: 3 apply, 1 pass, 2 fail; 1 not applicable\n"
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSuiteThatDidNotBuild: a run without a case says so with go's own words.
func TestSuiteThatDidNotBuild(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"-na", "testdata/na.txt", "rw2=testdata/build.json"}, &stdout, &stderr); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, w := range []string{"no case of the sender tsbench-rw2 ran", "404 Not Found", "[setup failed]"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr %q lacks %q", stderr.String(), w)
		}
	}
}
