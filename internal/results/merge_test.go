package results

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
)

func histOf(t *testing.T, us ...int64) (*hdrhistogram.Histogram, Latency) {
	t.Helper()
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	var mx time.Duration
	for _, v := range us {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		mx = max(mx, time.Duration(v)*time.Microsecond)
	}
	return h, LatencyOf(h, mx)
}

func TestMergeLatencyIsExact(t *testing.T) {
	_, a := histOf(t, 100, 200, 300, 5000)
	_, b := histOf(t, 150, 90_000)
	_, want := histOf(t, 100, 200, 300, 5000, 150, 90_000)
	got, err := MergeLatency(a, b, Latency{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged latency differs from the latency of all values (-want +got):\n%s", diff)
	}
	if _, err := MergeLatency(Latency{P50: new(1.0), Max: new(1.0)}); err == nil {
		t.Error("a latency without its histogram merged")
	}
}

func shardRun(i, n int, lead bool, gen, acked, pending int64) *Run {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	cpu := 0.5
	r := &Run{
		SchemaVersion: SchemaVersion, StartTime: start, EndTime: start.Add(time.Minute),
		Config:    map[string]any{"shard": "x", "thresholds": []any{}},
		Shard:     &Shard{Index: i, Count: n, Lead: lead},
		Workload:  Workload{Targets: 2, SeriesPerTarget: 10, ActiveSeries: 20, StaleMarkers: 3, SeriesCreated: 3, Seed: 1, ScrapeIntervalSeconds: 10},
		Generator: &Generator{CPUCoresMean: &cpu, CPUCoresMax: &cpu, RSSBytesMean: &cpu, RSSBytesMax: &cpu},
		Storages: []Storage{{Name: "vm", Write: &Write{
			GeneratedSamples: gen, AckedSamples: acked, PendingSamples: pending,
			DroppedSamples: map[string]int64{"queue_full": gen - acked - pending}, RequestsByStatus: map[string]int64{"204": 3},
			TargetSamplesPerSecond: 2, Copies: 1,
			Timeline: []WritePoint{{Time: start.Add(10 * time.Second), Acked: acked / 2}, {Time: start.Add(20*time.Second + time.Millisecond), Acked: acked}},
		}, Verify: &Verify{CheckedSamples: 100, CheckedStaleMarkers: 2, Reads: 4, RuleDiffs: []RuleDiff{}}}},
	}
	if lead {
		l := LatencyOf(hdrhistogram.New(1, 3_600_000_000, 3), 0)
		growth := 1000.0
		r.Storages[0].Query = &Query{Executed: 2, OK: 2, LatencySeconds: l, ServiceSeconds: l}
		r.Storages[0].Resources = &Resources{DiskBytesGrowth: &growth}
	}
	return r
}

func TestMergeShards(t *testing.T) {
	runs := []*Run{shardRun(2, 3, false, 30, 25, 5), shardRun(0, 3, true, 10, 10, 0), shardRun(1, 3, false, 20, 20, 0)}
	m, err := Merge(runs)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Storages[0].Write
	if w.GeneratedSamples != 60 || w.AckedSamples != 55 || w.PendingSamples != 5 || w.RequestsByStatus["204"] != 9 || w.TargetSamplesPerSecond != 6 {
		t.Errorf("write sums: %+v", w)
	}
	if ok, _ := w.Balanced(); !ok || len(m.AccountingErrors) != 0 {
		t.Errorf("merged account: balanced %v, errors %v", ok, m.AccountingErrors)
	}
	if len(w.Timeline) != 2 || w.Timeline[1].Acked != 55 || w.Timeline[1].SamplesPerSecs != 28/10.001 {
		t.Errorf("write timeline %+v", w.Timeline)
	}
	if m.Workload.Targets != 6 || m.Workload.ActiveSeries != 60 || m.Workload.StaleMarkers != 9 || m.Merged != 3 || m.Shard != nil {
		t.Errorf("workload %+v merged %d shard %v", m.Workload, m.Merged, m.Shard)
	}
	if got := *m.Generator.CPUCoresMean; got != 1.5 {
		t.Errorf("generator cores %v, want the sum 1.5", got)
	}
	s := m.Storages[0]
	if s.Query == nil || s.Query.Executed != 2 {
		t.Errorf("query %+v, want the lead's", s.Query)
	}
	if s.Resources == nil || *s.Resources.BytesPerSample != 1000.0/55 {
		t.Errorf("resources %+v, want the lead's, bytes per sample over every shard's acks", s.Resources)
	}
	if s.Verify.CheckedSamples != 300 || s.Verify.Reads != 12 || s.Verify.CheckedStaleMarkers != 6 {
		t.Errorf("read-back not summed: %+v", s.Verify)
	}
	if m.Config.(map[string]any)["shard"] != "0/1" {
		t.Errorf("merged config shard %v", m.Config.(map[string]any)["shard"])
	}

	// A shard out of balance is named, and so is the total.
	bad := []*Run{shardRun(0, 2, true, 10, 9, 0), shardRun(1, 2, false, 10, 10, 0)}
	bad[0].Storages[0].Write.DroppedSamples = map[string]int64{}
	m, err = Merge(bad)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.AccountingErrors) != 2 || !strings.HasPrefix(m.AccountingErrors[0], "shard 0/2: vm: generated 10") || !strings.HasPrefix(m.AccountingErrors[1], "all shards: vm: generated 20") {
		t.Errorf("accounting errors %q", m.AccountingErrors)
	}
}

func TestMergeRefusesIncompleteSets(t *testing.T) {
	other := shardRun(1, 3, false, 1, 1, 0)
	other.StartTime = other.StartTime.Add(time.Second)
	for name, tc := range map[string]struct {
		runs []*Run
		want string
	}{
		"missing":   {[]*Run{shardRun(0, 3, true, 1, 1, 0), shardRun(2, 3, false, 1, 1, 0)}, "shard 1/3 missing"},
		"duplicate": {[]*Run{shardRun(0, 2, true, 1, 1, 0), shardRun(1, 2, false, 1, 1, 0), shardRun(1, 2, false, 1, 1, 0)}, "shard 1/2 given twice"},
		"counts":    {[]*Run{shardRun(0, 2, true, 1, 1, 0), shardRun(1, 3, false, 1, 1, 0)}, "shard 1/3 among shards of 2"},
		"unsharded": {[]*Run{{}}, "without a shard"},
		"start":     {[]*Run{shardRun(0, 3, true, 1, 1, 0), other, shardRun(2, 3, false, 1, 1, 0)}, "set one startTime for every shard"},
	} {
		_, err := Merge(tc.runs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
}

// TestCombineSpansKeepsFindings (issue 29, item 1): a span that found the storage's data under
// other labels, combined with another span, still says so; the probes and rules both spans
// asked are counted once; a rule a longer span compared is compared.
func TestCombineSpansKeepsFindings(t *testing.T) {
	span := func(renamed int64, probeSame bool, notCompared ...string) *Verify {
		return &Verify{
			CheckedSamples: 100, RenamedSamples: renamed, Reads: 2, ReadBackVia: "queryAPI",
			LabelChanges: []LabelChange{{From: "job", To: "service_name", Series: 4}},
			Probes: []Probe{
				{Name: "time() is a scalar", Same: true},
				{Name: "millisecond timestamps", Same: probeSame},
			},
			RuleDiffs:        []RuleDiff{{Rule: "HostDown", Detail: "vs prom: 1 series missing"}},
			RulesNotCompared: notCompared,
		}
	}
	one := span(100, true)
	if got, want := one.Verdict(), "stored under other labels (job → service_name): 100 of 100 samples found there"; !strings.HasPrefix(got, want) {
		t.Fatalf("one span: %q, want it to begin %q", got, want)
	}
	c := CombineVerify(span(100, true, "SlowRate", "Week"), span(100, false, "Week"))
	if got, want := c.Verdict(), "stored under other labels (job → service_name): 200 of 200 samples found there"; !strings.HasPrefix(got, want) {
		t.Errorf("two spans: %q, want it to begin %q", got, want)
	}
	if c.ReadBackVia != "queryAPI" {
		t.Errorf("readBackVia %q, want queryAPI", c.ReadBackVia)
	}
	if diff := cmp.Diff([]LabelChange{{From: "job", To: "service_name", Series: 8}}, c.LabelChanges); diff != "" {
		t.Errorf("label changes (-want +got):\n%s", diff)
	}
	if len(c.Probes) != 2 || c.DifferentProbes() != 1 {
		t.Errorf("probes %+v: want each once, the one a span saw differ as different", c.Probes)
	}
	if len(c.RuleDiffs) != 1 {
		t.Errorf("rule differences %+v: want the rule once", c.RuleDiffs)
	}
	if diff := cmp.Diff([]string{"Week"}, c.RulesNotCompared); diff != "" {
		t.Errorf("rules not compared (-want +got):\n%s", diff)
	}

	// Stored nothing in every span: still said, with every span's acks.
	nothing := func() *Verify {
		return &Verify{CheckedSamples: 50, MissingSamples: 50, StoredNothing: &StoredNothing{Protocol: "otlp-http", Hint: "h", Acked: 7}}
	}
	if s := CombineVerify(nothing(), nothing()).StoredNothing; s == nil || s.Acked != 14 {
		t.Errorf("stored nothing %+v, want it kept with 14 acked", s)
	}
	if s := CombineVerify(nothing(), &Verify{CheckedSamples: 50}).StoredNothing; s != nil {
		t.Errorf("stored nothing %+v, but one span found its samples", s)
	}
}

// TestMergeShardsKeepsFindingsAndFreshness (issue 29, item 1): merged shards keep the label
// changes their read-backs found, count each probe once, and keep the lead shard's
// freshness (it alone runs the canary).
func TestMergeShardsKeepsFindingsAndFreshness(t *testing.T) {
	runs := []*Run{shardRun(0, 2, true, 10, 10, 0), shardRun(1, 2, false, 10, 10, 0)}
	for _, r := range runs {
		v := r.Storages[0].Verify
		v.RenamedSamples, v.ReadBackVia = v.CheckedSamples, "queryAPI"
		v.LabelChanges = []LabelChange{{From: "instance", To: "service_instance_id", Series: 3}}
		v.Probes = []Probe{{Name: "time() is a scalar", Same: false}}
	}
	fresh := &Freshness{Written: 39, Acked: 39, AckedSamples: 78}
	runs[0].Storages[0].Freshness = fresh
	m, err := Merge(runs)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Storages[0]
	if got, want := s.Verify.Verdict(), "stored under other labels (instance → service_instance_id): 200 of 200 samples found there"; !strings.HasPrefix(got, want) {
		t.Errorf("verdict %q, want it to begin %q", got, want)
	}
	if n := s.Verify.DifferentProbes(); n != 1 {
		t.Errorf("%d different probes, want 1: each shard asked the same", n)
	}
	if s.Freshness != fresh {
		t.Errorf("freshness %+v, want the lead shard's", s.Freshness)
	}
}

// TestMergeShardsKeepsSampleTypes (issue 29, item 1): merged shards keep what each read back
// of the HA pair, native histograms, exemplars, created timestamps and metadata, added up
// with their verdicts recomputed.
func TestMergeShardsKeepsSampleTypes(t *testing.T) {
	runs := []*Run{shardRun(0, 2, true, 10, 10, 0), shardRun(1, 2, false, 10, 10, 0)}
	for i, r := range runs {
		v := r.Storages[0].Verify
		h := &VerifyHA{Replicas: 2, CheckedScrapes: 10, StoredByReplica: map[string]int64{"a": int64(6 + i), "b": int64(4 - i)}}
		h.SetCounts(HACounts{OneCopy: 10, Switchovers: 1}, "")
		v.HA = h
		v.NativeHistograms = &NativeHistograms{Send: "true", CheckedHistograms: 20, Kept: 20 - int64(i)*5, Missing: int64(i) * 5}
		v.Exemplars = &Exemplars{Percent: 10, Checked: 9, Kept: 9}
		v.Created = &Created{Checked: 5, Kept: 5}
		v.Metadata = &Metadata{Families: 40, Kept: 40, Verdict: "kept"}
	}
	m, err := Merge(runs)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Storages[0].Verify
	if h := v.HA; h == nil || h.CheckedScrapes != 20 || *h.OneCopy != 20 || *h.Switchovers != 2 || h.Stored != HAStoredOne || h.Winner != "a" {
		t.Errorf("HA %+v, want 20 scrapes, one copy each, replica a won", h)
	}
	if n := v.NativeHistograms; n == nil || n.CheckedHistograms != 40 || n.Kept != 35 || n.Missing != 5 || n.Verdict != "partial" {
		t.Errorf("native histograms %+v, want 35 of 40 kept, partial", n)
	}
	if e := v.Exemplars; e == nil || e.Checked != 18 || e.Verdict != "kept" {
		t.Errorf("exemplars %+v, want 18 kept", e)
	}
	if c := v.Created; c == nil || c.Checked != 10 || c.Verdict != "kept" {
		t.Errorf("created %+v, want 10 kept", c)
	}
	if md := v.Metadata; md == nil || md.Families != 40 || md.Verdict != "kept" {
		t.Errorf("metadata %+v, want the storage's 40 families, once", md)
	}
}

// TestSampleCountsAddUp: every sample count of a read-back adds up when shards merge, in
// Verify and in its export check alike, the largest relative error kept; a count added to
// SampleCounts and left out of Add, or of Verify's SampleCounts or AddSampleCounts, fails.
func TestSampleCountsAddUp(t *testing.T) {
	var c SampleCounts
	fields := reflect.ValueOf(&c).Elem()
	for i := range fields.NumField() {
		switch f := fields.Field(i); f.Kind() {
		case reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Float64:
			f.SetFloat(float64(i+1) / 10)
		default:
			t.Fatalf("SampleCounts.%s is a %s: Add knows int64 and float64", fields.Type().Field(i).Name, f.Kind())
		}
	}
	want := c
	for i := range fields.NumField() {
		if f := reflect.ValueOf(&want).Elem().Field(i); f.Kind() == reflect.Int64 {
			f.SetInt(2 * f.Int())
		}
	}
	want.MaxRelativeError = 0.9 // the larger of 0.9 and c's

	m := &Verify{}
	for range 2 {
		v := &Verify{}
		v.AddSampleCounts(c)
		v.Export = &ExportCheck{SampleCounts: c}
		addVerify(m, v)
		c.MaxRelativeError = 0.9
	}
	if diff := cmp.Diff(want, m.SampleCounts()); diff != "" {
		t.Errorf("merged Verify's counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, m.Export.SampleCounts); diff != "" {
		t.Errorf("merged export check's counts (-want +got):\n%s", diff)
	}
}

// TestMergeShardsAddsLimits: the limits each shard's storage named are one list in the merged
// file, the answers that named the same limit added up (they were dropped before).
func TestMergeShardsAddsLimits(t *testing.T) {
	rate := WriteLimit{Limit: "ingestion rate", Family: "Cortex", Value: "25000", Raise: "-distributor.ingestion-rate-limit", Status: 429}
	series := WriteLimit{Limit: "series per metric", Family: "Cortex", Status: 400}
	runs := []*Run{shardRun(0, 2, true, 10, 10, 0), shardRun(1, 2, false, 10, 10, 0)}
	a, b := rate, rate
	a.Requests, b.Requests, series.Requests = 1561, 40, 39
	runs[0].Storages[0].Write.Limits = []WriteLimit{a}
	runs[1].Storages[0].Write.Limits = []WriteLimit{b, series}
	m, err := Merge(runs)
	if err != nil {
		t.Fatal(err)
	}
	want := []WriteLimit{rate, series}
	want[0].Requests = 1601
	if diff := cmp.Diff(want, m.Storages[0].Write.Limits); diff != "" {
		t.Errorf("merged limits (-want +got):\n%s", diff)
	}
	if runs[0].Storages[0].Write.Limits[0].Requests != 1561 {
		t.Error("the merge changed a shard's own limits")
	}
}

// TestMergeGenerators: the shards' generator figures add up; one a shard does not know is
// unknown for the set, with the reason.
func TestMergeGenerators(t *testing.T) {
	got := mergeGenerators([]*Generator{
		{CPUCoresMean: new(0.5), CPUCoresMax: new(1.0), RSSBytesMean: new(100.0), RSSBytesMax: new(200.0)},
		{CPUCoresMean: new(0.25), CPUCoresMax: new(0.5), RSSBytesMean: new(50.0)},
	})
	if got.CPUCoresMean == nil || *got.CPUCoresMean != 0.75 || got.CPUCoresMax == nil || *got.CPUCoresMax != 1.5 ||
		got.RSSBytesMean == nil || *got.RSSBytesMean != 150 {
		t.Errorf("sums %+v: want 0.75 cores mean, 1.5 max, 150 bytes mean", got)
	}
	if got.RSSBytesMax != nil || got.Reasons["rssBytesMax"] != "unknown on at least one shard" || len(got.Reasons) != 1 {
		t.Errorf("rssBytesMax %v, reasons %v: want unknown, with its reason alone", got.RSSBytesMax, got.Reasons)
	}
}
