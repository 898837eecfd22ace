package threshold

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Sizes are read as Prometheus' units package reads them, strictly: KiB, MiB, ... are powers
// of 1024, kB, KB, MB, ... powers of 1000; decimals and sums ("1GiB512MiB") as in durations.
func TestParseValueSizes(t *testing.T) {
	good := map[string]float64{
		"512MiB": 512 << 20, "1.5GiB": 1.5 * (1 << 30), "1GB": 1e9, "512MB": 512e6, "1kB": 1e3, "1KB": 1e3,
		"7B": 7, "2TiB": 2 << 40, "1PB": 1e15, "1GiB512MiB": 1536 << 20, "-1KiB": -1024,
		"1e5": 1e5, "2s": 2, "500ms": 0.5, "Inf": math.Inf(1),
	}
	for in, want := range good {
		got, err := parseValue(in)
		if err != nil || got != want {
			t.Errorf("parseValue(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1kiB", "1Kb", "MB", "1 MB", "1XB", "1GB2", "NaN", "nan", "10EiB"} {
		if v, err := parseValue(in); err == nil {
			t.Errorf("parseValue(%q) = %v, want an error", in, v)
		}
	}
}

// FuzzParseThresholds: any expression either fails with an error naming its index and
// expression, or parses to a known figure, operator and storage, a value that is a number
// (never NaN, which no comparison would pass or fail honestly), and parses the same again when
// written back from its parts.
func FuzzParseThresholds(f *testing.F) {
	for _, s := range []string{
		"query.p99 < 2s", "write.droppedSamples == 0", "vm: verify.changedValues == 0",
		"resources.rssBytesMax <= 1.5GiB", "write.achievedSamplesPerSecond >= 1e5", "query.p99<2s",
		"vm:verify.readErrors==0", "resources.diskBytesEnd < 512MB", "query.p99 <=> 2s", "query.p99 < NaN",
		"mimir: query.p99 < 1s", ":", "query.p99 < 1GiB512MiB", "write.bytesSent > -0x1p-2",
	} {
		f.Add(s)
	}
	storages := []string{"prom", "vm"}
	figures := FigureNames()
	f.Fuzz(func(t *testing.T, expr string) {
		ts, err := Parse([]string{expr}, storages)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "thresholds[0]: ") || len(ts) != 0 {
				t.Fatalf("error %q, %d parsed: want one error naming thresholds[0], nothing parsed", err, len(ts))
			}
			return
		}
		th := ts[0]
		if !slices.Contains(figures, th.Figure) || !slices.Contains([]string{"<", "<=", ">", ">=", "==", "!="}, th.Op) ||
			(th.Storage != "" && !slices.Contains(storages, th.Storage)) || math.IsNaN(th.Value) {
			t.Fatalf("%q parsed to %+v", expr, th)
		}
		again := th.Figure + " " + th.Op + " " + FormatFigure("", th.Value)
		if th.Storage != "" {
			again = th.Storage + ": " + again
		}
		back, err := Parse([]string{again}, storages)
		if err != nil {
			t.Fatalf("%q parsed to %+v, but its parts written back, %q, do not parse: %v", expr, th, again, err)
		}
		th.Expr = again
		if diff := cmp.Diff(th, back[0], cmp.Comparer(func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-5*math.Abs(a) })); diff != "" {
			t.Fatalf("%q and %q parse differently (-first +again):\n%s", expr, again, diff)
		}
	})
}

// FuzzParseCompareRules: any rule either fails with an error naming its key, index and
// expression, or parses to a known figure, < or >, a storage of the list and a limit that is a
// number, and parses the same again when written back from its parts (~noise and ?ok kept).
func FuzzParseCompareRules(f *testing.F) {
	for _, s := range []string{
		"query.p99>+20%", "vm: bytesPerSample > +10%", "achievedSamplesPerSecond<-5%", "query.p99>+50ms",
		"rssBytesMax>+64MiB", "query.p99>+20%~noise", "p99 > +1% ~noise", "query.p99>=+1%", "query.p99>+NaN%",
		"mimir: p99>+1%", "Samples>+1%", "query.p99>~noise", "write.droppedSamples>+0",
		"verify.missingSamples>+0?ok", "p99>+20%~noise?ok", "p99 > +1% ~noise ?ok", "p99>+1%?ok~noise", "p99>?ok",
	} {
		f.Add(s)
	}
	storages := []string{"prom", "vm"}
	figures := FigureNames()
	f.Fuzz(func(t *testing.T, expr string) {
		rules, err := ParseCompareRules("-fail-on", []string{expr}, storages)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "-fail-on[0]: ") || len(rules) != 0 {
				t.Fatalf("error %q, %d parsed: want one error naming -fail-on[0], nothing parsed", err, len(rules))
			}
			return
		}
		r := rules[0]
		if !slices.Contains(figures, r.Figure) || (r.Op != "<" && r.Op != ">") ||
			(r.Storage != "" && !slices.Contains(storages, r.Storage)) || math.IsNaN(r.Limit) {
			t.Fatalf("%q parsed to %+v", expr, r)
		}
		again := r.Figure + r.Op + strconv.FormatFloat(r.Limit, 'g', -1, 64)
		if r.Percent {
			again += "%"
		}
		if r.Noise {
			again += "~noise"
		}
		if r.UnknownOK {
			again += "?ok"
		}
		if r.Storage != "" {
			again = r.Storage + ":" + again
		}
		back, err := ParseCompareRules("-fail-on", []string{again}, storages)
		if err != nil {
			t.Fatalf("%q parsed to %+v, but its parts written back, %q, do not parse: %v", expr, r, again, err)
		}
		r.Expr = again
		if diff := cmp.Diff(r, back[0]); diff != "" {
			t.Fatalf("%q and %q parse differently (-first +again):\n%s", expr, again, diff)
		}
	})
}
