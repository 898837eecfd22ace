package remotewrite

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/workload"
)

// FuzzEncodeMatchesPrompb encodes random series with the encoder and with prompb, the
// generated code Prometheus itself marshals remote-write 1.0 with: the bytes must be the same,
// byte for byte. spec holds series separated by newlines, each a comma-separated list of
// name=value labels; sample i of the request has value v*i and timestamp ts+i*step. A series
// the spec refuses (a name not in the legacy charset, an empty value, labels unsorted or
// repeated, no __name__) must be refused by the encoder, counted and left out of the bytes.
// The same series through templates (StartTarget, AppendSeries) must give the same bytes.
func FuzzEncodeMatchesPrompb(f *testing.F) {
	f.Add("__name__=up,instance=host:9100,job=node", 1.0, int64(1_700_000_000_000), int64(15_000))
	f.Add("__name__=node_cpu_seconds_total,cpu=0,mode=idle\n__name__=node_cpu_seconds_total,cpu=1,mode=idle", 12345.67, int64(1), int64(-1))
	f.Add("__name__=zero", 0.0, int64(0), int64(0))
	f.Add("__name__=neg", math.Copysign(0, -1), int64(-1), int64(math.MaxInt64))
	f.Add("__name__=stale\n__name__=inf,le=+Inf", workload.StaleNaN(), int64(math.MinInt64), int64(1))
	f.Add("Abc=x,__name__=a:b,_x=y", math.Inf(-1), int64(42), int64(7))
	f.Add("job=x\n__name__=1up\n__name__=a,b-c=x\n__name__=a,b=\n__name__=a,z=1,b=2\n__name__=a,b=1,b=2\n__name__=é", 1.0, int64(1), int64(1))
	f.Fuzz(func(t *testing.T, spec string, v float64, ts, step int64) {
		var e encoderV1
		var want prompb.WriteRequest
		var named fakeSeries // the same series through templates, with no target labels
		invalid := 0
		for i, line := range strings.Split(spec, "\n") {
			var labels []workload.Label
			for pair := range strings.SplitSeq(line, ",") {
				name, value, _ := strings.Cut(pair, "=")
				labels = append(labels, workload.Label{Name: name, Value: value})
			}
			named.series = append(named.series, labels)
			sv, st := v*float64(i), ts+int64(i)*step
			e.Append(labels, st, sv)
			if !specValid(labels) {
				invalid++
				continue
			}
			want.Timeseries = append(want.Timeseries, prompbSeries(labels, st, sv))
		}
		wantBytes := checkAgainstPrompb(t, &e, invalid, &want)
		fast := encoderV1{tpl: newTemplates(named)}
		fast.StartTarget(nil)
		for i := range named.series {
			fast.AppendSeries(i, ts+int64(i)*step, v*float64(i))
		}
		if fast.invalid != invalid || !bytes.Equal(fast.buf, wantBytes) {
			t.Fatalf("AppendSeries refused %d series (want %d), bytes:\n got %x\nwant %x", fast.invalid, invalid, fast.buf, wantBytes)
		}
	})
}

// specValid is remote-write 1.0's rule for a series' labels, written from the spec with
// Prometheus' own legacy name checks: a valid __name__, valid label names, no empty value,
// names sorted and unique.
func specValid(labels []workload.Label) bool {
	if !slices.IsSortedFunc(labels, func(a, b workload.Label) int { return strings.Compare(a.Name, b.Name) }) {
		return false
	}
	hasName := false
	for i, l := range labels {
		if l.Value == "" || (i > 0 && labels[i-1].Name == l.Name) || !model.LegacyValidation.IsValidLabelName(l.Name) {
			return false
		}
		if l.Name == model.MetricNameLabel {
			hasName = model.LegacyValidation.IsValidMetricName(l.Value)
			if !hasName {
				return false
			}
		}
	}
	return hasName
}

// prompbSeries is one sample of one series as prompb has it.
func prompbSeries(labels []workload.Label, ts int64, v float64) prompb.TimeSeries {
	series := prompb.TimeSeries{Samples: []prompb.Sample{{Value: v, Timestamp: ts}}}
	for _, l := range labels {
		series.Labels = append(series.Labels, prompb.Label{Name: l.Name, Value: l.Value})
	}
	return series
}

// checkAgainstPrompb fails unless e refused invalid series, kept the rest, and wrote exactly
// prompb's marshalling of want; it returns those bytes.
func checkAgainstPrompb(t *testing.T, e *encoderV1, invalid int, want *prompb.WriteRequest) []byte {
	t.Helper()
	wantBytes, err := want.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if e.invalid != invalid || e.samples != len(want.Timeseries) {
		t.Fatalf("encoder refused %d series and kept %d; want %d refused, %d kept", e.invalid, e.samples, invalid, len(want.Timeseries))
	}
	if !bytes.Equal(e.buf, wantBytes) {
		t.Fatalf("encoder bytes differ from prompb's:\n got %x\nwant %x", e.buf, wantBytes)
	}
	return wantBytes
}
