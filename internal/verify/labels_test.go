package verify

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// relabelApp stores every sample under other labels, as an OTLP receiver does: renamed
// label names, and labels added with a fixed value.
type relabelApp struct {
	dst    *fakeProm
	rename map[string]string
	add    []workload.Label
}

func (a *relabelApp) Append(ls []workload.Label, t int64, v float64) {
	out := slices.Clone(a.add)
	for _, l := range ls {
		if to, ok := a.rename[l.Name]; ok {
			l.Name = to
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	a.dst.Append(out, t, v)
}

// byName serves a fake storage and answers the attribution's search by metric name
// ({__name__=~"a|b"}[Nms]) itself, which fakeProm's selectors do not take.
type byName struct{ p *fakeProm }

var nameSearch = regexp.MustCompile(`^\{__name__=~"(.*)"\}\[(\d+)ms\]$`)

func (b byName) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	m := nameSearch.FindStringSubmatch(r.Form.Get("query"))
	if m == nil {
		b.p.ServeHTTP(w, r)
		return
	}
	re := regexp.MustCompile("^(?:" + strings.ReplaceAll(m[1], `\\`, `\`) + ")$")
	// Answer the range read of each matching series through the fake's own selector path.
	var sels []string
	for key, ls := range b.p.labels {
		if re.MatchString(nameOf(ls)) {
			sels = append(sels, key)
		}
	}
	sort.Strings(sels)
	merged := newFakeProm()
	for _, key := range sels {
		merged.labels[key], merged.series[key] = b.p.labels[key], b.p.series[key]
	}
	r.Form.Set("query", "{}["+m[2]+"ms]")
	r.PostForm = url.Values{}
	merged.ServeHTTP(w, r)
}

func startByName(t *testing.T, p *fakeProm, name string) Target {
	t.Helper()
	srv := httptest.NewServer(byName{p})
	t.Cleanup(srv.Close)
	client, err := storage.NewClient(name, config.Storage{ReadURL: srv.URL}, storage.Read, 2)
	if err != nil {
		t.Fatal(err)
	}
	return Target{Name: name, ReadURL: srv.URL, Client: client}
}

// TestAttributionOnCraftedAnswers checks each attribution of the read-back on storages that
// keep the samples in a way of their own: under other labels (found, reported as label
// changes and counted as renamed, not missing), under the names otlpLabels says (exact), and
// nowhere (stored nothing, with the protocol and its hint).
func TestAttributionOnCraftedAnswers(t *testing.T) {
	wl := newTestWorkload()
	otlpRenames := map[string]string{"job": "service_name", "instance": "service_instance_id"}
	relabeled := func(add []workload.Label) *fakeProm {
		p := newFakeProm()
		writeAll(wl, testWindow(wl), &relabelApp{dst: p, rename: otlpRenames, add: add})
		return p
	}
	scope := []workload.Label{{Name: "otel_scope_name", Value: "tsbench"}}
	renamed := startByName(t, relabeled(scope), "renamed")
	// otlpLabels names job and instance right; the added scope label is found by the search.
	scoped := startByName(t, relabeled(scope), "scoped")
	scoped.Protocol, scoped.OTLPLabels = config.ProtocolOTLP, config.OTLPLabelsUnderscore
	mapped := startByName(t, relabeled(nil), "mapped")
	mapped.Protocol, mapped.OTLPLabels = config.ProtocolOTLP, config.OTLPLabelsUnderscore
	nothing := startByName(t, newFakeProm(), "nothing")
	nothing.Protocol = config.ProtocolRW2
	exact := startByName(t, stored(wl), "exact")

	res := run(t, wl, testConfig(100_000, 1000*1e6), []Target{renamed, scoped, mapped, nothing, exact}, nil)

	r := res["renamed"]
	wantChanges := []results.LabelChange{
		{To: "otel_scope_name", Series: r.CheckedSeries},
		{From: "instance", To: "service_instance_id", Series: r.CheckedSeries},
		{From: "job", To: "service_name", Series: r.CheckedSeries},
	}
	if diff := cmp.Diff(wantChanges, r.LabelChanges); diff != "" {
		t.Errorf("label changes (-want +got):\n%s", diff)
	}
	if r.CheckedSamples == 0 || r.RenamedSamples != r.CheckedSamples || r.MissingSamples != 0 || r.NaNAltered != 0 || r.UnexpectedSamples != 0 {
		t.Errorf("renamed: checked %d renamed %d missing %d nan %d unexpected %d, want every sample renamed, none missing",
			r.CheckedSamples, r.RenamedSamples, r.MissingSamples, r.NaNAltered, r.UnexpectedSamples)
	}
	wantVerdict := "stored under other labels (added otel_scope_name, instance → service_instance_id, job → service_name): " +
		itoa(r.CheckedSamples) + " of " + itoa(r.CheckedSamples) + " samples found there, every value and timestamp exact; set otlpLabels, or query under these labels"
	if r.Exact() || r.Verdict() != wantVerdict {
		t.Errorf("renamed: exact %t, verdict\n%q, want\n%q", r.Exact(), r.Verdict(), wantVerdict)
	}

	sc := res["scoped"]
	if diff := cmp.Diff([]results.LabelChange{{To: "otel_scope_name", Series: sc.CheckedSeries}}, sc.LabelChanges); diff != "" {
		t.Errorf("scoped: label changes (-want +got):\n%s", diff)
	}
	if sc.RenamedSamples != sc.CheckedSamples || sc.MissingSamples != 0 || sc.UnexpectedSamples != 0 || len(sc.Examples) != 0 {
		t.Errorf("scoped: checked %d renamed %d missing %d unexpected %d examples %q, want every sample renamed, nothing else",
			sc.CheckedSamples, sc.RenamedSamples, sc.MissingSamples, sc.UnexpectedSamples, sc.Examples)
	}
	if m := res["mapped"]; !m.Exact() || len(m.LabelChanges) != 0 {
		t.Errorf("otlpLabels underscore: %s; changes %v", m.Verdict(), m.LabelChanges)
	}

	n := res["nothing"]
	if n.StoredNothing == nil || n.StoredNothing.Protocol != "prometheus-rw2" || !strings.Contains(n.StoredNothing.Hint, "prometheus-rw1") {
		t.Fatalf("nothing stored: %+v", n.StoredNothing)
	}
	n.StoredNothing.Acked = 1234
	if v := n.Verdict(); !strings.HasPrefix(v, "stored nothing: it answered 2xx to 1234 samples over prometheus-rw2, and no read found any of them under any labels; ") {
		t.Errorf("verdict %q", v)
	}

	if e := res["exact"]; !e.Exact() || e.StoredNothing != nil || len(e.LabelChanges) != 0 {
		t.Errorf("exact storage: %s", e.Verdict())
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRulesUnderOTLPLabels runs the rule comparison on a storage that keeps job and instance as
// service_name and service_instance_id: with otlpLabels underscore, its rules ask for them under
// those names and its answers compare equal to a storage that keeps job and instance; without,
// its rules find nothing and the comparison says so.
func TestRulesUnderOTLPLabels(t *testing.T) {
	wl := newTestWorkload()
	otlpRenames := map[string]string{"job": "service_name", "instance": "service_instance_id"}
	relabeled := func() *fakeProm {
		p := newFakeProm()
		writeAll(wl, testWindow(wl), &relabelApp{dst: p, rename: otlpRenames})
		return p
	}
	mapped := startByName(t, relabeled(), "mapped")
	mapped.Protocol, mapped.OTLPLabels = config.ProtocolOTLP, config.OTLPLabelsUnderscore
	unmapped := startByName(t, relabeled(), "unmapped")
	unmapped.Protocol = config.ProtocolOTLP
	exact := startByName(t, stored(wl), "exact")
	rules := []query.NamedExpr{
		{Name: "by_job", Expr: `{__name__="fake_counter_total",job="fake"}`},
		{Name: "one_instance", Expr: `{__name__="fake_counter_total",instance="host-1"}`},
	}
	res := run(t, wl, testConfig(100_000, 1000*1e6), []Target{mapped, unmapped, exact}, rules)
	if d := res["mapped"].RuleDiffs; len(d) != 2 || !onlyHereVs(d, "unmapped") {
		t.Errorf("mapped: rule diffs %v, want only its series against unmapped", d)
	}
	for _, d := range res["exact"].RuleDiffs {
		if strings.Contains(d.Detail, "vs mapped") {
			t.Errorf("exact differs from mapped: %v", d)
		}
	}
	if d := res["unmapped"].RuleDiffs; len(d) != 4 || slices.ContainsFunc(d, func(d results.RuleDiff) bool {
		return !regexp.MustCompile(`^vs (exact|mapped): \d+ series only there$`).MatchString(d.Detail)
	}) {
		t.Errorf("unmapped: rule diffs %v, want every rule's series only on the others", d)
	}
}

// onlyHereVs reports whether every diff is series found here and not on storage other.
func onlyHereVs(diffs []results.RuleDiff, other string) bool {
	re := regexp.MustCompile(`^vs ` + other + `: \d+ series only here$`)
	return !slices.ContainsFunc(diffs, func(d results.RuleDiff) bool { return !re.MatchString(d.Detail) })
}
