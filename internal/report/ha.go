package report

import (
	"fmt"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// HA pairs' figures (series.haReplicas): the read-back's verdict per storage in the summary,
// the report's table and report compare.

// haSection is the side-by-side rows of the HA read-back: empty without HA pairs.
func haSection(r *results.Run) section {
	ha := func(s *results.Storage) *results.VerifyHA {
		if s.Verify == nil {
			return nil
		}
		return s.Verify.HA
	}
	text := func(label string, f func(h *results.VerifyHA) string) row {
		return cells(r, label, "ha."+label, noBest, func(s *results.Storage) (string, *float64) {
			if h := ha(s); h != nil {
				return f(h), nil
			}
			return "?", nil
		})
	}
	return section{title: "HA pair", rows: []row{
		text("HA copies stored", func(h *results.VerifyHA) string { return h.Stored }),
		text("HA winner", func(h *results.VerifyHA) string { return cmpOr(h.Winner, "-") }),
		text("HA switch-overs", func(h *results.VerifyHA) string { return countText(h.Switchovers) }),
		text("HA scrapes: every copy / one / gaps", func(h *results.VerifyHA) string {
			if h.CheckedScrapes == 0 { // nothing checked: no count is a finding (issue 29)
				return "? (" + cmpOr(h.Reason, "no scrape checked") + ")"
			}
			return fmt.Sprintf("%s / %s / %s of %d", countText(h.AllCopies), countText(h.OneCopy), countText(h.Gaps), h.CheckedScrapes)
		}),
	}}
}

// countText is a count, "?" when unknown.
func countText(n *int64) string {
	if n == nil {
		return "?"
	}
	return fmt.Sprint(*n)
}

func cmpOr(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// writeHA writes each storage's HA verdict line to the summary.
func writeHA(b *strings.Builder, r *results.Run) {
	for _, s := range r.Storages {
		if s.Verify != nil && s.Verify.HA != nil {
			fmt.Fprintf(b, "%s: %s\n", s.Name, s.Verify.HA.Line())
		}
	}
}

// haNotes say each named storage's HA verdict in the old runs (in their order) and the new
// one: stored both → one shows a storage that began to deduplicate.
func haNotes(olds []*results.Run, cur *results.Run, names []string) []string {
	var out []string
	for _, name := range names {
		var old []string
		known := false
		for _, r := range olds {
			o := haOf(r.Storage(name))
			known = known || o != ""
			old = append(old, cmpOr(o, "-"))
		}
		n := haOf(cur.Storage(name))
		if known || n != "" {
			out = append(out, fmt.Sprintf("%s HA pair: old stored %s, new stored %s", name, strings.Join(old, ", "), cmpOr(n, "-")))
		}
	}
	return out
}

// haOf is s's HA verdict and winner, "" without one.
func haOf(s *results.Storage) string {
	if s == nil || s.Verify == nil || s.Verify.HA == nil {
		return ""
	}
	if h := s.Verify.HA; h.Winner != "" {
		return h.Stored + " (replica " + h.Winner + " won)"
	}
	return s.Verify.HA.Stored
}
