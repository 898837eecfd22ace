package threshold

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

// TestParseCompareRules: full and short figure names, both operators, percent and absolute
// limits in the figure's unit.
func TestParseCompareRules(t *testing.T) {
	got, err := ParseCompareRules("-fail-on", []string{"query.p99>+20%", "vm: bytesPerSample > +10%", "achievedSamplesPerSecond<-5%", "query.p99>+50ms", "rssBytesMax>+64MiB"}, []string{"vm"})
	if err != nil {
		t.Fatal(err)
	}
	want := []CompareRule{
		{Expr: "query.p99>+20%", Figure: "query.p99", Op: ">", Limit: 20, Percent: true},
		{Expr: "vm: bytesPerSample > +10%", Storage: "vm", Figure: "resources.bytesPerSample", Op: ">", Limit: 10, Percent: true},
		{Expr: "achievedSamplesPerSecond<-5%", Figure: "write.achievedSamplesPerSecond", Op: "<", Limit: -5, Percent: true},
		{Expr: "query.p99>+50ms", Figure: "query.p99", Op: ">", Limit: 0.05},
		{Expr: "rssBytesMax>+64MiB", Figure: "resources.rssBytesMax", Op: ">", Limit: 64 << 20},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A short name that ends several figures is ambiguous, and says which.
	_, err = ParseCompareRules("-fail-on", []string{"Samples>+1%", "checkedSamples>+1%"}, nil)
	if err == nil || !strings.Contains(err.Error(), "unknown figure \"Samples\"") {
		t.Errorf("err %v, want Samples unknown (a suffix matches only a whole last part)", err)
	}
	_, err = ParseCompareRules("-fail-on", []string{"p99>+1%"}, nil)
	if err != nil {
		t.Errorf("p99: %v, want query.p99", err)
	}
}

// TestGateFromZero: from an old value of 0 any increase is past every percent limit, and a
// storage only in the new run is not checked by a rule on every storage.
func TestGateFromZero(t *testing.T) {
	drops := func(n int64) results.Storage {
		return results.Storage{Write: &results.Write{DroppedSamples: map[string]int64{"http_400": n}}}
	}
	a0, a5, b5 := drops(0), drops(5), drops(5)
	a0.Name, a5.Name, b5.Name = "a", "a", "b"
	old := &results.Run{Storages: []results.Storage{a0}}
	cur := &results.Run{Storages: []results.Storage{a5, b5}}
	vs := Gate([]*results.Run{old}, cur, []CompareRule{{Figure: "write.droppedSamples", Op: ">", Limit: 1000, Percent: true}})
	if len(vs) != 1 || !vs[0].Failed || vs[0].Row.Storage != "a" {
		t.Errorf("verdicts %+v, want storage a failed alone", vs)
	}
	if got := percentChange(0, 5); !math.IsInf(got, 1) {
		t.Errorf("percentChange(0, 5) = %v, want +Inf", got)
	}
}

// run is one storage, vm, whose write timeline has the per-interval rates given (and its
// achieved rate is their mean), with a query p99 timeline and a bytes-per-sample timeline
// when given.
func run(rates, p99s, bytesPerSample []float64) *results.Run {
	w := &results.Write{DroppedSamples: map[string]int64{}, TargetSamplesPerSecond: 10_000}
	for _, r := range rates {
		w.Timeline = append(w.Timeline, results.WritePoint{SamplesPerSecs: r})
		w.AchievedSamplesPerSecond += r / float64(len(rates))
	}
	s := results.Storage{Name: "vm", Write: w}
	if len(p99s) > 0 {
		s.Query = &results.Query{Errors: map[string]int64{}, LatencySeconds: results.Latency{P99: new(slices.Max(p99s))}}
		for _, p := range p99s {
			s.Query.Timeline = append(s.Query.Timeline, results.QueryPoint{P99: new(p)})
		}
	}
	if len(bytesPerSample) > 0 {
		s.Resources = &results.Resources{BytesPerSample: new(bytesPerSample[len(bytesPerSample)-1])}
		for _, b := range bytesPerSample {
			s.Resources.Timeline = append(s.Resources.Timeline, results.ResourcePoint{BytesPerSample: new(b)})
		}
	}
	return &results.Run{Storages: []results.Storage{s}}
}

// TestGateFailsPastTheLimit (issue 29 item 3): a rule fails when its limit is passed, as
// written, however uneven the new run is; the noise beside each verdict is the old run's
// alone, and a rule that asks for it (~noise) passes within it.
func TestGateFailsPastTheLimit(t *testing.T) {
	steady5 := run([]float64{10_000, 10_000, 10_000, 10_000, 10_000}, nil, nil)
	falling := run([]float64{10_000, 8_000, 6_000, 4_000, 2_000}, nil, nil)
	steady4 := run([]float64{10_000, 10_000, 10_000, 10_000}, nil, nil)
	onOff := run([]float64{10_000, 0, 10_000, 0}, nil, nil)
	// A cumulative bytes per sample falls as the run warms up: its timeline spreads far more
	// than the end value moves.
	bps := run(nil, nil, []float64{120, 30, 8, 3, 1.5})
	bpsDoubled := run(nil, nil, []float64{240, 60, 16, 6, 3})
	// p99 per interval alternates 60 and 180 ms in the old run: a noisy baseline.
	p99 := run(nil, []float64{0.06, 0.18, 0.06, 0.18, 0.06, 0.18, 0.06, 0.18}, nil)
	p99Up := run(nil, []float64{0.075, 0.225, 0.075, 0.225, 0.075, 0.225, 0.075, 0.225}, nil)
	tests := []struct {
		name     string
		old, cur *results.Run
		rule     string
		failed   bool
		outcome  string
		noise    float64 // the old run's, whatever the new run's spread
		method   string
	}{
		{"throughput falls 40% unevenly", steady5, falling, "write.achievedSamplesPerSecond<-10%", true, "past the limit", 0, "SE, n_eff 5/5"},
		{"throughput halves on and off", steady4, onOff, "write.achievedSamplesPerSecond<-10%", true, "past the limit", 0, "SE, n_eff 4/4"},
		{"bytes per sample doubles", bps, bpsDoubled, "bytesPerSample>+10%", true, "past the limit", 2 * math.Sqrt(2*variance([]float64{120, 30, 8, 3, 1.5})), "σ"},
		{"throughput the same", steady5, steady5, "write.achievedSamplesPerSecond<-10%", false, "within the limit", 0, "SE, n_eff 5/5"},
		{"throughput on and off the same", onOff, onOff, "write.achievedSamplesPerSecond<-10%", false, "within the limit", 2 * math.Sqrt(2*variance([]float64{10_000, 0, 10_000, 0})/4), "SE, n_eff 4/4"},
		{"bytes per sample the same", bps, bps, "bytesPerSample>+10%", false, "within the limit", 2 * math.Sqrt(2*variance([]float64{120, 30, 8, 3, 1.5})), "σ"},
		{
			"the old run's noise, not the new run's", falling, steady5, "write.achievedSamplesPerSecond>+10%", true, "past the limit",
			2 * math.Sqrt(2*variance([]float64{10_000, 8_000, 6_000, 4_000, 2_000})/effectiveN([]float64{10_000, 8_000, 6_000, 4_000, 2_000})), "SE, n_eff 2/5",
		},
		{
			"~noise: past the limit, within a noisy baseline", p99, p99Up, "query.p99>+20%~noise", false,
			"past the limit but within the old run's noise: not a regression", 2 * math.Sqrt(2*variance([]float64{0.06, 0.18, 0.06, 0.18, 0.06, 0.18, 0.06, 0.18})/8), "SE, n_eff 8/8",
		},
		{
			"without ~noise the same change fails", p99, p99Up, "query.p99>+20%", true, "past the limit",
			2 * math.Sqrt(2*variance([]float64{0.06, 0.18, 0.06, 0.18, 0.06, 0.18, 0.06, 0.18})/8), "SE, n_eff 8/8",
		},
		{
			"~noise: past the limit and a steady baseline's noise", steady5, falling, "write.achievedSamplesPerSecond<-10%~noise", true,
			"past the limit and beyond the old run's noise", 0, "SE, n_eff 5/5",
		},
		{"~noise: within the limit", steady5, steady5, "write.achievedSamplesPerSecond<-10%~noise", false, "within the limit", 0, "SE, n_eff 5/5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := ParseCompareRules("-fail-on", []string{tt.rule}, []string{"vm"})
			if err != nil {
				t.Fatal(err)
			}
			vs := Gate([]*results.Run{tt.old}, tt.cur, rules)
			if len(vs) != 1 {
				t.Fatalf("%d verdicts, want 1: %+v", len(vs), vs)
			}
			v := vs[0]
			if v.Failed != tt.failed || v.Outcome != tt.outcome {
				t.Errorf("failed %v, %q; want %v, %q", v.Failed, v.Outcome, tt.failed, tt.outcome)
			}
			if math.Abs(v.Row.Noise-tt.noise) > 1e-9*max(1, tt.noise) || v.Row.Method != tt.method {
				t.Errorf("noise ±%v (%s), want the old run's ±%v (%s)", v.Row.Noise, v.Row.Method, tt.noise, tt.method)
			}
		})
	}
}

// TestParseNoiseRule: "~noise" after the limit asks for the old run's noise; it is spelled
// once, after the change, and a rule without it is checked as written.
func TestParseNoiseRule(t *testing.T) {
	got, err := ParseCompareRules("-fail-on", []string{"query.p99>+20%~noise", "vm: bytesPerSample > +10% ~noise", "p99>+50ms~noise"}, []string{"vm"})
	if err != nil {
		t.Fatal(err)
	}
	want := []CompareRule{
		{Expr: "query.p99>+20%~noise", Figure: "query.p99", Op: ">", Limit: 20, Percent: true, Noise: true},
		{Expr: "vm: bytesPerSample > +10% ~noise", Storage: "vm", Figure: "resources.bytesPerSample", Op: ">", Limit: 10, Percent: true, Noise: true},
		{Expr: "p99>+50ms~noise", Figure: "query.p99", Op: ">", Limit: 0.05, Noise: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for expr, msg := range map[string]string{
		"query.p99>+20%~nois":        `change "+20%~nois" is not a percent`,
		"query.p99>~noise":           `change "" is not a percent`,
		"query.p99>+20%~noise~noise": `change "+20%~noise" is not a percent`,
	} {
		if _, err := ParseCompareRules("-fail-on", []string{expr}, nil); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", expr, err, msg)
		}
	}
}

// TestGateUnknown (issue 35): a rule on a figure unknown in the old run fails, saying why
// where the results tell (a baseline whose read-back checked nothing no longer lets
// verify.missingSamples>+0 pass), and so does one unknown in the new run but known in the old;
// "?ok" passes both. A rule on every storage checks the old run's storages, but not a write
// figure of a storage no run wrote to.
func TestGateUnknown(t *testing.T) {
	readBack := func(name string, checked, missing int64) results.Storage {
		return results.Storage{
			Name: name, Write: &results.Write{DroppedSamples: map[string]int64{}},
			Verify: &results.Verify{CheckedSamples: checked, MissingSamples: missing},
		}
	}
	nothing := &results.Run{Storages: []results.Storage{readBack("vm", 0, 0)}}
	checked := &results.Run{Storages: []results.Storage{readBack("vm", 1000, 0)}}
	lost := &results.Run{Storages: []results.Storage{readBack("vm", 1000, 7)}}
	both := &results.Run{Storages: []results.Storage{readBack("vm", 1000, 0), readBack("prom", 1000, 0)}}
	shrank := &results.Run{Storages: []results.Storage{{Name: "vm", Resources: &results.Resources{
		Reasons: map[string]string{"bytesPerSample": "the disk shrank"},
	}}}}
	grew := &results.Run{Storages: []results.Storage{{Name: "vm", Resources: &results.Resources{BytesPerSample: new(1.5)}}}}
	queried := &results.Run{Storages: []results.Storage{{Name: "ro", Query: &results.Query{}}, readBack("vm", 1000, 0)}}
	const noSamples = "the read-back checked no samples"
	tests := []struct {
		name     string
		old, cur *results.Run
		rule     string
		failed   []bool
		outcomes []string
	}{
		{"old checked nothing", nothing, lost, "verify.missingSamples>+0", []bool{true}, []string{"unknown in the old run: " + noSamples}},
		{"old checked nothing, ?ok", nothing, lost, "verify.missingSamples>+0?ok", []bool{false}, []string{"unknown in the old run: " + noSamples + "; passed by ?ok"}},
		{"neither checked anything", nothing, nothing, "verify.missingSamples>+0", []bool{true}, []string{
			"unknown in the old run: " + noSamples + "; unknown in the new run: " + noSamples,
		}},
		{"new checked nothing", checked, nothing, "verify.missingSamples>+0", []bool{true}, []string{"unknown in the new run: " + noSamples}},
		{"new checked nothing, ~noise?ok", checked, nothing, "verify.missingSamples>+0~noise?ok", []bool{false}, []string{"unknown in the new run: " + noSamples + "; passed by ?ok"}},
		{"both known", checked, lost, "verify.missingSamples>+0?ok", []bool{true}, []string{"past the limit"}},
		{"a reason the results give", shrank, grew, "bytesPerSample>+10%", []bool{true}, []string{"unknown in the old run: the disk shrank"}},
		{"a storage not in the old run", checked, both, "prom:verify.missingSamples>+0", []bool{true}, []string{
			"unknown in the old run: the storage is not in it (pair renamed ones with -map old=new)",
		}},
		{"a storage not in the new run", both, checked, "verify.missingSamples>+0", []bool{true, false}, []string{
			"unknown in the new run: the storage is not in it (pair renamed ones with -map old=new)", "within the limit",
		}},
		{"a storage only queried: no write figure", queried, queried, "write.droppedSamples>+0", []bool{false}, []string{"within the limit"}},
		{"a storage only queried: not read back", queried, queried, "verify.missingSamples>+0", []bool{true, false}, []string{
			"unknown in the old run: the storage was not read back; unknown in the new run: the storage was not read back", "within the limit",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := ParseCompareRules("-fail-on", []string{tt.rule}, []string{"vm", "prom"})
			if err != nil {
				t.Fatal(err)
			}
			var failed []bool
			var outcomes []string
			for _, v := range Gate([]*results.Run{tt.old}, tt.cur, rules) {
				failed, outcomes = append(failed, v.Failed), append(outcomes, v.Outcome)
			}
			if diff := cmp.Diff(tt.failed, failed); diff != "" {
				t.Errorf("failed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.outcomes, outcomes); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGateSeveralRuns: with several old runs the verdicts say so, and a figure unknown in
// every one of them fails.
func TestGateSeveralRuns(t *testing.T) {
	olds := []*results.Run{run([]float64{10_000}, nil, nil), run([]float64{10_500}, nil, nil), run([]float64{9_800}, nil, nil)}
	rules, err := ParseCompareRules("-fail-on", []string{"write.achievedSamplesPerSecond<-1%~noise", "query.p99>+20%"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vs := Gate(olds, run([]float64{9_500}, []float64{0.1}, nil), rules)
	want := []string{"past the limit but within the old runs' noise: not a regression", "unknown in the old runs: the storage was not queried"}
	var got []string
	for _, v := range vs {
		got = append(got, v.Outcome)
	}
	if diff := cmp.Diff(want, got); diff != "" || vs[0].Failed || !vs[1].Failed || vs[0].Row.Runs != 3 || *vs[0].Row.Old != 10_000 {
		t.Errorf("verdicts %+v (-want +got):\n%s", vs, diff)
	}
}

// TestParseUnknownOK: "?ok" ends a rule, after ~noise when both are given, and nowhere else.
func TestParseUnknownOK(t *testing.T) {
	got, err := ParseCompareRules("-fail-on", []string{"verify.missingSamples>+0?ok", "p99>+20%~noise?ok", "vm: p99 > +50ms ~noise ?ok"}, []string{"vm"})
	if err != nil {
		t.Fatal(err)
	}
	want := []CompareRule{
		{Expr: "verify.missingSamples>+0?ok", Figure: "verify.missingSamples", Op: ">", UnknownOK: true},
		{Expr: "p99>+20%~noise?ok", Figure: "query.p99", Op: ">", Limit: 20, Percent: true, Noise: true, UnknownOK: true},
		{Expr: "vm: p99 > +50ms ~noise ?ok", Storage: "vm", Figure: "query.p99", Op: ">", Limit: 0.05, Noise: true, UnknownOK: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for expr, msg := range map[string]string{
		"p99>+20%?ok~noise": `change "+20%?ok" is not a percent`,
		"p99>?ok":           `change "" is not a percent`,
		"p99>+20%?ok?ok":    `change "+20%?ok" is not a percent`,
		"p99>+20%?OK":       `change "+20%?OK" is not a percent`,
	} {
		if _, err := ParseCompareRules("-fail-on", []string{expr}, nil); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", expr, err, msg)
		}
	}
}
