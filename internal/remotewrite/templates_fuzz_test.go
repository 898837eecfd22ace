package remotewrite

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/workload"
)

// fakeSeries is a workload that names its series, for templates: any labels, checked or not.
type fakeSeries struct {
	names  []string
	series [][]workload.Label
}

func (f fakeSeries) SeriesPerTarget() int                { return len(f.series) }
func (f fakeSeries) TargetLabelNames() []string          { return f.names }
func (f fakeSeries) SeriesLabels(s int) []workload.Label { return f.series[s] }

var (
	fuzzMetricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	fuzzLabelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// FuzzTemplatesMatchPrompb encodes series through templates (StartTarget, AppendSeries) and
// compares the bytes with prompb's marshalling of each series' full label set: its own labels
// (spec: lines of comma-separated name=value) merged by name with the target labels instance,
// job, revision (values: comma-separated). A label set the spec refuses (unsorted own labels,
// a repeated or invalid name, an empty value, no valid __name__) must be counted as invalid
// and left out of the bytes.
func FuzzTemplatesMatchPrompb(f *testing.F) {
	f.Add("__name__=node_cpu_seconds_total,cpu=0,mode=idle\n__name__=up", "host-000001:9100,node_exporter,0", 1.5, int64(1_700_000_000_000))
	f.Add("__name__=b,instance=x,zone=z\n__name__=c,le=+Inf", "h,j,12", 0.0, int64(0))
	f.Add("__name__=d,a=1,jobs=x,rev=y,z=é\nzz=1,__name__=e\n__name__=1bad", "h,,1", -2.0, int64(-5))
	f.Add("__name__=e:rate5m,revisionx=1", "i,j,r", 3.0, int64(1))
	names := []string{"instance", "job", "revision"}
	f.Fuzz(func(t *testing.T, spec, values string, v float64, ts int64) {
		var fs fakeSeries
		fs.names = names
		for line := range strings.SplitSeq(spec, "\n") {
			var own []workload.Label
			for pair := range strings.SplitSeq(line, ",") {
				name, value, _ := strings.Cut(pair, "=")
				own = append(own, workload.Label{Name: name, Value: value})
			}
			fs.series = append(fs.series, own)
		}
		tv := strings.Split(values, ",")
		e := encoderV1{tpl: newTemplates(fs)}
		e.StartTarget(tv)
		var want prompb.WriteRequest
		invalid := 0
		for s, own := range fs.series {
			e.AppendSeries(s, ts, v)
			full, ok := fullLabels(own, names, tv)
			if !ok {
				invalid++
				continue
			}
			want.Timeseries = append(want.Timeseries, prompbSeries(full, ts, v))
		}
		checkAgainstPrompb(t, &e, invalid, &want)
	})
}

// fullLabels merges a series' own labels with the target's, and says whether the result is a
// valid remote-write label set, written from the spec apart from validLabels.
func fullLabels(own []workload.Label, names, values []string) ([]workload.Label, bool) {
	if len(values) != len(names) || !slices.IsSortedFunc(own, func(a, b workload.Label) int { return strings.Compare(a.Name, b.Name) }) {
		return nil, false
	}
	full := slices.Clone(own)
	for i, name := range names {
		full = append(full, workload.Label{Name: name, Value: values[i]})
	}
	slices.SortStableFunc(full, func(a, b workload.Label) int { return strings.Compare(a.Name, b.Name) })
	hasName := false
	for i, l := range full {
		if l.Value == "" || (i > 0 && full[i-1].Name == l.Name) {
			return nil, false
		}
		if l.Name == "__name__" {
			if !fuzzMetricName.MatchString(l.Value) {
				return nil, false
			}
			hasName = true
		} else if !fuzzLabelName.MatchString(l.Name) {
			return nil, false
		}
	}
	return full, hasName
}
