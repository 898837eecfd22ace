package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// cell is one case in one protocol's run.
type cell struct {
	result string   // pass, fail, skip, unfinished; "" when the run has no such case
	na     *naEntry // the list's entry when the case does not apply
}

// applies reports whether the case ran and is not marked not applicable.
func (c cell) applies() bool { return c.na == nil && c.result != "" }

func (c cell) String() string {
	switch {
	case c.result == "":
		return "—"
	case c.na != nil:
		return "n/a"
	case c.result == "pass":
		return "pass"
	}
	return strings.ToUpper(c.result)
}

// table is every case of every run, in name order.
type table struct {
	runs  []*suiteRun
	cases []string
	cells map[string][]cell // case → a cell per run
	level map[string]string
}

func judge(runs []*suiteRun, na naList) *table {
	t := &table{runs: runs, cells: map[string][]cell{}, level: map[string]string{}}
	for _, r := range runs {
		for c := range r.results {
			if _, ok := t.cells[c]; !ok {
				t.cells[c] = make([]cell, len(runs))
				t.cases = append(t.cases, c)
			}
			if t.level[c] == "" {
				t.level[c] = r.levels[c]
			}
		}
	}
	slices.Sort(t.cases)
	for i, r := range runs {
		for _, c := range t.cases {
			if res, ok := r.results[c]; ok {
				t.cells[c][i] = cell{result: res, na: na.match(r.protocol, c)}
			}
		}
	}
	return t
}

// failed reports whether an applicable case did not pass.
func (t *table) failed() bool {
	for _, c := range t.cases {
		for _, x := range t.cells[c] {
			if x.applies() && x.result != "pass" {
				return true
			}
		}
	}
	return false
}

// text prints a line per case, what failed, each protocol's count and the reasons of the
// cases that do not apply.
func (t *table) text(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "case\tlevel")
	for _, r := range t.runs {
		fmt.Fprintf(tw, "\t%s", r.protocol)
	}
	fmt.Fprintln(tw)
	for _, c := range t.cases {
		fmt.Fprintf(tw, "%s\t%s", c, t.level[c])
		for _, x := range t.cells[c] {
			fmt.Fprintf(tw, "\t%s", x)
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	for _, c := range t.cases {
		for i, x := range t.cells[c] {
			if x.applies() && x.result != "pass" {
				fmt.Fprintf(w, "\n%s %s %s: %s", strings.ToUpper(x.result), t.runs[i].protocol, c, t.runs[i].why(c))
			}
		}
	}
	fmt.Fprintln(w)
	for i, r := range t.runs {
		fmt.Fprintf(w, "\n%s: %s", r.protocol, t.count(i))
	}
	fmt.Fprintln(w, "\n\nnot applicable (scripts/sendercompliance/not-applicable.txt):")
	for _, e := range t.usedEntries() {
		fmt.Fprintf(w, "  %s [%s]: %s\n", e.pattern, strings.Join(e.protocols, ","), e.reason)
	}
}

// count is "N cases: N apply, N pass, N fail; N not applicable" of run i.
func (t *table) count(i int) string {
	var cases, apply, pass, na int
	for _, c := range t.cases {
		x := t.cells[c][i]
		switch {
		case x.result == "":
			continue
		case x.na != nil:
			na++
		case x.result == "pass":
			pass++
			apply++
		default:
			apply++
		}
		cases++
	}
	return fmt.Sprintf("%d cases: %d apply, %d pass, %d fail; %d not applicable", cases, apply, pass, apply-pass, na)
}

// usedEntries are the list's entries that marked a case of these runs.
func (t *table) usedEntries() []*naEntry {
	seen := map[*naEntry]bool{}
	for _, c := range t.cases {
		for _, x := range t.cells[c] {
			if x.na != nil {
				seen[x.na] = true
			}
		}
	}
	return slices.SortedFunc(maps.Keys(seen), func(a, b *naEntry) int { return strings.Compare(a.where, b.where) })
}

// markdown prints the table for docs/protocols.md: a row per test function (its cases as
// applicable / passed, per protocol), the failures, then the reasons of the cases that do
// not apply.
func (t *table) markdown(w io.Writer) {
	fmt.Fprint(w, "| test | cases | level |")
	for _, r := range t.runs {
		fmt.Fprintf(w, " %s: apply / pass |", r.protocol)
	}
	fmt.Fprint(w, "\n|---|---|---|")
	for range t.runs {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, fn := range t.functions() {
		// Not in backticks: docs' tests take a `TestX` for a test of this repository.
		fmt.Fprintf(w, "| %s | %d | %s |", fn.name, len(fn.cases), strings.Join(fn.levels, ", "))
		for i := range t.runs {
			apply, pass := 0, 0
			for _, c := range fn.cases {
				if x := t.cells[c][i]; x.applies() {
					apply++
					if x.result == "pass" {
						pass++
					}
				}
			}
			fmt.Fprintf(w, " %d / %d |", apply, pass)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for i, r := range t.runs {
		fmt.Fprintf(w, "- %s: %s\n", r.protocol, t.count(i))
	}
}

// function is a test function of the suite and its cases.
type function struct {
	name   string
	cases  []string
	levels []string // the RFC levels of its cases, each once
}

func (t *table) functions() []function {
	var out []function
	for _, c := range t.cases {
		name, _, _ := strings.Cut(c, "/")
		if len(out) == 0 || out[len(out)-1].name != name {
			out = append(out, function{name: name})
		}
		f := &out[len(out)-1]
		f.cases = append(f.cases, c)
		if l := t.level[c]; l != "" && !slices.Contains(f.levels, l) {
			f.levels = append(f.levels, l)
		}
	}
	return out
}
