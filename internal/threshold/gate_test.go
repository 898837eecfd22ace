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
// figure unknown in the old run is not compared.
func TestGateFromZero(t *testing.T) {
	zero, five := 0.0, 5.0
	rows := []Row{
		{Storage: "a", Figure: "write.droppedSamples", Old: &zero, New: &five, Flagged: true, Method: "exact"},
		{Storage: "b", Figure: "write.droppedSamples", New: &five, Flagged: true},
	}
	vs := Gate(rows, []CompareRule{{Figure: "write.droppedSamples", Op: ">", Limit: 1000, Percent: true}})
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
			vs := Gate(Compare(tt.old, tt.cur), rules)
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
