package liar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/model/labels"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// TestLiarOTLP: in OTLP, addLabel labels every point (a summary's too) and records the samples
// each becomes, renameJobInstance renames the resource's service attributes, and
// dropHistograms drops exponential histograms; each recorded as the samples it touched.
func TestLiarOTLP(t *testing.T) {
	req := func() pmetricotlp.ExportRequest {
		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "j")
		rm.Resource().Attributes().PutStr("service.instance.id", "i")
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		ts := pcommon.NewTimestampFromTime(time.UnixMilli(1000))
		g := ms.AppendEmpty()
		g.SetName("g")
		dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(1)
		s := ms.AppendEmpty()
		s.SetName("s")
		sdp := s.SetEmptySummary().DataPoints().AppendEmpty()
		sdp.SetTimestamp(ts)
		sdp.QuantileValues().AppendEmpty().SetQuantile(0.5)
		e := ms.AppendEmpty()
		e.SetName("e")
		edp := e.SetEmptyExponentialHistogram().DataPoints().AppendEmpty()
		edp.SetTimestamp(ts)
		return pmetricotlp.NewExportRequestFromMetrics(md)
	}
	for _, tc := range []struct {
		lies  Lies
		total int64 // samples recorded
		check func(res pcommon.Map, ms pmetric.MetricSlice) string
	}{
		{
			lies: Lies{Lie: LieAddLabel, Label: labels.Label{Name: "tenant_id", Value: "t"}}, total: 1 + 3 + 1,
			check: func(_ pcommon.Map, ms pmetric.MetricSlice) string {
				for _, a := range []pcommon.Map{ms.At(0).Gauge().DataPoints().At(0).Attributes(), ms.At(1).Summary().DataPoints().At(0).Attributes(), ms.At(2).ExponentialHistogram().DataPoints().At(0).Attributes()} {
					if v, ok := a.Get("tenant_id"); !ok || v.Str() != "t" {
						return "a point without tenant_id: " + attrString(a)
					}
				}
				return ""
			},
		},
		{
			lies: Lies{Lie: LieRenameJobInstance}, total: 1 + 3 + 1,
			check: func(res pcommon.Map, _ pmetric.MetricSlice) string {
				if got := attrString(res); got != "exported_instance=i,exported_job=j" {
					return "resource " + got
				}
				return ""
			},
		},
		{
			lies: Lies{Lie: LieDropHistograms}, total: 1,
			check: func(_ pcommon.Map, ms pmetric.MetricSlice) string {
				if ms.Len() != 2 || ms.At(0).Name() != "g" || ms.At(1).Name() != "s" {
					return fmt.Sprintf("%d metrics left, want g and s", ms.Len())
				}
				return ""
			},
		},
	} {
		t.Run(string(tc.lies.Lie), func(t *testing.T) {
			l := &Liar{lies: tc.lies, seen: map[string]bool{}}
			body, err := req().MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			out, n, err := l.otlp(newRequest(), body, "")
			if err != nil {
				t.Fatal(err)
			}
			if n != 1+3+1 {
				t.Errorf("%d samples received, want 5", n)
			}
			got := pmetricotlp.NewExportRequest()
			if err := got.UnmarshalProto(out); err != nil {
				t.Fatal(err)
			}
			rm := got.Metrics().ResourceMetrics().At(0)
			if msg := tc.check(rm.Resource().Attributes(), rm.ScopeMetrics().At(0).Metrics()); msg != "" {
				t.Error(msg)
			}
			if total := l.Total(); total != tc.total {
				t.Errorf("recorded %d samples, want %d", total, tc.total)
			}
		})
	}
}

// TestLiarPartialOTLP: written in OTLP, a partial answer (or one after a deletion) leaves out
// series chosen by their labels as the receiver stored them, whichever way it translates
// resource attributes, and the record holds exactly the samples with a number of the series
// left out.
func TestLiarPartialOTLP(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	for _, tc := range []struct {
		lie            Lie
		resourceLabels bool
	}{{LiePartial, false}, {LiePartial, true}, {LieDeleteAfter, false}, {LieDeleteAfter, true}} {
		t.Run(fmt.Sprintf("%s/resourceLabels=%t", tc.lie, tc.resourceLabels), func(t *testing.T) {
			r := storagetest.StartT(t, storagetest.Options{OTLPResourceLabels: tc.resourceLabels})
			l, err := Start(r.URL, Lies{Lie: tc.lie, Share: 0.5, OTLPResourceLabels: tc.resourceLabels})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			httpReq, err := http.NewRequestWithContext(t.Context(), http.MethodPost, l.URL+OTLPPath, bytes.NewReader(partialRequest(t, now)))
			if err != nil {
				t.Fatal(err)
			}
			httpReq.Header.Set("Content-Type", "application/x-protobuf")
			resp, err := http.DefaultClient.Do(httpReq)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			stored, err := r.Series(0, now.UnixMilli())
			if err != nil {
				t.Fatal(err)
			}
			answered := map[string]bool{}
			for _, m := range answer(t, l.URL, `{__name__=~".+"}[1h]`, now) {
				answered[labels.FromMap(m).String()] = true
			}
			want := map[string]int64{} // the samples with a number of each series left out
			for series, samples := range stored {
				if answered[series] {
					continue
				}
				for _, s := range samples {
					if !math.IsNaN(s.V) {
						want[series]++
					}
				}
			}
			got := map[string]int64{}
			for _, told := range l.Told() {
				got[told.Series] += told.N
			}
			if len(want) == 0 || len(answered) == 0 {
				t.Fatalf("%d series left out of %d: want some", len(want), len(stored))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the samples of the series left out (-) and the record (+):\n%s", diff)
			}
		})
	}
}

// answer is the series' labels of a query's answer at time at.
func answer(t *testing.T, base, query string, at time.Time) []map[string]string {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(query) + "&time=" + strconv.FormatInt(at.Unix(), 10))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, s := range a.Data.Result {
		out = append(out, s.Metric)
	}
	return out
}

// partialRequest is an OTLP request of 3 targets, each with a gauge and a counter of 2 points
// a series (the counter's 2 series by a point attribute, cpu) and a summary's point.
func partialRequest(t *testing.T, now time.Time) []byte {
	t.Helper()
	md := pmetric.NewMetrics()
	for _, instance := range []string{"a", "b", "c"} {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "j")
		rm.Resource().Attributes().PutStr("service.instance.id", instance)
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName("tsbench")
		ms := sm.Metrics()
		g := ms.AppendEmpty()
		g.SetName("node_load1")
		s := ms.AppendEmpty()
		s.SetName("node_cpu_seconds")
		s.SetUnit("s")
		sum := s.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		gauge := g.SetEmptyGauge()
		for i, ts := range []time.Time{now.Add(-2 * time.Second), now.Add(-time.Second)} {
			dp := gauge.DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
			dp.SetDoubleValue(float64(i))
			for _, cpu := range []string{"0", "1"} {
				sp := sum.DataPoints().AppendEmpty()
				sp.Attributes().PutStr("cpu", cpu)
				sp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
				sp.SetIntValue(int64(i))
			}
		}
		sdp := ms.AppendEmpty()
		sdp.SetName("rpc_duration_seconds")
		q := sdp.SetEmptySummary().DataPoints().AppendEmpty()
		q.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
		q.SetSum(3)
		q.SetCount(2)
		q.QuantileValues().AppendEmpty().SetQuantile(0.5)
	}
	b, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
