package cli

import (
	"fmt"
	"testing"

	"github.com/tsbench/tsbench/internal/results"
)

// Conformance results join a run's results.json of the same storages (the summary then shows
// them beside the run's probes); a file of other storages is left alone, with a warning.
func TestAddToRun(t *testing.T) {
	run := &results.Run{SchemaVersion: results.SchemaVersion, Storages: []results.Storage{
		{Name: "a", Verify: &results.Verify{Probes: []results.Probe{{Name: "p"}}}}, {Name: "b"},
	}}
	path, err := run.WriteFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conf := func(names ...string) *results.Run {
		r := &results.Run{SchemaVersion: results.SchemaVersion}
		for _, n := range names {
			r.Storages = append(r.Storages, results.Storage{Name: n, Conformance: &results.Conformance{Passed: 7}})
		}
		return r
	}
	var warned []string
	warn := func(msg string, args ...any) { warned = append(warned, fmt.Sprint(msg, args)) }

	got := addToRun(conf("a", "b"), path, warn)
	if got.Storages[0].Verify == nil || got.Storages[0].Conformance.Passed != 7 || got.Storages[1].Conformance == nil || len(warned) != 0 {
		t.Errorf("same storages: got %+v, warnings %q: want the run with the conformance figures", got.Storages, warned)
	}
	got = addToRun(conf("a", "c"), path, warn)
	if got.Storages[0].Verify != nil || len(warned) != 1 {
		t.Errorf("other storages: got %+v, warnings %q: want the conformance results alone, one warning", got.Storages, warned)
	}
	got = addToRun(conf("a"), t.TempDir()+"/results.json", warn)
	if len(got.Storages) != 1 || len(warned) != 1 {
		t.Errorf("no results.json: got %+v, warnings %q", got.Storages, warned)
	}
}
