package main

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"p"}`,
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"a says hello\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":2.5}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"b went wrong\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB/sub","Output":"sub went wrong\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB/sub","Elapsed":1}`,
		`{"Action":"fail","Package":"p","Test":"TestB","Elapsed":7}`,
		`{"Action":"skip","Package":"p","Test":"TestC","Elapsed":0}`,
		`{"Action":"run","Package":"p","Test":"TestD"}`,
		`{"Action":"output","Package":"p","Test":"TestD","Output":"d was running\n"}`,
		`{"Action":"run","Package":"p","Test":"TestD/quiet"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t9.0s\n"}`,
		`{"Action":"fail","Package":"p","Elapsed":9}`,
		`no json here`,
	}, "\n")
	var out strings.Builder
	if code := run(strings.NewReader(in), &out); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	got := out.String()
	for _, want := range []string{
		"sub went wrong\nb went wrong\n", // a failed test's output, subtests' included
		"FAIL\tp\t9.0s\n",                // the package's own line
		"d was running\n",                // a test that never ended, when its package failed
		"no json here\n",
		"     7.0s  p.TestB\n     2.5s  p.TestA\n",
		"\n1 passed, 1 failed, 1 skipped\n",
		// named, a subtest that printed nothing too (a hang in make test read "0 failed")
		"never ended (a timeout or a crash): p.TestD, p.TestD/quiet\n",
		"packages failed: p\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "hello") {
		t.Errorf("a passed test's output printed:\n%s", got)
	}
}

func TestSummaryAllPassed(t *testing.T) {
	in := `{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1}` + "\n" + `{"Action":"pass","Package":"p","Elapsed":1}`
	var out strings.Builder
	if code := run(strings.NewReader(in), &out); code != 0 || !strings.HasSuffix(out.String(), "\n1 passed, 0 failed, 0 skipped\n") {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}
}
