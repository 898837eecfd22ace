package docs_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChecksFindProblems: on testdata/broken.md, each check names every mistake, with its
// line and what to do, and nothing else.
func TestChecksFindProblems(t *testing.T) {
	page := []string{"testdata/broken.md"}
	got := append(linkProblems(t, page), commandProblems(t, page)...)
	code := []string{"seed", "remoteStorages", "remoteStorages.<name>.writeURL", "remoteStorages.<name>.basicAuth.username", "remoteStorages.<name>.readURL"}
	got = append(got, documentedProblems(t, "testdata/broken.md", "internal/config", code, "| `%s` | effect |")...)
	want := []string{
		"docs/testdata/broken.md:3 links to nope.md, which does not exist (links are relative to the page: from docs/, the repository root is ../)",
		"docs/testdata/broken.md:3 links to ../configuration.md#nosuch: docs/configuration.md has no heading with the anchor #nosuch (its anchors: configuration, top-level-keys, remotestoragesname-each-storage, rangequeries-each-dashboard-panel, keys-of-the-helm-charts-accepted-here)",
		"docs/testdata/broken.md:6: `tsbench run -histroy 6h` does not parse (exit 2): tsbench run: flag provided but not defined: -histroy; fix the command on the page, or the flag in internal/cli",
		"docs/testdata/broken.md:7: `tsbench run -duration soon` does not parse (exit 2): tsbench run: invalid value \"soon\" for flag -duration: parse error; fix the command on the page, or the flag in internal/cli",
		"docs/testdata/broken.md:12: `tsbench run` has no flag -bogus (its flags: -config, -duration, -history, -hold, -httpListenAddr, -keep, -liveGrace, -logLevel, -out, -rounds, -shard): fix the synopsis or internal/cli",
		"docs/testdata/broken.md:13: `tsbench frobnicate` is no command (exit 2): tsbench: unknown command \"frobnicate\"",
		"docs/testdata/broken.md:22 documents seed again (first on line 20): keep one row",
		"docs/testdata/broken.md: remoteStorages is not documented (it is in internal/config): add the row  | `remoteStorages` | effect |  to the table under a heading with no key path in backticks (## Top-level ...)",
		"docs/testdata/broken.md: remoteStorages.<name>.readURL is not documented (it is in internal/config): add the row  | `readURL` | effect |  to the table under a heading naming `remoteStorages.<name>` in backticks (add the heading and a table if there is none)",
		"docs/testdata/broken.md:21 documents gone, which internal/config does not have: remove the row or correct the name (" + tableRule + ")",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
