package remotewrite

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/workload"
)

// testMetadata is a profile's worth of types, with help and unit on one family.
func testMetadata() metadata {
	return newMetadata([]workload.Series{
		{Name: "node_cpu_seconds_total", Type: "counter", Help: "Seconds the CPUs spent in each mode.", Unit: "seconds"},
		{Name: "node_load1", Type: "gauge", Help: "1m load average."},
		{Name: "go_gc_duration_seconds", Labels: []workload.Label{{Name: "quantile", Value: "0.5"}}, Type: "summary"},
		{Name: "go_gc_duration_seconds_count", Type: "summary"},
		{Name: "go_gc_duration_seconds_sum", Type: "summary"},
		{Name: "req_seconds_bucket", Labels: []workload.Label{{Name: "le", Value: "+Inf"}}, Type: "histogram"},
		{Name: "req_seconds_count", Type: "histogram"},
		{Name: "req_seconds_sum", Type: "histogram"},
		{Name: "some_untyped", Type: "untyped"},
	})
}

func sortedLabels(ls []workload.Label) []workload.Label {
	slices.SortFunc(ls, func(a, b workload.Label) int { return strings.Compare(a.Name, b.Name) })
	return ls
}

type testSample struct {
	labels []workload.Label
	t      int64
	v      float64
}

func TestEncodeV2DecodesWithWritev2(t *testing.T) {
	e := newEncoderV2(testMetadata(), nil)
	target := func(name string, extra ...workload.Label) []workload.Label {
		return sortedLabels(append(append([]workload.Label{{Name: "__name__", Value: name}}, extra...),
			workload.Label{Name: "instance", Value: "host-000001:9100"}, workload.Label{Name: "job", Value: "node_exporter"}))
	}
	in := []testSample{
		{target("node_cpu_seconds_total", workload.Label{Name: "cpu", Value: "0"}), 1_700_000_000_123, 12345.67},
		{target("node_load1"), 1_700_000_000_123, -0.5},
		{target("go_gc_duration_seconds", workload.Label{Name: "quantile", Value: "0.5"}), 1, math.NaN()},
		{target("req_seconds_count"), math.MaxInt64, math.Inf(1)},
		{target("some_untyped"), 2, workload.StaleNaN()},
		{target("not_in_profile"), 3, 0},
	}
	// Two requests, so the second is built over a reset table.
	for round := range 2 {
		for _, s := range in {
			e.Append(s.labels, s.t, s.v)
		}
		var req writev2.Request
		if err := req.Unmarshal(e.body()); err != nil {
			t.Fatal(err)
		}
		if req.Symbols[0] != "" || e.samples != len(in) || e.oldest != 1 || len(req.Timeseries) != len(in) {
			t.Fatalf("round %d: symbols %q, %d series decoded, %d counted, oldest %d", round, req.Symbols, len(req.Timeseries), e.samples, e.oldest)
		}
		seen := map[string]bool{}
		for _, s := range req.Symbols {
			if seen[s] {
				t.Errorf("symbol %q twice", s)
			}
			seen[s] = true
		}
		wantMeta := []writev2.Metadata{
			{Type: writev2.Metadata_METRIC_TYPE_COUNTER},
			{Type: writev2.Metadata_METRIC_TYPE_GAUGE},
			{Type: writev2.Metadata_METRIC_TYPE_SUMMARY},
			{Type: writev2.Metadata_METRIC_TYPE_HISTOGRAM},
			{},
			{},
		}
		wantHelp := []string{"Seconds the CPUs spent in each mode.", "1m load average.", "", "", "", ""}
		wantUnit := []string{"seconds", "", "", "", "", ""}
		for i, ts := range req.Timeseries {
			var got []workload.Label
			for j := 0; j+1 < len(ts.LabelsRefs); j += 2 {
				got = append(got, workload.Label{Name: req.Symbols[ts.LabelsRefs[j]], Value: req.Symbols[ts.LabelsRefs[j+1]]})
			}
			if diff := cmp.Diff(in[i].labels, got); diff != "" {
				t.Errorf("series %d labels (-want +got):\n%s", i, diff)
			}
			if len(ts.Samples) != 1 || ts.Samples[0].Timestamp != in[i].t || math.Float64bits(ts.Samples[0].Value) != math.Float64bits(in[i].v) || ts.Samples[0].StartTimestamp != 0 {
				t.Errorf("series %d samples %+v, want t=%d v=%v (bit for bit)", i, ts.Samples, in[i].t, in[i].v)
			}
			if ts.Metadata.Type != wantMeta[i].Type || req.Symbols[ts.Metadata.HelpRef] != wantHelp[i] || req.Symbols[ts.Metadata.UnitRef] != wantUnit[i] {
				t.Errorf("series %d metadata %+v (help %q unit %q), want type %v help %q unit %q", i, ts.Metadata,
					req.Symbols[ts.Metadata.HelpRef], req.Symbols[ts.Metadata.UnitRef], wantMeta[i].Type, wantHelp[i], wantUnit[i])
			}
		}
		e.reset()
	}
}

func TestEncodeV2RefusesInvalidLabels(t *testing.T) {
	e := newEncoderV2(testMetadata(), nil)
	e.Append([]workload.Label{{Name: "__name__", Value: "a"}, {Name: "b-c", Value: "x"}}, 1, 1)
	e.Append([]workload.Label{{Name: "job", Value: "x"}}, 1, 1)
	if e.invalid != 2 || e.samples != 0 {
		t.Errorf("invalid %d samples %d, want 2 and 0", e.invalid, e.samples)
	}
}

func TestEncodeV2DoesNotAllocate(t *testing.T) {
	e := newEncoderV2(testMetadata(), nil)
	labels := []workload.Label{{Name: "__name__", Value: "node_cpu_seconds_total"}, {Name: "cpu", Value: "0"}, {Name: "instance", Value: "host-000001:9100"}, {Name: "job", Value: "node_exporter"}}
	other := []workload.Label{{Name: "__name__", Value: "node_load1"}, {Name: "instance", Value: "host-000002:9100"}, {Name: "job", Value: "node_exporter"}}
	for range 600 { // grow the buffers and the map first
		e.Append(labels, 1, 1)
		e.Append(other, 1, 1)
	}
	e.reset()
	allocs := testing.AllocsPerRun(1000, func() {
		if e.samples > 500 {
			e.body()
			e.reset()
		}
		e.Append(labels, 1_700_000_000_000, 0.42)
		e.Append(other, 1_700_000_000_000, 0.42)
	})
	if allocs > 0 {
		t.Errorf("Append allocates %.2f times per sample", allocs/2)
	}
}

// decodedV2 is a 2.0 request with every reference resolved: per series its labels, samples
// and metadata strings, so two encodings with their symbols in another order compare equal.
type decodedV2 struct {
	Labels     []workload.Label
	Samples    []writev2.Sample
	Type       writev2.Metadata_MetricType
	Help, Unit string
}

func decodeV2(t *testing.T, body []byte) []decodedV2 {
	t.Helper()
	var req writev2.Request
	if err := req.Unmarshal(body); err != nil {
		t.Fatal(err)
	}
	var out []decodedV2
	for _, ts := range req.Timeseries {
		d := decodedV2{Samples: ts.Samples, Type: ts.Metadata.Type, Help: req.Symbols[ts.Metadata.HelpRef], Unit: req.Symbols[ts.Metadata.UnitRef]}
		for j := 0; j+1 < len(ts.LabelsRefs); j += 2 {
			d.Labels = append(d.Labels, workload.Label{Name: req.Symbols[ts.LabelsRefs[j]], Value: req.Symbols[ts.LabelsRefs[j+1]]})
		}
		out = append(out, d)
	}
	return out
}

// labelsOnlyV2 hides the 2.0 encoder's fast path: Scrape then gives every label.
type labelsOnlyV2 struct{ e *encoderV2 }

func (l labelsOnlyV2) Append(labels []workload.Label, t int64, v float64) { l.e.Append(labels, t, v) }

// SetCreated passes the target's process start on, as the writer's labelsAppender does.
func (l labelsOnlyV2) SetCreated(ms int64) { l.e.SetCreated(ms) }

// The fast path (prepared series) encodes what the labels path does, over requests that
// end within a target's scrape, churn and replicas included.
func TestEncodeV2SeriesPathMatchesLabelsPath(t *testing.T) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	profile.Series[0].Help, profile.Series[0].Unit = "help of the first", "seconds"
	gen, err := workload.New(profile, workload.Options{
		Seed: 3, Start: time.UnixMilli(1_700_000_000_000), Hosts: 3, Replicas: 2,
		ScrapeInterval: 10 * time.Second, ChurnPercent: 50, ChurnInterval: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	meta := newMetadata(profile.Series)
	fast, slow := newEncoderV2(meta, newV2Templates(gen, meta)), newEncoderV2(meta, nil)
	var got, want []decodedV2
	for k := range int64(3) {
		for target := range gen.Targets() {
			gen.Scrape(fast, target, k)
			gen.Scrape(labelsOnlyV2{slow}, target, k)
			if fast.samples >= 700 { // mid-scrape, as the writer flushes: the next target's refs are redone
				got, want = append(got, decodeV2(t, fast.body())...), append(want, decodeV2(t, slow.body())...)
				fast.reset()
				slow.reset()
			}
		}
	}
	got, want = append(got, decodeV2(t, fast.body())...), append(want, decodeV2(t, slow.body())...)
	if len(want) == 0 || fast.invalid != slow.invalid {
		t.Fatalf("%d series, invalid %d and %d", len(want), fast.invalid, slow.invalid)
	}
	opt := cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
	if diff := cmp.Diff(want, got, opt); diff != "" {
		t.Errorf("series path (-labels path +series path):\n%s", diff)
	}
}

func TestEncodeV2SeriesDoesNotAllocate(t *testing.T) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(profile, workload.Options{Seed: 1, Start: time.UnixMilli(1_700_000_000_000), Hosts: 2, ScrapeInterval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	meta := newMetadata(profile.Series)
	e := newEncoderV2(meta, newV2Templates(gen, meta))
	values := []string{"host-000001:9100", "node_exporter", "0"}
	e.StartTarget(values)
	for s := range gen.SeriesPerTarget() {
		e.AppendSeries(s, 1, 1)
	}
	e.reset()
	s := 0
	allocs := testing.AllocsPerRun(2000, func() {
		if s == 0 {
			if e.samples > 2000 {
				e.body()
				e.reset()
			}
			e.StartTarget(values)
		}
		e.AppendSeries(s, 1_700_000_000_000, 0.42)
		s = (s + 1) % gen.SeriesPerTarget()
	})
	if allocs > 0 {
		t.Errorf("AppendSeries allocates %.2f times per sample", allocs)
	}
}
