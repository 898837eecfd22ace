package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// maxRuleDiffs is how many rule differences the summary and report.html list per storage.
const maxRuleDiffs = 5

// ruleDiffList is one storage's rules whose range-query results differ from another
// storage's: the first maxRuleDiffs of them, and how many more there are.
type ruleDiffList struct {
	Storage string
	Count   int
	// Compared counts the rules compared with another storage's answers.
	Compared int
	Diffs    []results.RuleDiff
	More     int
}

// ruleDiffLists are the storages' rule differences, one list per storage whose rules ran
// (not one read back through remote read); nil when no storage has a difference.
func ruleDiffLists(r *results.Run) []ruleDiffList {
	if !slices.ContainsFunc(r.Storages, func(s results.Storage) bool { return s.Verify != nil && len(s.Verify.RuleDiffs) > 0 }) {
		return nil
	}
	var out []ruleDiffList
	for _, s := range r.Storages {
		if s.Verify == nil || viaRemoteRead(&s) {
			continue
		}
		diffs := s.Verify.RuleDiffs
		n := min(maxRuleDiffs, len(diffs))
		out = append(out, ruleDiffList{Storage: s.Name, Count: len(diffs), Compared: s.Verify.RulesCompared, Diffs: diffs[:n], More: len(diffs) - n})
	}
	return out
}

// writeRuleDiffs lists, per storage, the rules whose range-query results differ from the
// other storages', the first maxRuleDiffs of them.
func writeRuleDiffs(b *strings.Builder, r *results.Run) {
	lists := ruleDiffLists(r)
	if lists == nil {
		return
	}
	b.WriteString("\nrules whose range-query results differ across storages\n")
	for _, l := range lists {
		if l.Count == 0 {
			fmt.Fprintf(b, "  %s: none of %d compared\n", l.Storage, l.Compared)
			continue
		}
		fmt.Fprintf(b, "  %s: %d\n", l.Storage, l.Count)
		for _, d := range l.Diffs {
			fmt.Fprintf(b, "    %s: %s\n", d.Rule, clip(d.Detail, 100))
		}
		if l.More > 0 {
			fmt.Fprintf(b, "    ... and %d more\n", l.More)
		}
	}
}

// rulesNotCompared are the rules no storage's results were compared for. The list is the
// same for every storage: it follows from the rules and the run's length.
func rulesNotCompared(r *results.Run) []string {
	var notCompared []string
	for _, s := range r.Storages {
		if s.Verify != nil && len(s.Verify.RulesNotCompared) > 0 {
			notCompared = s.Verify.RulesNotCompared
		}
	}
	return notCompared
}

// notComparedText says why the rules not compared were not, before their list.
const notComparedText = "rules not compared: the data written is shorter than their windows (run longer, or set history, to compare them)"

// writeRulesNotCompared names the rules not compared.
func writeRulesNotCompared(b *strings.Builder, r *results.Run) {
	if notCompared := rulesNotCompared(r); len(notCompared) > 0 {
		fmt.Fprintf(b, "\n%d %s: %s\n", len(notCompared), notComparedText, clip(strings.Join(notCompared, ", "), 200))
	}
}
