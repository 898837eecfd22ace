package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
)

// haRun is seriesRun with an HA read-back: prom stored both copies, vm one (stored says
// which).
func haRun(vmStored string) *results.Run {
	r := seriesRun(0)
	r.Storages[0].Verify.HA = &results.VerifyHA{
		Replicas: 2, Stored: results.HAStoredBoth, CheckedScrapes: 28, AllCopies: 28,
		StoredByReplica: map[string]int64{"a": 28, "b": 28},
	}
	vm := &results.VerifyHA{Replicas: 2, Stored: vmStored, CheckedScrapes: 28, StoredByReplica: map[string]int64{"a": 28}}
	if vmStored == results.HAStoredOne {
		vm.OneCopy, vm.Winner, vm.Switchovers = 28, "a", 1
	} else {
		vm.AllCopies, vm.StoredByReplica["b"] = 28, 28
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
	c := Compare(haRun(results.HAStoredBoth), r)
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
