// Command sendercompliance reads the `go test -json` output of prometheus/compliance's
// remote-write sender suite, run with tsbench as the sender once per protocol
// (scripts/sender-compliance.sh), and prints per case whether it applies and passes, with
// the cases of not-applicable.txt marked n/a and their reasons. It exits 1 when an
// applicable case failed or did not run. Used by `make sender-compliance`.
//
//	sendercompliance [-markdown] -na FILE rw2=RW2.json rw1=RW1.json
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sendercompliance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	naFile := fs.String("na", "", "the list of cases that do not apply, with their reasons")
	markdown := fs.Bool("markdown", false, "print the table in Markdown, for docs/protocols.md")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	na, err := readNotApplicable(*naFile)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var runs []*suiteRun
	for _, arg := range fs.Args() {
		proto, file, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(stderr, "%q: want protocol=file (rw2=out/sender-compliance/rw2.json)\n", arg)
			return 2
		}
		r, err := readRun(proto, file)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		runs = append(runs, r)
	}
	t := judge(runs, na)
	if *markdown {
		t.markdown(stdout)
	} else {
		t.text(stdout)
	}
	for _, e := range na.unused(runs) {
		fmt.Fprintf(stderr, "warning: %s matches no case of the %s run: remove it or correct it\n", e.where, e.protocol)
	}
	if t.failed() {
		return 1
	}
	return 0
}

// naEntry is one line of the list: the case pattern (path.Match, one name element per *) it
// marks not applicable in protocols, and why.
type naEntry struct {
	protocols []string
	pattern   string
	reason    string
	where     string // file:line
	used      map[string]bool
}

type naList []*naEntry

// readNotApplicable reads the list: "protocols case reason...", protocols rw2, rw1 or
// rw1,rw2; # starts a comment line.
func readNotApplicable(file string) (naList, error) {
	if file == "" {
		return nil, errors.New("-na: the list of cases that do not apply is required")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var list naList
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		where := fmt.Sprintf("%s:%d", file, n)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s: want protocols, case and a reason", where)
		}
		if _, err := path.Match(fields[1], ""); err != nil {
			return nil, fmt.Errorf("%s: case %q: %w", where, fields[1], err)
		}
		e := &naEntry{protocols: strings.Split(fields[0], ","), pattern: fields[1], where: where, used: map[string]bool{}}
		e.reason = strings.Join(fields[2:], " ")
		list = append(list, e)
	}
	return list, sc.Err()
}

// match is the entry that marks c not applicable in protocol, nil when none does.
func (l naList) match(protocol, c string) *naEntry {
	for _, e := range l {
		if ok, _ := path.Match(e.pattern, c); ok && slices.Contains(e.protocols, protocol) {
			e.used[protocol] = true
			return e
		}
	}
	return nil
}

// unusedEntry is an entry of the list that matched no case of a protocol it names.
type unusedEntry struct{ where, protocol string }

func (l naList) unused(runs []*suiteRun) []unusedEntry {
	var out []unusedEntry
	for _, e := range l {
		for _, r := range runs {
			if slices.Contains(e.protocols, r.protocol) && !e.used[r.protocol] {
				out = append(out, unusedEntry{e.where, r.protocol})
			}
		}
	}
	return out
}
