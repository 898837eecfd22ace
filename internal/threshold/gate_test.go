package threshold

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
