package conformance

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/query"
)

// hist parses one histogram of the test notation.
func hist(t *testing.T, s string) parser.SequenceValue {
	t.Helper()
	_, vals, err := parser.ParseSeriesDesc("m " + s)
	if err != nil {
		t.Fatal(err)
	}
	return vals[0]
}

// A histogram of whole counts whose count is its buckets' sum goes as an integer histogram;
// any other as a float one.
func TestIntHistogram(t *testing.T) {
	for _, c := range []struct {
		in  string
		int bool
	}{
		{"{{schema:0 count:4 sum:5 z_bucket:1 buckets:[1 2]}}", true},
		{"{{schema:-53 count:3 sum:2 custom_values:[1 2] buckets:[1 2] counter_reset_hint:gauge}}", true},
		{"{{schema:0 count:4.5 sum:5 buckets:[1.5 3]}}", false},
		{"{{schema:1 sum:15 count:10 buckets:[3 2 5 7 9]}}", false}, // count below its buckets' sum
		{"{{count:-4 sum:-4 counter_reset_hint:gauge buckets:[-1 -2 -1]}}", false},
	} {
		fh := hist(t, c.in).Histogram
		h := intHistogram(fh)
		if (h != nil) != c.int {
			t.Errorf("%s: integer %v, want %v", c.in, h != nil, c.int)
			continue
		}
		if h != nil && !h.ToFloat(nil).Equals(fh) {
			t.Errorf("%s: integer histogram %s is another histogram", c.in, h)
		}
	}
}

// A series changing between floats and histograms goes as one run per kind, in time order.
func TestRuns(t *testing.T) {
	h := hist(t, "{{count:1 sum:1}}").Histogram
	ss := []Sample{{T: 0, H: h}, {T: 1, V: 1}, {T: 2, V: 2}, {T: 3, H: h}}
	got := runs(ss)
	if len(got) != 3 || len(got[0]) != 1 || len(got[1]) != 2 || got[2][0].T != 3 {
		t.Errorf("runs %v", got)
	}
}

// Histograms compare as the API writes them: count, sum and non-empty buckets with bounds,
// within the runner's tolerance.
func TestSameHistogram(t *testing.T) {
	want := hist(t, "{{schema:0 count:3 sum:4.5 z_bucket:2 z_bucket_w:0.001 buckets:[0 1]}}")
	got := &query.HistogramPoint{Count: 3, Sum: 4.5000000001, Buckets: []query.Bucket{
		{Boundaries: 3, Lower: -0.001, Upper: 0.001, Count: 2}, {Boundaries: 0, Lower: 1, Upper: 2, Count: 1},
	}}
	if !samePoint(want, point{H: got}) {
		t.Error("the same histogram differs")
	}
	got.Buckets[1].Upper = 4 // schema -1
	if samePoint(want, point{H: got}) {
		t.Error("another bucket bound compares equal")
	}
	if samePoint(want, point{V: 3}) || samePoint(parser.SequenceValue{Value: 3}, point{H: got}) {
		t.Error("a float compares equal to a histogram")
	}
}
