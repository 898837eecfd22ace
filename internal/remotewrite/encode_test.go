package remotewrite

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/workload"
)

func TestEncodeDecodesWithPrompb(t *testing.T) {
	var e encoderV1
	in := []struct {
		labels []workload.Label
		t      int64
		v      float64
	}{
		{[]workload.Label{{Name: "__name__", Value: "node_cpu_seconds_total"}, {Name: "cpu", Value: "0"}, {Name: "instance", Value: "host-000001:9100"}}, 1_700_000_000_123, 12345.67},
		{[]workload.Label{{Name: "__name__", Value: "up"}}, 1, -0.5},
		{[]workload.Label{{Name: "__name__", Value: "big"}, {Name: "le", Value: "+Inf"}}, math.MaxInt64, math.Inf(1)},
		{[]workload.Label{{Name: "__name__", Value: "stale"}}, 2, workload.StaleNaN()},
	}
	for _, s := range in {
		e.Append(s.labels, s.t, s.v)
	}
	compressed := snappy.Encode(nil, e.buf)
	raw, err := snappy.Decode(nil, compressed) // the block format, not the framed stream
	if err != nil {
		t.Fatal(err)
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	if len(req.Timeseries) != len(in) || e.samples != len(in) || e.oldest != 1 {
		t.Fatalf("%d series decoded, %d counted, oldest %d", len(req.Timeseries), e.samples, e.oldest)
	}
	for i, ts := range req.Timeseries {
		var want []prompb.Label
		for _, l := range in[i].labels {
			want = append(want, prompb.Label{Name: l.Name, Value: l.Value})
		}
		if diff := cmp.Diff(want, ts.Labels); diff != "" {
			t.Errorf("series %d labels (-want +got):\n%s", i, diff)
		}
		if len(ts.Samples) != 1 || ts.Samples[0].Timestamp != in[i].t || math.Float64bits(ts.Samples[0].Value) != math.Float64bits(in[i].v) {
			t.Errorf("series %d samples %+v, want t=%d v=%v (bit for bit)", i, ts.Samples, in[i].t, in[i].v)
		}
	}
}

func TestEncodeRefusesInvalidLabels(t *testing.T) {
	bad := [][]workload.Label{
		{{Name: "job", Value: "x"}}, // no __name__
		{{Name: "__name__", Value: "1up"}},
		{{Name: "__name__", Value: "a"}, {Name: "b-c", Value: "x"}},
		{{Name: "__name__", Value: "a"}, {Name: "b", Value: ""}},
		{{Name: "__name__", Value: "a"}, {Name: "z", Value: "1"}, {Name: "b", Value: "2"}},
		{{Name: "__name__", Value: "a"}, {Name: "b", Value: "1"}, {Name: "b", Value: "2"}},
	}
	var e encoderV1
	for _, ls := range bad {
		e.Append(ls, 1, 1)
	}
	e.Append([]workload.Label{{Name: "__name__", Value: "ok:rate5m"}, {Name: "_x", Value: "y"}}, 1, 1)
	if e.invalid != len(bad) || e.samples != 1 {
		t.Errorf("invalid %d samples %d, want %d and 1", e.invalid, e.samples, len(bad))
	}
}

func TestEncodeDoesNotAllocate(t *testing.T) {
	var e encoderV1
	labels := []workload.Label{{Name: "__name__", Value: "node_load1"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}}
	e.Append(labels, 1, 1)
	allocs := testing.AllocsPerRun(1000, func() {
		if e.samples > 500 {
			e.reset()
		}
		e.Append(labels, 1_700_000_000_000, 0.42)
	})
	if allocs > 0 {
		t.Errorf("Append allocates %.2f times per sample", allocs)
	}
}

// kindsProfile has every shape kind, labels sorted before, between and after the target
// labels (instance, job, replica, revision), a label named like a target label (replaced by
// it), and a value that is exactly 0 at times (a gauge from 0 quantized to 1).
const kindsProfile = `{"source":"test","series":[
{"name":"a_total","labels":[{"name":"cpu","value":"0"},{"name":"mode","value":"idle"}],"type":"counter","shape":{"kind":"counter","value":1,"rate":2,"resolution":0.01}},
{"name":"b","labels":[{"name":"instance","value":"profile's"},{"name":"zone","value":"z"}],"type":"gauge","shape":{"kind":"gauge","min":0,"max":1,"periodSeconds":60,"resolution":1}},
{"name":"c","labels":[{"name":"le","value":"+Inf"}],"type":"histogram","shape":{"kind":"constant","value":0}},
{"name":"d","labels":[{"name":"a","value":"1"},{"name":"jobs","value":"x"},{"name":"rev","value":"y"},{"name":"z","value":"é"}],"type":"summary","shape":{"kind":"nan"}},
{"name":"e:rate5m","type":"untyped","shape":{"kind":"gauge","min":-5,"max":5,"periodSeconds":7,"noise":0.5}}]}`

// labelsOnly hides the encoder's fast path: Scrape then gives every label of every sample.
type labelsOnly struct{ e *encoderV1 }

func (l labelsOnly) Append(labels []workload.Label, t int64, v float64) { l.e.Append(labels, t, v) }

// prompbRequest collects samples into the request prompb marshals.
type prompbRequest struct{ req prompb.WriteRequest }

func (p *prompbRequest) Append(labels []workload.Label, t int64, v float64) {
	ts := prompb.TimeSeries{Samples: []prompb.Sample{{Value: v, Timestamp: t}}}
	for _, l := range labels {
		ts.Labels = append(ts.Labels, prompb.Label{Name: strings.Clone(l.Name), Value: strings.Clone(l.Value)}) // labels reuse the generator's buffers
	}
	p.req.Timeseries = append(p.req.Timeseries, ts)
}

// TestEncodeEqualsPrompb scrapes every series kind of a generator, with churn (so staleness
// markers), replicas and the start at t=0, through both paths of the encoder, and compares
// the bytes with prompb's marshalling of the same request.
func TestEncodeEqualsPrompb(t *testing.T) {
	p, err := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(kindsProfile)}}, "p.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		opts    workload.Options
		scrapes int64
	}{
		{"plain", workload.Options{Hosts: 3, Start: time.UnixMilli(1_700_000_000_000)}, 3},
		{"replicas and churn", workload.Options{Hosts: 4, Replicas: 3, ChurnPercent: 50, ChurnInterval: time.Second, Start: time.UnixMilli(1_700_000_000_000)}, 6},
		{"epoch start: timestamp 0 left out", workload.Options{Hosts: 2, Start: time.UnixMilli(0), Job: "j"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Seed, tc.opts.ScrapeInterval = 7, time.Second
			g, err := workload.New(p, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			fast := encoderV1{tpl: newTemplates(g)}
			var slow encoderV1
			var want prompbRequest
			stale := 0
			for target := range g.Targets() {
				for k := range tc.scrapes {
					_, n1 := g.Scrape(&fast, target, k)
					g.Scrape(labelsOnly{&slow}, target, k)
					g.Scrape(&want, target, k)
					stale += n1
				}
			}
			if tc.opts.ChurnPercent > 0 && stale == 0 {
				t.Fatal("churn made no staleness marker: the case tests nothing")
			}
			wantBytes, err := want.req.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			for name, e := range map[string]*encoderV1{"AppendSeries": &fast, "Append": &slow} {
				if e.invalid != 0 || e.samples != len(want.req.Timeseries) {
					t.Errorf("%s: %d samples, %d invalid, want %d and 0", name, e.samples, e.invalid, len(want.req.Timeseries))
				}
				if diff := cmp.Diff(wantBytes, e.buf); diff != "" {
					t.Errorf("%s: bytes differ from prompb's (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// TestEncodeSampleEdgesEqualPrompb covers values and timestamps a generator seldom makes:
// zeros (left out, as proto3 does), negative zero, NaNs, infinities, extreme timestamps.
func TestEncodeSampleEdgesEqualPrompb(t *testing.T) {
	labels := []workload.Label{{Name: "__name__", Value: "m"}, {Name: "l", Value: "v"}}
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1.5, math.NaN(), workload.StaleNaN(), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64} {
		for _, ts := range []int64{0, 1, 127, 128, -1, math.MinInt64, math.MaxInt64} {
			t.Run(fmt.Sprintf("v=%v/t=%d", v, ts), func(t *testing.T) {
				var e encoderV1
				e.Append(labels, ts, v)
				var want prompbRequest
				want.Append(labels, ts, v)
				b, err := want.req.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(b, e.buf); diff != "" {
					t.Errorf("(-prompb +encoder):\n%s", diff)
				}
			})
		}
	}
}

// TestTemplatesRefuseInvalidLabels: a profile made in code (not loaded, so not validated)
// with an invalid series, and a target with an empty value, are counted as invalid by the
// fast path as by Append, and the valid series still encode.
func TestTemplatesRefuseInvalidLabels(t *testing.T) {
	p := &workload.Profile{Series: []workload.Series{
		{Name: "ok", Shape: workload.Shape{Kind: workload.Constant, Value: 1}},
		{Name: "1bad", Shape: workload.Shape{Kind: workload.Constant, Value: 1}},
		{Name: "m", Labels: []workload.Label{{Name: "b-c", Value: "x"}}, Shape: workload.Shape{Kind: workload.Constant, Value: 1}},
		{Name: "m", Labels: []workload.Label{{Name: "e", Value: ""}}, Shape: workload.Shape{Kind: workload.Constant, Value: 1}},
	}}
	g, err := workload.New(p, workload.Options{Seed: 1, Hosts: 1, ScrapeInterval: time.Second, Start: time.UnixMilli(1000)})
	if err != nil {
		t.Fatal(err)
	}
	fast := encoderV1{tpl: newTemplates(g)}
	var slow encoderV1
	g.Scrape(&fast, 0, 0)
	g.Scrape(labelsOnly{&slow}, 0, 0)
	if fast.invalid != 3 || fast.samples != 1 || slow.invalid != 3 || slow.samples != 1 {
		t.Errorf("fast %d invalid %d samples, slow %d and %d: want 3 and 1", fast.invalid, fast.samples, slow.invalid, slow.samples)
	}
	if diff := cmp.Diff(slow.buf, fast.buf); diff != "" {
		t.Errorf("(-Append +AppendSeries):\n%s", diff)
	}
	fast.reset()
	fast.StartTarget([]string{"host", "", "0"}) // an empty job
	fast.AppendSeries(0, 1, 1)
	if fast.invalid != 4 || fast.samples != 0 {
		t.Errorf("a target with an empty value: %d invalid, %d samples, want 4 and 0", fast.invalid, fast.samples)
	}
}

func TestAppendSeriesDoesNotAllocate(t *testing.T) {
	p, err := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(kindsProfile)}}, "p.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := workload.New(p, workload.Options{Seed: 1, Hosts: 1, ScrapeInterval: time.Second, Start: time.UnixMilli(1000)})
	if err != nil {
		t.Fatal(err)
	}
	e := encoderV1{tpl: newTemplates(g)}
	g.Scrape(&e, 0, 0)
	allocs := testing.AllocsPerRun(1000, func() {
		if e.samples > 500 {
			e.reset()
		}
		e.StartTarget([]string{"host-000001:9100", "node_exporter", "0"})
		e.AppendSeries(0, 1_700_000_000_000, 0.42)
	})
	if allocs > 0 {
		t.Errorf("AppendSeries allocates %.2f times per sample", allocs)
	}
}

// TestAppendSeriesTimesEqualAppend: AppendSeries keeps the last timestamp's encoding; times
// that change, repeat, go back, or are 0 (left out) encode as Append encodes them.
func TestAppendSeriesTimesEqualAppend(t *testing.T) {
	tpl := newTemplates(fakeSeries{names: []string{"instance"}, series: [][]workload.Label{{{Name: "__name__", Value: "m"}}}})
	fast := encoderV1{tpl: tpl}
	var slow encoderV1
	fast.StartTarget([]string{"h"})
	for _, ts := range []int64{0, 5, 5, 0, math.MaxInt64, -1, 127, 128, 0} {
		for _, v := range []float64{0, 1} {
			fast.AppendSeries(0, ts, v)
			slow.Append([]workload.Label{{Name: "__name__", Value: "m"}, {Name: "instance", Value: "h"}}, ts, v)
		}
	}
	if diff := cmp.Diff(slow.buf, fast.buf); diff != "" {
		t.Errorf("(-Append +AppendSeries):\n%s", diff)
	}
}
