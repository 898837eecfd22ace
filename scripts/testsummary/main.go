// Command testsummary reads `go test -json` on stdin and prints what plain `go test` prints (each
// package's result line, the output of every failed test, build errors), then the ten slowest
// tests and one closing line: "N passed, N failed, N skipped", then the tests that never
// ended and the packages that failed, by name. It exits 1 when a test or a
// package failed, so `make test` fails with it. Used by the Makefile's test target.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output events
	Test       string
	Elapsed    float64
	Output     string
}

// timing is one finished top-level test.
type timing struct {
	name    string
	seconds float64
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

// unfinished prints the output of pkg's tests that never ended (a timeout, a crash): that is
// where the cause is. It returns those tests' names, subtests included, from running (the
// tests started and not ended), and takes them out of it.
func unfinished(out io.Writer, outputs map[string][]string, running map[string]bool, pkg string) []string {
	for _, key := range slices.Sorted(maps.Keys(outputs)) {
		if strings.HasPrefix(key, pkg+" ") {
			fmt.Fprint(out, strings.Join(outputs[key], ""))
			delete(outputs, key)
		}
	}
	var names []string
	for _, key := range slices.Sorted(maps.Keys(running)) {
		if test, ok := strings.CutPrefix(key, pkg+" "); ok {
			names = append(names, pkg+"."+test)
			delete(running, key)
		}
	}
	return names
}

func run(in io.Reader, out io.Writer) int {
	outputs := map[string][]string{} // package + test → output lines, printed if it fails
	var slowest []timing
	var passed, failed, skipped int
	running := map[string]bool{} // package + test → started, not ended
	var never, failedPkgs []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(out, sc.Text()) // not JSON: go's own message, e.g. a flag error
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Test == "" && e.Action == "output":
			fmt.Fprint(out, e.Output)
		case e.Test == "" && e.Action == "fail":
			failedPkgs = append(failedPkgs, e.Package)
			never = append(never, unfinished(out, outputs, running, e.Package)...)
		case e.Test != "" && e.Action == "run":
			running[key] = true
		case e.Action == "output":
			outputs[key] = append(outputs[key], e.Output)
		case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			delete(running, key)
			if e.Action == "fail" {
				fmt.Fprint(out, strings.Join(outputs[key], ""))
			}
			delete(outputs, key)
			if strings.Contains(e.Test, "/") {
				continue // subtests are counted in their test
			}
			switch e.Action {
			case "pass":
				passed++
			case "fail":
				failed++
			default:
				skipped++
			}
			slowest = append(slowest, timing{e.Package + "." + e.Test, e.Elapsed})
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "testsummary:", err)
		return 1
	}
	slices.SortFunc(slowest, func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) })
	fmt.Fprintln(out, "\nslowest tests:")
	for _, s := range slowest[:min(10, len(slowest))] {
		fmt.Fprintf(out, "%8.1fs  %s\n", s.seconds, s.name)
	}
	fmt.Fprintf(out, "\n%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if len(never) > 0 {
		fmt.Fprintf(out, "never ended (a timeout or a crash): %s\n", strings.Join(never, ", "))
	}
	if len(failedPkgs) > 0 {
		fmt.Fprintf(out, "packages failed: %s\n", strings.Join(failedPkgs, ", "))
	}
	if failed > 0 || len(failedPkgs) > 0 {
		return 1
	}
	return 0
}
