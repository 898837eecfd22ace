package remotewrite

import (
	"bytes"
	"compress/gzip"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/model/labels"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// collect keeps what the generator appended.
type collect struct{ samples []testSample }

func (c *collect) Append(ls []workload.Label, t int64, v float64) {
	own := make([]workload.Label, len(ls))
	for i, l := range ls { // the generator's strings are reused after the call
		own[i] = workload.Label{Name: strings.Clone(l.Name), Value: strings.Clone(l.Value)}
	}
	c.samples = append(c.samples, testSample{labels: own, t: t, v: v})
}

// TestEncodersIntoPrometheus writes two scrapes of two node_exporter targets (one churned in
// between, so staleness markers too) in each protocol to Prometheus' own receiver and reads
// its TSDB back: every sample is stored, bit for bit, under the name the receiver gives it.
func TestEncodersIntoPrometheus(t *testing.T) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	gen, err := workload.New(profile, workload.Options{
		Seed: 1, Start: start, Hosts: 2, ScrapeInterval: 10 * time.Second,
		ChurnPercent: 50, ChurnInterval: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	var in collect
	for k := range int64(2) {
		for target := range 2 {
			gen.Scrape(&in, target, k)
		}
	}
	meta := newMetadata(profile.Series)
	for _, proto := range []string{"prometheus-rw1", "prometheus-rw2", "otlp-http"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			recv, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = recv.Close() }()
			var body []byte
			var samples int
			url, contentType, encoding := recv.URL+storagetest.WritePath, "application/x-protobuf", "snappy"
			switch proto {
			case "prometheus-rw1":
				var e encoderV1
				for _, s := range in.samples {
					e.Append(s.labels, s.t, s.v)
				}
				body, samples = snappy.Encode(nil, e.buf), e.samples
			case "prometheus-rw2":
				e := newEncoderV2(meta, nil)
				for _, s := range in.samples {
					e.Append(s.labels, s.t, s.v)
				}
				body, samples = snappy.Encode(nil, e.body()), e.samples
				contentType = "application/x-protobuf;proto=io.prometheus.write.v2.Request"
			case "otlp-http":
				e := newEncoderOTLP(meta)
				for _, s := range in.samples {
					e.Append(s.labels, s.t, s.v)
				}
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				_, _ = zw.Write(e.body())
				if err := zw.Close(); err != nil {
					t.Fatal(err)
				}
				body, samples = buf.Bytes(), e.samples
				url, encoding = recv.URL+storagetest.OTLPPath, "gzip"
			}
			if samples != len(in.samples) {
				t.Fatalf("encoded %d samples of %d", samples, len(in.samples))
			}
			post(t, url, contentType, encoding, body)
			if n, err := recv.Appended(); err != nil || n != int64(len(in.samples)) {
				t.Errorf("receiver appended %d (%v), sent %d", n, err, len(in.samples))
			}
			got, err := recv.Series(0, math.MaxInt64)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]storagetest.Sample{}
			for _, s := range in.samples {
				ls := labels.New()
				b := labels.NewBuilder(ls)
				for _, l := range s.labels {
					b.Set(l.Name, l.Value)
				}
				if proto == "otlp-http" {
					name := metricName(s.labels)
					if m := meta[name]; m.typ == typeCounter && !strings.HasSuffix(name, "_total") {
						b.Set("__name__", name+"_total")
					}
				}
				k := b.Labels().String()
				want[k] = append(want[k], storagetest.Sample{T: s.t, V: s.v})
			}
			opt := cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
			if diff := cmp.Diff(want, got, opt); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}
