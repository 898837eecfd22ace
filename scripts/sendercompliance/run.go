package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json); attr events carry the suite's
// t.Attr("rfcLevel", ...).
type event struct {
	Action string
	Test   string
	Output string
	Key    string
	Value  string
}

// suiteRun is the suite run once with one protocol: a case is a test's name without its
// last element, the sender's (tsbench-rw2), or the test itself for those without subtests.
type suiteRun struct {
	protocol string
	sender   string
	results  map[string]string   // case → pass, fail or skip; "unfinished" when it never ended
	output   map[string][]string // case → its output
	levels   map[string]string   // case → the suite's rfcLevel (MUST, SHOULD, ...)
	pkgOut   []string            // the package's own output: a build failure shows here
}

func readRun(protocol, file string) (*suiteRun, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r := &suiteRun{
		protocol: protocol, sender: "tsbench-" + protocol,
		results: map[string]string{}, output: map[string][]string{}, levels: map[string]string{},
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			r.pkgOut = append(r.pkgOut, sc.Text()+"\n") // go test's own words, outside test2json
			continue
		}
		r.add(e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(r.results) == 0 {
		return nil, fmt.Errorf("%s: no case of the sender %s ran:\n%s", file, r.sender, strings.Join(r.pkgOut, ""))
	}
	return r, nil
}

func (r *suiteRun) add(e event) {
	c, leaf := strings.CutSuffix(e.Test, "/"+r.sender)
	switch {
	case e.Test == "":
		if e.Action == "output" {
			r.pkgOut = append(r.pkgOut, e.Output)
		}
	case e.Action == "attr" && e.Key == "rfcLevel":
		if _, ok := r.levels[c]; !ok { // the case's own comes first, then each assertion's
			r.levels[c] = e.Value
		}
	case !leaf:
	case e.Action == "run":
		r.results[c] = "unfinished"
	case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
		r.results[c] = e.Action
	case e.Action == "output":
		r.output[c] = append(r.output[c], e.Output)
	}
}

// why says what failed in a case: testify's Error and Messages lines and the suite's
// should/may/recommended lines, else the last line it printed.
func (r *suiteRun) why(c string) string {
	var lines []string
	last := ""
	for _, l := range r.output[c] {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		last = l
		for _, mark := range []string{"Error:", "Messages:", "requirement not met", "not implemented", "feature not present"} {
			if strings.Contains(l, mark) && len(lines) < 3 {
				lines = append(lines, strings.Join(strings.Fields(l), " "))
				break
			}
		}
	}
	if len(lines) == 0 && last == "" {
		return "it printed nothing"
	}
	if len(lines) == 0 {
		return last
	}
	return strings.Join(lines, " ")
}
