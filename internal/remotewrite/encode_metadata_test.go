package remotewrite

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang/snappy"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// metaSeries are a counter, a gauge without help, a histogram's parts and a summary's.
var metaSeries = []workload.Series{
	{Name: "node_cpu_seconds_total", Type: "counter", Help: "Seconds the CPUs spent in each mode.", Unit: "seconds"},
	{Name: "node_load1", Type: "gauge"},
	{Name: "req_seconds_bucket", Type: "histogram", Labels: []workload.Label{{Name: "le", Value: "1"}}, Help: "Request time.", Unit: "seconds"},
	{Name: "req_seconds_count", Type: "histogram", Help: "Request time.", Unit: "seconds"},
	{Name: "req_seconds_sum", Type: "histogram", Help: "Request time.", Unit: "seconds"},
	{Name: "gc_seconds", Type: "summary", Labels: []workload.Label{{Name: "quantile", Value: "0.5"}}, Help: "GC pauses."},
	{Name: "gc_seconds_count", Type: "summary", Help: "GC pauses."},
	{Name: "up", Type: "untyped", Help: "Up."},
}

// TestMetadataRequestMatchesPrompb: the metadata-only request is, byte for byte, what the
// Prometheus module's prompb marshals, one entry per family.
func TestMetadataRequestMatchesPrompb(t *testing.T) {
	got := appendMetadataRequest(nil, newMetadata(metaSeries).families())
	want, err := (&prompb.WriteRequest{Metadata: []prompb.MetricMetadata{
		{Type: prompb.MetricMetadata_SUMMARY, MetricFamilyName: "gc_seconds", Help: "GC pauses."},
		{Type: prompb.MetricMetadata_COUNTER, MetricFamilyName: "node_cpu_seconds_total", Help: "Seconds the CPUs spent in each mode.", Unit: "seconds"},
		{Type: prompb.MetricMetadata_GAUGE, MetricFamilyName: "node_load1"},
		{Type: prompb.MetricMetadata_HISTOGRAM, MetricFamilyName: "req_seconds", Help: "Request time.", Unit: "seconds"},
		{Type: prompb.MetricMetadata_UNKNOWN, MetricFamilyName: "up", Help: "Up."},
	}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		var dec prompb.WriteRequest
		err := dec.Unmarshal(got)
		t.Errorf("bytes differ from prompb's (decode err %v):\n got %x\nwant %x\n%+v", err, got, want, dec.Metadata)
	}
}

// TestMetadataRequestDoesNotAllocate: once its buffer has grown, encoding allocates nothing.
func TestMetadataRequestDoesNotAllocate(t *testing.T) {
	fams := newMetadata(metaSeries).families()
	buf := appendMetadataRequest(nil, fams)
	if allocs := testing.AllocsPerRun(100, func() { buf = appendMetadataRequest(buf[:0], fams) }); allocs > 0 {
		t.Errorf("appendMetadataRequest allocates %.2f times", allocs)
	}
}

// metadataTap counts the metadata-only requests and hands the others to next.
type metadataTap struct {
	next     http.Handler
	requests int
	families []string
	samples  int // samples in metadata requests: must stay 0
}

func (m *metadataTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	raw, _ := snappy.Decode(nil, body)
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err == nil && len(req.Metadata) > 0 {
		m.requests++
		m.families = m.families[:0]
		for _, md := range req.Metadata {
			m.families = append(m.families, md.MetricFamilyName+"/"+md.Type.String())
		}
		m.samples += len(req.Timeseries)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	m.next.ServeHTTP(w, r)
}

// With sendMetadata, remote write 1.0 sends the metadata at the start and every minute, in
// requests of their own counted apart: the sample account and its requests are as without.
func TestSendMetadataCountedApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := memReceiver(t, nil)
		tap := &metadataTap{next: rc}
		w := newWriter(t, map[string]config.Storage{"s": writeTo("http://s.test")}, nil, func(c *config.Config) {
			c.TargetsCount, c.ScrapeInterval, c.SendMetadata = 2, time.Second, true
		})
		inMemory(w, memNet{"s.test": tap})
		runFor(t, w, 61*time.Second) // metadata at 0 s and 60 s
		r := w.Results("s")
		if r.Metadata == nil {
			t.Fatal("no metadata account")
		}
		if diff := cmp.Diff(map[string]int64{"204": 2}, r.Metadata.RequestsByStatus); diff != "" {
			t.Errorf("metadata requests (-want +got):\n%s", diff)
		}
		if tap.requests != 2 || tap.samples != 0 || r.Metadata.BytesSent == 0 || r.Metadata.Families != 3 {
			t.Errorf("receiver saw %d metadata requests with %d series; account %+v", tap.requests, tap.samples, r.Metadata)
		}
		if diff := cmp.Diff([]string{"c_total/COUNTER", "g/GAUGE", "n/SUMMARY"}, tap.families); diff != "" {
			t.Errorf("families (-want +got):\n%s", diff)
		}
		if r.AckedSamples != rc.samples || r.AckedSamples != r.GeneratedSamples || r.RequestsByStatus["204"] != int64(rc.requests) {
			t.Errorf("sample account %+v; receiver %d samples in %d requests", r, rc.samples, rc.requests)
		}
	})
}
