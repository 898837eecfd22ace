package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	tsbench "github.com/tsbench/tsbench"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// faultApp writes samples to a fake storage through a fault, counting the damage.
type faultApp struct {
	dst *fakeProm
	f   fault
	w   window
	d   damage
}

func (a *faultApp) Append(ls []workload.Label, t int64, v float64) {
	t2, v2, keep := a.d.apply(a.f, keyOf(ls), t, v, a.w)
	if keep {
		a.dst.Append(ls, t2, v2)
	}
}

// writeAll scrapes every target up to the end of w into app.
func writeAll(wl *fakeWorkload, w window, app workload.Appender) {
	for i := range wl.targets {
		for k := int64(0); wl.ScrapeTime(i, k) <= w.to; k++ {
			wl.Scrape(app, i, k)
		}
	}
}

// stored is a fake storage holding everything the workload wrote in its test window.
func stored(wl *fakeWorkload) *fakeProm {
	p := newFakeProm()
	writeAll(wl, testWindow(wl), p)
	return p
}

func testConfig(budget int, interval time.Duration) *config.Config {
	c := config.Default()
	c.VerifySamples = budget
	c.ScrapeInterval = interval
	return &c
}

func startFake(t *testing.T, p http.Handler, name string) Target {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	client, err := storage.NewClient(name, config.Storage{ReadURL: srv.URL}, storage.Read, 2)
	if err != nil {
		t.Fatal(err)
	}
	return Target{Name: name, ReadURL: srv.URL, Client: client}
}

// testWindow is the window written and checked: 60 scrapes of every target.
func testWindow(wl *fakeWorkload) window { return window{wl.start, wl.start + 59_100} }

func newTestWorkload() *fakeWorkload {
	return &fakeWorkload{targets: 4, series: 5, start: 1_700_000_000_000, interval: 1000, churn: 20}
}

// run verifies the fake workload's window [start, start+59s] on the given targets.
func run(t *testing.T, wl *fakeWorkload, cfg *config.Config, targets []Target, rules []query.NamedExpr) map[string]*results.Verify {
	t.Helper()
	v := newVerifier(cfg, wl, targets, rules, slog.New(slog.DiscardHandler))
	v.Settle = 0
	from := time.UnixMilli(wl.start)
	return v.Run(t.Context(), from, time.UnixMilli(testWindow(wl).to))
}

// counts is the part of results.Verify a fault shows in.
type counts struct {
	Missing, Duplicate, Unexpected, Changed, NaNAltered, StalenessIgnored, Shifted int64
}

func countsOf(v *results.Verify) counts {
	return counts{v.MissingSamples, v.DuplicateSamples, v.UnexpectedSamples, v.ChangedValues, v.NaNAltered, v.StalenessIgnored, v.ShiftedTimestamps}
}

// expectedCounts maps a fault's damage to the counts verify must report.
func expectedCounts(name string, d damage) counts {
	switch name {
	case "drop 1%":
		return counts{Missing: d.values, NaNAltered: d.nans, StalenessIgnored: d.markers}
	case "round to 15 digits":
		return counts{Changed: d.values}
	case "remove NaN":
		return counts{NaNAltered: d.nans}
	case "shift 1ms":
		return counts{Shifted: d.values + d.nans} // markers move too, and are still honoured
	case "drop staleness markers":
		return counts{StalenessIgnored: d.markers}
	}
	return counts{}
}

func TestReadBackSeededFaults(t *testing.T) {
	for name, f := range faults() {
		t.Run(name, func(t *testing.T) {
			wl := newTestWorkload()
			w := testWindow(wl)
			p := newFakeProm()
			app := &faultApp{dst: p, f: f, w: w}
			writeAll(wl, w, app)
			// 4 targets × 5 series × 60 scrapes = 1200 samples: a budget of 1200 checks all.
			res := run(t, wl, testConfig(1200, time.Second), []Target{startFake(t, p, "fake")}, nil)["fake"]
			if len(res.Errors) > 0 {
				t.Fatalf("errors: %v", res.Errors)
			}
			if res.CheckedSamples != 1200 {
				t.Errorf("checked %d samples, want all 1200", res.CheckedSamples)
			}
			// Targets 0 and 2 change revision at scrapes 20 and 40: 2 × 2 × 5 markers.
			if res.CheckedStaleMarkers != 20 {
				t.Errorf("checked %d staleness markers, want 20", res.CheckedStaleMarkers)
			}
			want := expectedCounts(name, app.d)
			if name != "none" && want == (counts{}) {
				t.Fatalf("fault %s did no damage: the test cannot fail", name)
			}
			if diff := cmp.Diff(want, countsOf(res)); diff != "" {
				t.Errorf("damage %+v; counts (-want +got):\n%s\nexamples: %v", app.d, diff, res.Examples)
			}
			switch name {
			case "none":
				if !res.Exact() || !strings.HasPrefix(res.Verdict(), "returns exactly what it was given") {
					t.Errorf("verdict %q, want exact", res.Verdict())
				}
			case "round to 15 digits":
				if res.MaxRelativeError <= 0 || res.MaxRelativeError > 5e-15 {
					t.Errorf("max relative error %g, want in (0, 5e-15]", res.MaxRelativeError)
				}
			case "shift 1ms":
				if res.MaxShiftMillis != 1 {
					t.Errorf("max shift %dms, want 1", res.MaxShiftMillis)
				}
			}
			if name != "none" && res.Exact() {
				t.Errorf("verdict %q after fault %s", res.Verdict(), name)
			}
		})
	}
}

func TestSampledPlanIsDeterministicAndCovers(t *testing.T) {
	wl := &fakeWorkload{targets: 50, series: 20, start: 1_700_000_000_000, interval: 1000, churn: 15}
	w := testWindow(wl)
	a := plan(wl, 7, w, 1000, 2000)
	b := plan(wl, 7, w, 1000, 2000)
	if diff := cmp.Diff(a, b, cmp.AllowUnexported(unit{})); diff != "" {
		t.Fatalf("same seed, different plans:\n%s", diff)
	}
	kinds := map[string]int{}
	var samples int64
	for i := range a {
		expect(wl, &a[i], 1000)
		kinds[a[i].kind]++
		samples += a[i].samples
	}
	if kinds[kindRecent] != 1 || kinds[kindChurn] == 0 || kinds[kindSample] == 0 {
		t.Errorf("unit kinds %v, want one recent, churn and sample units", kinds)
	}
	if samples < 2000 || samples > 2000+3*20 {
		t.Errorf("planned %d samples, want the budget 2000 (+ at most one unit)", samples)
	}
	for _, u := range a {
		if u.kind == kindRecent && wl.ScrapeTime(u.target, u.kTo) < w.to-1000 {
			t.Errorf("recent unit ends at %d, want within a scrape of %d", wl.ScrapeTime(u.target, u.kTo), w.to)
		}
	}
	if c := plan(wl, 8, w, 1000, 2000); cmp.Equal(a, c, cmp.AllowUnexported(unit{})) {
		t.Error("another seed chose the same reads")
	}
}

func TestProbesAgainstPrometheusAndVMLikeAnswers(t *testing.T) {
	wl := newTestWorkload()
	prom, vm := stored(wl), stored(wl)
	vm.vmLike = true
	rules := []query.NamedExpr{{Name: "raw", Expr: `fake_counter_total`}}
	out := run(t, wl, testConfig(1200, time.Second), []Target{startFake(t, prom, "prom"), startFake(t, vm, "vm")}, rules)
	var promDiff []string
	for _, p := range out["prom"].Probes {
		if !p.Same {
			promDiff = append(promDiff, p.Name+": expected "+p.Expected+", got "+p.Got)
		}
	}
	if len(promDiff) > 0 || len(out["prom"].Probes) != 9 {
		t.Errorf("%d probes; Prometheus semantics differ from expected:\n%s", len(out["prom"].Probes), strings.Join(promDiff, "\n"))
	}
	var vmDiff []string
	for _, p := range out["vm"].Probes {
		if !p.Same {
			vmDiff = append(vmDiff, p.Name)
		}
	}
	want := []string{
		"time() is a scalar", "scalar() is a scalar", "sum(time()) is a type error",
		"vector(0) - metric matches no labelled series", "avg_over_time drops the metric name",
		"range query stops at the staleness marker",
	}
	if diff := cmp.Diff(want, vmDiff); diff != "" {
		t.Errorf("VM-like differences (-want +got):\n%s", diff)
	}
	// The VM-like fake keeps a series in range queries after its marker: the raw rule has
	// points only there.
	wantDiffs := []results.RuleDiff{{Rule: "raw", Detail: "vs vm: 20 points only there"}}
	if diff := cmp.Diff(wantDiffs, out["prom"].RuleDiffs); diff != "" {
		t.Errorf("prom rule diffs (-want +got):\n%s", diff)
	}
}

func TestRuleDiffs(t *testing.T) {
	wl := newTestWorkload()
	a, b := stored(wl), stored(wl)
	delete(b.series, keyOf(wl.labels(3, 0, 0))) // one series lost in b
	scaled := b.series[keyOf(wl.labels(1, 0, 0))]
	for i := range scaled {
		scaled[i].v *= 1 + 1e-7 // beyond the raw tolerance, within the computed one
	}
	// The fake answers any expression by its label matchers: "computed" selects the same
	// series as "raw", and is held to 1e-6 instead of 1e-9.
	rules := []query.NamedExpr{{Name: "raw", Expr: `{__name__="fake_counter_total"}`}, {Name: "computed", Expr: `2 * {__name__="fake_counter_total"}`}}
	out := run(t, wl, testConfig(100, time.Second), []Target{startFake(t, a, "a"), startFake(t, b, "b")}, rules)
	got := out["a"].RuleDiffs
	if len(got) != 2 || got[0].Rule != "raw" || !strings.HasPrefix(got[0].Detail, "vs b: 1 series only here, 59 values differ beyond 1e-09 (largest 1e-07") {
		t.Errorf("a's raw rule diff %v", got)
	}
	if len(got) == 2 && (got[1] != results.RuleDiff{Rule: "computed", Detail: "vs b: 1 series only here"}) {
		t.Errorf("a's computed rule diff %v", got[1])
	}
	if len(out["b"].RuleDiffs) != 2 || !strings.HasPrefix(out["b"].RuleDiffs[0].Detail, "vs a: 1 series only there, 59 values differ") {
		t.Errorf("b's rule diffs %v", out["b"].RuleDiffs)
	}
	if !isRawSelection(rules[0].Expr) || isRawSelection(rules[1].Expr) || !isRawSelection("up") || isRawSelection("up[5m]") {
		t.Error("isRawSelection")
	}
}

func TestCompareSeries(t *testing.T) {
	es := func(samples ...expSample) *expSeries {
		return &expSeries{labels: []label{{Name: "__name__", Value: "m"}}, samples: samples}
	}
	stale := math.Float64frombits(staleNaNBits)
	for _, tc := range []struct {
		name string
		exp  *expSeries
		got  []point
		want tally
	}{
		{
			"exact", es(expSample{t: 1000, v: 1}, expSample{t: 2000, v: 0.1 + 0.2}),
			[]point{{1000, 1}, {2000, 0.1 + 0.2}},
			tally{SampleCounts: results.SampleCounts{CheckedSamples: 2}},
		},
		{
			"minus zero is a change of bits", es(expSample{t: 1000, v: 0}),
			[]point{{1000, math.Copysign(0, -1)}},
			tally{SampleCounts: results.SampleCounts{CheckedSamples: 1, ChangedValues: 1, ChangedWithoutRelativeError: 1}},
		},
		{
			"duplicate and unexpected", es(expSample{t: 1000, v: 1}),
			[]point{{1000, 1}, {1000, 1}, {5000, 3}},
			tally{SampleCounts: results.SampleCounts{CheckedSamples: 1, DuplicateSamples: 1, UnexpectedSamples: 1}},
		},
		{
			"NaN kept, NaN altered, NaN dropped", es(expSample{t: 1000, v: math.NaN()}, expSample{t: 2000, v: math.NaN()}, expSample{t: 3000, v: math.NaN()}),
			[]point{{1000, math.NaN()}, {2000, 0}},
			tally{SampleCounts: results.SampleCounts{CheckedSamples: 3, NaNAltered: 2}},
		},
		{
			"marker as NaN or absent is fine", es(expSample{t: 1000, v: 1}, expSample{t: 2000, v: stale, stale: true}),
			[]point{{1000, 1}, {2000, math.NaN()}},
			tally{SampleCounts: results.SampleCounts{CheckedSamples: 1}},
		},
		{
			"shift within half an interval", es(expSample{t: 1000, v: 1}, expSample{t: 2000, v: 2}),
			[]point{{1003, 1}, {2000, 2}},
			tally{SampleCounts: results.SampleCounts{CheckedSamples: 2, ShiftedTimestamps: 1}, maxShift: 3},
		},
		{
			"too far is missing + unexpected", es(expSample{t: 1000, v: 1}),
			[]point{{1600, 1}},
			tally{SampleCounts: results.SampleCounts{CheckedSamples: 1, MissingSamples: 1, UnexpectedSamples: 1}},
		},
		{
			"changed value relative error", es(expSample{t: 1000, v: 100}),
			[]point{{1000, 101}},
			tally{SampleCounts: results.SampleCounts{CheckedSamples: 1, ChangedValues: 1, MaxRelativeError: 0.01}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got tally
			compareSeries(tc.exp, tc.got, 499, false, &got)
			got.examples = nil
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(tally{}, heldTally{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExactAndVerdict(t *testing.T) {
	v := &results.Verify{CheckedSamples: 10, CheckedStaleMarkers: 2}
	if !v.Exact() || v.Verdict() != "returns exactly what it was given (10 samples, 2 staleness markers)" {
		t.Errorf("verdict %q", v.Verdict())
	}
	v.ChangedValues, v.MaxRelativeError, v.NaNAltered = 3, 1.5e-13, 1
	if v.Exact() || v.Verdict() != "10 samples checked: 3 values changed (max relative error 1.5e-13), 1 NaN dropped or altered" {
		t.Errorf("verdict %q", v.Verdict())
	}
	if (&results.Verify{}).Exact() {
		t.Error("nothing checked is not exact")
	}
}

// TestExpectKeepsItsOwnLabels plans with the real generator, whose label strings live in
// buffers it reuses: every expected series must still name its own target after the
// generator scraped others.
func TestExpectKeepsItsOwnLabels(t *testing.T) {
	p, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := workload.New(p, workload.Options{Seed: 1, Start: time.UnixMilli(1_000_000), Hosts: 20, ScrapeInterval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	units := []unit{{target: 3, kFrom: 0, kTo: 1}, {target: 17, kFrom: 0, kTo: 1}}
	for i := range units {
		expect(g, &units[i], 10_000)
	}
	g.Scrape(&collector{u: &unit{series: map[string]*expSeries{}}, mode: collectCommon}, 9, 0) // reuse the buffers once more
	for _, u := range units {
		want := fmt.Sprintf(`instance="host-%06d:9100"`, u.target)
		for _, s := range u.series {
			if got := render(s.labels); !strings.Contains(got, want) {
				t.Fatalf("target %d: expected series %s", u.target, got)
			}
		}
		for _, l := range u.selector {
			if l.Name == "instance" && l.Value != fmt.Sprintf("host-%06d:9100", u.target) {
				t.Fatalf("target %d: selector %v", u.target, u.selector)
			}
		}
	}
}

// TestRelativeErrorStaysFinite: a change with no relative error (from 0, from or to ±Inf, a
// marker returned as a number) counts in ChangedValues and ChangedWithoutRelativeError, and
// MaxRelativeError stays a finite number, so results.json can be written.
func TestRelativeErrorStaysFinite(t *testing.T) {
	stale := math.Float64frombits(staleNaNBits)
	for _, tc := range []struct {
		name   string
		want   expSample
		got    float64
		relErr float64
		noRel  int64
	}{
		{"changed zero", expSample{t: 1000, v: 0}, 1, 0, 1},
		{"zero's sign changed", expSample{t: 1000, v: 0}, math.Copysign(0, -1), 0, 1},
		{"infinity's sign changed", expSample{t: 1000, v: math.Inf(1)}, math.Inf(-1), 0, 1},
		{"marker returned as a number", expSample{t: 1000, v: stale, stale: true}, 0, 0, 1},
		{"infinity changed", expSample{t: 1000, v: math.Inf(1)}, 1, 0, 1},
		{"number returned as infinity", expSample{t: 1000, v: 1}, math.Inf(-1), 0, 1},
		{"number returned as NaN", expSample{t: 1000, v: 1}, math.NaN(), 0, 1},
		{"tiny value, huge answer", expSample{t: 1000, v: 5e-324}, 1e300, 0, 1},
		{"ordinary change", expSample{t: 1000, v: 4}, 5, 0.25, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tl tally
			es := &expSeries{labels: []label{{Name: "__name__", Value: "m"}}, samples: []expSample{tc.want}}
			compareSeries(es, []point{{1000, tc.got}}, 499, false, &tl)
			v := &results.Verify{}
			tl.fill(v)
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("marshal: %v", err)
			}
			if v.ChangedValues != 1 || v.ChangedWithoutRelativeError != tc.noRel || v.MaxRelativeError != tc.relErr {
				t.Errorf("changed %d, without relative error %d, max relative error %g; want 1, %d, %g",
					v.ChangedValues, v.ChangedWithoutRelativeError, v.MaxRelativeError, tc.noRel, tc.relErr)
			}
			if len(v.Examples) != 1 {
				t.Errorf("examples %q, want one line", v.Examples)
			}
		})
	}
}

// TestMarkersReturnedAsNumbersMarshal runs the whole check on a storage that stores every
// staleness marker as 0: each counts as a changed value without relative error, and the
// report marshals.
func TestMarkersReturnedAsNumbersMarshal(t *testing.T) {
	wl := newTestWorkload()
	w := testWindow(wl)
	p := newFakeProm()
	toZero := func(_ string, t int64, v float64) (int64, float64, bool) {
		if isStale(v) {
			return t, 0, true
		}
		return t, v, true
	}
	app := &faultApp{dst: p, f: toZero, w: w}
	writeAll(wl, w, app)
	res := run(t, wl, testConfig(1200, time.Second), []Target{startFake(t, p, "fake")}, nil)["fake"]
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("marshal: %v", err)
	}
	// The 20 markers come back as 0 in the range reads; the instant query just after a marker
	// finds the series (with 0): every marker is also not honoured.
	if res.ChangedValues != 20 || res.ChangedWithoutRelativeError != 20 || res.MaxRelativeError != 0 || res.StalenessIgnored != 20 {
		t.Errorf("changed %d (without relative error %d, max %g), staleness ignored %d; want 20, 20, 0, 20",
			res.ChangedValues, res.ChangedWithoutRelativeError, res.MaxRelativeError, res.StalenessIgnored)
	}
	if want := "20 values changed (max relative error 0; 20 from 0, ±Inf or a staleness marker, or to ±Inf or NaN)"; !strings.Contains(res.Verdict(), want) {
		t.Errorf("verdict %q, want it to contain %q", res.Verdict(), want)
	}
}

// replicaApp writes every sample twice, as writeURLReplicas: 2 does: with url_replica=0 and
// =1 added when labelled (VictoriaMetrics honours extra_label), else as the same series twice
// (Prometheus ignores extra_label).
type replicaApp struct {
	dst      *fakeProm
	labelled bool
}

func (a *replicaApp) Append(ls []workload.Label, t int64, v float64) {
	for r := range 2 {
		if !a.labelled {
			a.dst.Append(ls, t, v)
			continue
		}
		var out []workload.Label
		for _, l := range ls {
			out = append(out, l)
			if l.Name == "s" { // the last label before url_replica in name order
				out = append(out, workload.Label{Name: urlReplicaLabel, Value: strconv.Itoa(r)})
			}
		}
		a.dst.Append(out, t, v)
	}
}

// TestURLReplicasFollowTheAnswers: with writeURLReplicas: 2, a storage that keeps the copies
// apart by url_replica is checked for both, and one that holds a single series (its copies
// were identical) for one; both are exact, and every probe asks about one series.
func TestURLReplicasFollowTheAnswers(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		labelled, perStorage   bool
		wantChecked, wantStale int64
	}{
		{"url_replica added", true, false, 2400, 40},
		{"copies merged", false, false, 1200, 20},
		// The chart sets writeURLReplicas per storage: it overrides the top-level key.
		{"url_replica added, set per storage", true, true, 2400, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := newTestWorkload()
			p := newFakeProm()
			writeAll(wl, testWindow(wl), &replicaApp{dst: p, labelled: tc.labelled})
			cfg := testConfig(1200, time.Second)
			if tc.perStorage {
				cfg.RemoteStorages = map[string]config.Storage{"fake": {WriteURLReplicas: 2}}
			} else {
				cfg.WriteURLReplicas = 2
			}
			res := run(t, wl, cfg, []Target{startFake(t, p, "fake")}, nil)["fake"]
			if !res.Exact() || res.CheckedSamples != tc.wantChecked || res.CheckedStaleMarkers != tc.wantStale {
				t.Errorf("verdict %q (%d markers); want exact, %d samples and %d markers; examples:\n%s",
					res.Verdict(), res.CheckedStaleMarkers, tc.wantChecked, tc.wantStale, strings.Join(res.Examples, "\n"))
			}
			if len(res.Probes) != 9 || res.DifferentProbes() != 0 {
				for _, pr := range res.Probes {
					t.Logf("probe %q same=%v query %s\n  expected %s\n  got      %s", pr.Name, pr.Same, pr.Query, pr.Expected, pr.Got)
				}
				t.Errorf("%d probes, %d differ; want 9, none", len(res.Probes), res.DifferentProbes())
			}
		})
	}
}

// failingReads answers every range read of a selector matching fail with status 500.
type failingReads struct {
	next *fakeProm
	fail *regexp.Regexp
}

func (f *failingReads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if q := r.FormValue("query"); rangeSel.MatchString(q) && f.fail.MatchString(q) {
		http.Error(w, "read failed", http.StatusInternalServerError)
		return
	}
	f.next.ServeHTTP(w, r)
}

// TestFailedReadsAreCounted: a failed read is counted in ReadErrors and its samples in
// UncheckedSamples, so that checked + unchecked is every sample planned, and the verdict is
// not exact.
func TestFailedReadsAreCounted(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		fail                  string
		readErrors, unchecked int64
	}{
		// Target 1 never churns: one read of 60 scrapes × 5 series.
		{"one target", `instance="host-1"`, 1, 300},
		// Targets 0 and 2 are read in three revisions each, 1 and 3 in one: 8 reads.
		{"every read", `.`, 8, 1200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := newTestWorkload()
			p := stored(wl)
			srv := httptest.NewServer(&failingReads{next: p, fail: regexp.MustCompile(tc.fail)})
			t.Cleanup(srv.Close)
			client, err := storage.NewClient("fake", config.Storage{ReadURL: srv.URL}, storage.Read, 2)
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, wl, testConfig(1200, time.Second), []Target{{Name: "fake", ReadURL: srv.URL, Client: client}}, nil)["fake"]
			if res.ReadErrors != tc.readErrors || res.UncheckedSamples != tc.unchecked || res.CheckedSamples+res.UncheckedSamples != 1200 {
				t.Errorf("read errors %d, unchecked %d, checked %d; want %d, %d and checked + unchecked = 1200",
					res.ReadErrors, res.UncheckedSamples, res.CheckedSamples, tc.readErrors, tc.unchecked)
			}
			if int64(len(res.Errors)) != tc.readErrors || res.Exact() {
				t.Errorf("errors %q, verdict %q: want one line per failed read, not exact", res.Errors, res.Verdict())
			}
			if !strings.Contains(res.Verdict(), fmt.Sprintf("%d reads failed, %d samples unchecked", tc.readErrors, tc.unchecked)) {
				t.Errorf("verdict %q", res.Verdict())
			}
		})
	}
}

// TestReadsNotMadeAreUnchecked: when the check runs out of time, the samples of the reads
// not made are unchecked, not lost.
func TestReadsNotMadeAreUnchecked(t *testing.T) {
	wl := newTestWorkload()
	p := stored(wl)
	v := newVerifier(testConfig(1200, time.Second), wl, []Target{startFake(t, p, "fake")}, nil, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := v.Run(ctx, time.UnixMilli(wl.start), time.UnixMilli(testWindow(wl).to))["fake"]
	if res.CheckedSamples != 0 || res.UncheckedSamples != 1200 || res.ReadErrors != 0 || res.Exact() {
		t.Errorf("checked %d, unchecked %d, read errors %d, verdict %q; want 0, 1200, 0, not exact",
			res.CheckedSamples, res.UncheckedSamples, res.ReadErrors, res.Verdict())
	}
	if diff := cmp.Diff([]string{"8 reads not made: context canceled"}, res.Errors); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestEndOfRunSettle: the check covers its window up to its end (the caller passes the
// writer's exact bound), and waits Settle before reading so that the storage has made the
// last acknowledged samples searchable.
func TestEndOfRunSettle(t *testing.T) {
	wl := newTestWorkload()
	p := stored(wl)
	v := newVerifier(testConfig(100_000, time.Second), wl, []Target{startFake(t, p, "fake")}, nil, slog.New(slog.DiscardHandler))
	if v.Settle != 3*time.Second {
		t.Errorf("settle %v; want 3s", v.Settle)
	}
	v.Settle = 200 * time.Millisecond
	to := time.UnixMilli(testWindow(wl).to)
	began := time.Now()
	res := v.Run(t.Context(), time.UnixMilli(wl.start), to)["fake"]
	if waited := time.Since(began); waited < v.Settle {
		t.Errorf("Run took %v, want at least Settle %v", waited, v.Settle)
	}
	// Scrapes 0..59 of 4 targets × 5 series: 1200 samples, the newest included.
	if !res.CheckedTo.Equal(to) || res.CheckedSamples != 1200 || !res.Exact() {
		t.Errorf("checked to %v, %d samples, verdict %q; want %v, 1200, exact", res.CheckedTo, res.CheckedSamples, res.Verdict(), to.UTC())
	}
}

func TestLookback(t *testing.T) {
	for expr, want := range map[string]time.Duration{
		`up`:                                0,
		`up offset 5m`:                      5 * time.Minute,
		`rate(x[5m])`:                       5 * time.Minute,
		`rate(x[5m] offset 1h) / y`:         65 * time.Minute,
		`predict_linear(x[6h], 3600)`:       6 * time.Hour,
		`max_over_time(rate(x[5m])[1h:1m])`: 65 * time.Minute,
		`this is not promql`:                0,
	} {
		if got := Lookback(expr); got != want {
			t.Errorf("Lookback(%q) = %v, want %v", expr, got, want)
		}
	}
}

// TestRulesOverFullWindowsOnly: a rule is compared only from where every series written since
// the window's start fills its lookback (before that, a rate is the engine's extrapolation);
// a rule whose lookback is longer than the window is named, not compared.
func TestRulesOverFullWindowsOnly(t *testing.T) {
	wl := newTestWorkload()
	a, b := stored(wl), stored(wl)
	for i := range b.series[keyOf(wl.labels(1, 0, 0))] {
		b.series[keyOf(wl.labels(1, 0, 0))][i].v *= 2 // every value differs
	}
	// The fake answers any expression by its label matchers, so the rules differ only in the
	// range they are run over.
	rules := []query.NamedExpr{
		{Name: "instant", Expr: `{__name__="fake_counter_total"}`},
		{Name: "20s", Expr: `max_over_time({__name__="fake_counter_total"}[20s])`},
		{Name: "10m", Expr: `rate({__name__="fake_counter_total"}[10m])`},
	}
	out := run(t, wl, testConfig(100, time.Second), []Target{startFake(t, a, "a"), startFake(t, b, "b")}, rules)
	var got []string
	for _, d := range out["a"].RuleDiffs {
		got = append(got, d.Rule+": "+d.Detail[:strings.Index(d.Detail, " (")])
	}
	// 60 steps in the window; the counter's first value, 0, doubles to itself. The 20s rule
	// starts 20 steps later.
	want := []string{"instant: vs b: 59 values differ beyond 1e-09", "20s: vs b: 40 values differ beyond 1e-06"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rule diffs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"10m (needs 10m0s of data)"}, out["a"].RulesNotCompared); diff != "" {
		t.Errorf("rules not compared (-want +got):\n%s", diff)
	}
}
