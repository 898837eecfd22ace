package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// haRun is seriesRun with an HA read-back: prom stored both copies, vm one (stored says
// which).
func haRun(vmStored string) *results.Run {
	r := seriesRun(0)
	prom := &results.VerifyHA{Replicas: 2, CheckedScrapes: 28, StoredByReplica: map[string]int64{"a": 28, "b": 28}}
	prom.SetCounts(results.HACounts{AllCopies: 28}, "")
	r.Storages[0].Verify.HA = prom
	vm := &results.VerifyHA{Replicas: 2, CheckedScrapes: 28, StoredByReplica: map[string]int64{"a": 28}}
	if vmStored == results.HAStoredOne {
		vm.Winner = "a"
		vm.SetCounts(results.HACounts{OneCopy: 28, Switchovers: 1}, "")
	} else {
		vm.StoredByReplica["b"] = 28
		vm.SetCounts(results.HACounts{AllCopies: 28}, "")
	}
	r.Storages[1].Verify.HA = vm
	return r
}

// TestHAInReport: the summary says each storage's verdict, the table has the HA rows, and
// compare notes a storage that began to deduplicate and counts its figures.
func TestHAInReport(t *testing.T) {
	r := haRun(results.HAStoredOne)
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"prom: HA pair (2 replicas): stored both; 28 scrapes checked, 28 with every copy, 0 with one, 0 gaps\n",
		"vm: HA pair (2 replicas): stored one; 28 scrapes checked, 0 with every copy, 28 with one, 0 gaps; replica a won, 1 switch-overs\n",
		"HA copies stored", "HA scrapes: every copy / one / gaps",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	c := Compare([]*results.Run{haRun(results.HAStoredBoth)}, r)
	if want := "vm HA pair: old stored both, new stored one (replica a won)"; !slices.Contains(c.Notes, want) {
		t.Errorf("compare notes %q, want %q", c.Notes, want)
	}
	var found bool
	for _, row := range c.Rows {
		if row.Storage == "vm" && row.Figure == "verify.ha.oneCopy" {
			found = true
		}
	}
	if !found {
		t.Errorf("compare has no verify.ha.oneCopy row for vm: %+v", c.Rows)
	}
}

// TestHANothingChecked (issue 29, item 4): an HA read-back that checked no scrape says so,
// with why, and its counts are unknown: not "0 gaps, 0 switch-overs", and not "stored none".
func TestHANothingChecked(t *testing.T) {
	r := haRun(results.HAStoredOne)
	h := &results.VerifyHA{Replicas: 2, StoredByReplica: map[string]int64{}}
	h.SetCounts(results.HACounts{}, "a window shorter than a scrape interval")
	r.Storages[1].Verify.HA = h
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"vm: HA pair (2 replicas): unknown, no scrape checked: a window shorter than a scrape interval\n",
		"? (a window shorter than a scrape interval)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "vm: HA pair (2 replicas): stored none") {
		t.Errorf("nothing checked said as stored none:\n%s", b.String())
	}
	for _, name := range []string{"verify.ha.gaps", "verify.ha.switchovers", "verify.ha.allCopies", "verify.ha.oneCopy"} {
		if got := threshold.Figures()[name](&r.Storages[1]); got != nil {
			t.Errorf("%s = %v, want unknown", name, *got)
		}
	}
}
