package remotewrite

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// histogramProfileJSON is one classic histogram family beside a gauge.
const histogramProfileJSON = `{"source":"test","series":[
{"name":"load","type":"gauge","shape":{"kind":"gauge","max":4,"periodSeconds":60}},
{"name":"req_seconds_bucket","labels":[{"name":"le","value":"+Inf"}],"type":"histogram","shape":{"kind":"counter","value":4000,"rate":40,"resolution":1}},
{"name":"req_seconds_bucket","labels":[{"name":"le","value":"0.1"}],"type":"histogram","shape":{"kind":"counter","value":1000,"rate":10,"resolution":1}},
{"name":"req_seconds_bucket","labels":[{"name":"le","value":"0.5"}],"type":"histogram","shape":{"kind":"counter","value":2500,"rate":25,"resolution":1}},
{"name":"req_seconds_bucket","labels":[{"name":"le","value":"2.5"}],"type":"histogram","shape":{"kind":"counter","value":3800,"rate":38,"resolution":1}},
{"name":"req_seconds_count","type":"histogram","shape":{"kind":"counter","value":4000,"rate":40,"resolution":1}},
{"name":"req_seconds_sum","type":"histogram","shape":{"kind":"counter","value":900,"rate":9,"resolution":0.001}}]}`

// mixed keeps what the generator appended, floats and native histograms in order.
type mixed struct {
	samples []testSample
	hists   []testHistogram
	order   []bool // true: the next of hists
}

type testHistogram struct {
	labels []workload.Label
	t      int64
	h      workload.Histogram
}

func cloneLabels(ls []workload.Label) []workload.Label {
	own := make([]workload.Label, len(ls))
	for i, l := range ls {
		own[i] = workload.Label{Name: strings.Clone(l.Name), Value: strings.Clone(l.Value)}
	}
	return own
}

func (m *mixed) Append(ls []workload.Label, t int64, v float64) {
	m.samples = append(m.samples, testSample{labels: cloneLabels(ls), t: t, v: v})
	m.order = append(m.order, false)
}

func (m *mixed) AppendHistogram(ls []workload.Label, t int64, h *workload.Histogram) {
	c := *h
	c.Buckets = slices.Clone(h.Buckets)
	m.hists = append(m.hists, testHistogram{labels: cloneLabels(ls), t: t, h: c})
	m.order = append(m.order, true)
}

// replay gives app what m got, in the same order.
func (m *mixed) replay(app interface {
	workload.Appender
	workload.HistogramAppender
},
) {
	f, h := 0, 0
	for _, isHist := range m.order {
		if isHist {
			app.AppendHistogram(m.hists[h].labels, m.hists[h].t, &m.hists[h].h)
			h++
		} else {
			app.Append(m.samples[f].labels, m.samples[f].t, m.samples[f].v)
			f++
		}
	}
}

// storedHistogram is a stored native histogram's content: what must come back bit for bit.
type storedHistogram struct {
	T                    int64
	Schema               int32
	ZeroThreshold, Sum   uint64 // float bits
	ZeroCount, Count     uint64
	Buckets              map[int32]uint64 // non-empty positive buckets by index
	NegativeBucketsCount int
}

func fromProm(t int64, h *histogram.Histogram) storedHistogram {
	s := storedHistogram{
		T: t, Schema: h.Schema, ZeroThreshold: math.Float64bits(h.ZeroThreshold), Sum: math.Float64bits(h.Sum),
		ZeroCount: h.ZeroCount, Count: h.Count, Buckets: map[int32]uint64{},
	}
	for it := h.PositiveBucketIterator(); it.Next(); {
		if b := it.At(); b.Count > 0 {
			s.Buckets[b.Index] = b.Count
		}
	}
	for it := h.NegativeBucketIterator(); it.Next(); {
		s.NegativeBucketsCount++
	}
	return s
}

func fromWorkload(t int64, h *workload.Histogram) storedHistogram {
	s := storedHistogram{
		T: t, Schema: h.Schema, ZeroThreshold: math.Float64bits(h.ZeroThreshold), Sum: math.Float64bits(h.Sum),
		ZeroCount: h.ZeroCount, Count: h.Count, Buckets: map[int32]uint64{},
	}
	for i, c := range h.Buckets {
		if c > 0 {
			s.Buckets[h.Offset+int32(i)] = c
		}
	}
	return s
}

// TestNativeHistogramsIntoPrometheus writes two scrapes of two targets (one churned in
// between: staleness markers) with native histograms, from a classic histogram (true: the
// classic series left out) and from the default profile's summaries (both), in each protocol
// to Prometheus' own receiver, and reads its TSDB back: every histogram is stored with its
// schema, zero bucket, count, sum and every bucket as sent, bit for bit; a staleness marker
// as a stale histogram. Over OTLP, Prometheus' translation sets its own zero threshold
// (1e-128), the one change it makes.
func TestNativeHistogramsIntoPrometheus(t *testing.T) {
	hp, err := workload.LoadProfile(fstest.MapFS{"p.json": {Data: []byte(histogramProfileJSON)}}, "p.json")
	if err != nil {
		t.Fatal(err)
	}
	dp, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]struct {
		p *workload.Profile
		o workload.NativeOptions
	}{
		"histogram true":     {hp, workload.NativeOptions{Mode: workload.NativeOnly}},
		"summaries both":     {dp, workload.NativeOptions{Mode: workload.NativeBoth, FromSummaries: true}},
		"histogram schema 3": {hp, workload.NativeOptions{Mode: workload.NativeBoth, Schema: new(int32(3))}},
	}
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	for pname, pc := range profiles {
		gen, err := workload.New(pc.p, workload.Options{
			Seed: 1, Start: start, Hosts: 2, ScrapeInterval: 10 * time.Second,
			ChurnPercent: 50, ChurnInterval: 10 * time.Second, Native: pc.o,
		})
		if err != nil {
			t.Fatal(err)
		}
		var in mixed
		for k := range int64(2) {
			for target := range 2 {
				gen.Scrape(&in, target, k)
			}
		}
		if len(in.hists) == 0 {
			t.Fatalf("%s: no native histogram generated", pname)
		}
		meta := newMetadata(pc.p.Series)
		for _, proto := range []string{"prometheus-rw1", "prometheus-rw2", "otlp-http"} {
			t.Run(pname+"/"+proto, func(t *testing.T) {
				t.Parallel()
				recv, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = recv.Close() }()
				body, samples, url, contentType, encoding := encodeMixed(t, &in, meta, proto, recv.URL)
				if want := len(in.samples) + len(in.hists); samples != want {
					t.Fatalf("encoded %d samples of %d", samples, want)
				}
				post(t, url, contentType, encoding, body)
				if n, err := recv.Appended(); err != nil || n != int64(samples) {
					t.Errorf("receiver appended %d (%v), sent %d", n, err, samples)
				}
				got, err := recv.Histograms(0, math.MaxInt64)
				if err != nil {
					t.Fatal(err)
				}
				gotStored := map[string][]storedHistogram{}
				for k, hs := range got {
					for _, h := range hs {
						s := fromProm(h.T, h.H)
						if math.Float64bits(h.H.Sum) == workload.StaleNaNBits { // a marker: only its staleness counts
							s = storedHistogram{T: h.T, Sum: workload.StaleNaNBits}
						}
						gotStored[k] = append(gotStored[k], s)
					}
				}
				want := map[string][]storedHistogram{}
				for _, h := range in.hists {
					b := labels.NewBuilder(labels.EmptyLabels())
					for _, l := range h.labels {
						b.Set(l.Name, l.Value)
					}
					s := storedHistogram{T: h.t, Sum: workload.StaleNaNBits}
					if !h.h.Stale() {
						s = fromWorkload(h.t, &h.h)
						if proto == "otlp-http" {
							s.ZeroThreshold = math.Float64bits(1e-128)
						}
					}
					k := b.Labels().String()
					want[k] = append(want[k], s)
				}
				if diff := cmp.Diff(want, gotStored); diff != "" {
					t.Errorf("stored histograms (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// encodeMixed encodes in for proto and says where to send it.
func encodeMixed(t *testing.T, in *mixed, meta metadata, proto, base string) (body []byte, samples int, url, contentType, encoding string) {
	t.Helper()
	url, contentType, encoding = base+storagetest.WritePath, "application/x-protobuf", "snappy"
	switch proto {
	case "prometheus-rw1":
		var e encoderV1
		in.replay(&e)
		return snappy.Encode(nil, e.buf), e.samples, url, contentType, encoding
	case "prometheus-rw2":
		e := newEncoderV2(meta, nil)
		in.replay(e)
		return snappy.Encode(nil, e.body()), e.samples, url, contentTypeRW2, encoding
	}
	e := newEncoderOTLP(meta)
	in.replay(e)
	return e.body(), e.samples, base + storagetest.OTLPPath, contentType, ""
}

func post(t *testing.T, url, contentType, encoding string, body []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s: %s", resp.Status, msg)
	}
}
