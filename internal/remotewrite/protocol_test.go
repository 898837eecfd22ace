package remotewrite

import (
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/client_golang/prometheus"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/protobuf/encoding/protowire"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// One writer, four storages, each a Prometheus receiver taking another wire encoding: each
// acks every sample, its TSDB appended exactly as many, and all four hold the same data.
func TestProtocolsIntoPrometheus(t *testing.T) {
	storages := map[string]config.Storage{}
	recvs := map[string]*storagetest.Receiver{}
	for name, st := range map[string]config.Storage{
		"rw1":       {},
		"rw2":       {Protocol: config.ProtocolRW2},
		"otlp":      {Protocol: config.ProtocolOTLP},
		"otlp-none": {Protocol: config.ProtocolOTLP, OTLPCompression: config.OTLPNone},
	} {
		r, err := storagetest.Start(t.TempDir(), slog.New(slog.DiscardHandler), storagetest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		st.WriteURL = r.URL + storagetest.WritePath
		if st.Protocol == config.ProtocolOTLP {
			st.WriteURL = r.URL + storagetest.OTLPPath
		}
		storages[name], recvs[name] = st, r
	}
	w := run(t, storages, nil, time.Second, nil)
	var first map[string][]storagetest.Sample
	for _, name := range []string{"rw1", "rw2", "otlp", "otlp-none"} {
		r := w.Results(name)
		want := string(storages[name].WriteProtocol())
		if r.AckedSamples == 0 || r.AckedSamples != r.GeneratedSamples || r.Protocol != want || r.UnconfirmedSamples != 0 || len(r.Notes) != 0 {
			t.Errorf("%s: account %+v: want every sample acked and confirmed, protocol %s", name, r, want)
		}
		if n, err := recvs[name].Appended(); err != nil || n != r.AckedSamples {
			t.Errorf("%s: TSDB appended %d (%v), acked %d", name, n, err, r.AckedSamples)
		}
		got, err := recvs[name].Series(0, math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
			continue
		}
		opt := cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
		if diff := cmp.Diff(first, got, opt); diff != "" {
			t.Errorf("%s stores other data than rw1 (-rw1 +%s):\n%s", name, name, diff)
		}
	}
}

// rw2Receiver decodes 2.0 requests and answers with written(n sent) as the written header
// (-1: none), or with status when it is not 0.
type rw2Receiver struct {
	t       *testing.T
	status  int
	written func(sent int) int

	mu      sync.Mutex
	headers http.Header
	sent    int
}

func (rc *rw2Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.headers = r.Header.Clone()
	rc.mu.Unlock()
	if rc.status != 0 {
		w.WriteHeader(rc.status)
		return
	}
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		rc.t.Errorf("snappy: %v", err)
	}
	var req writev2.Request
	if err := req.Unmarshal(raw); err != nil {
		rc.t.Errorf("decode: %v", err)
	}
	n := 0
	for _, ts := range req.Timeseries {
		n += len(ts.Samples)
	}
	rc.mu.Lock()
	rc.sent += n
	rc.mu.Unlock()
	if c := rc.written(n); c >= 0 {
		w.Header().Set("X-Prometheus-Remote-Write-Samples-Written", strconv.Itoa(c))
		w.Header().Set("X-Prometheus-Remote-Write-Histograms-Written", "0")
		w.Header().Set("X-Prometheus-Remote-Write-Exemplars-Written", "0")
	}
	w.WriteHeader(http.StatusNoContent)
}

func TestRW2Confirmation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		written   func(int) int
		check     func(t *testing.T, r *results.Write, sent int)
		wantNotes []string
	}{{
		name:    "confirmed",
		written: func(n int) int { return n },
		check: func(t *testing.T, r *results.Write, sent int) {
			if r.AckedSamples != r.GeneratedSamples || int(r.AckedSamples) != sent || r.UnconfirmedSamples != 0 {
				t.Errorf("account %+v, receiver got %d: want all acked, confirmed", r, sent)
			}
		},
	}, {
		name:    "unconfirmed",
		written: func(int) int { return -1 },
		check: func(t *testing.T, r *results.Write, _ int) {
			if r.AckedSamples != r.GeneratedSamples || r.UnconfirmedSamples != r.AckedSamples || r.Dropped() != 0 {
				t.Errorf("account %+v: want all acked and all unconfirmed", r)
			}
		},
		wantNotes: []string{"receiver did not confirm RW 2.0 writes"},
	}, {
		name:    "partial",
		written: func(n int) int { return n / 2 },
		check: func(t *testing.T, r *results.Write, sent int) {
			if r.AckedSamples == 0 || r.DroppedSamples[reasonPartialWrite] != r.GeneratedSamples-r.AckedSamples || r.AckedSamples > int64(sent)/2+1 {
				t.Errorf("account %+v, sent %d: want half acked, the rest partial_write", r, sent)
			}
		},
		wantNotes: []string{"the receiver confirmed fewer samples than sent"},
	}, {
		name:   "not taken",
		status: http.StatusUnsupportedMediaType,
		check: func(t *testing.T, r *results.Write, _ int) {
			if r.AckedSamples != 0 || r.DroppedSamples["http_415"] != r.GeneratedSamples {
				t.Errorf("account %+v: want every sample dropped as http_415", r)
			}
		},
		wantNotes: []string{"does not take remote write 2.0: 415 Unsupported Media Type"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := &rw2Receiver{t: t, status: tc.status, written: tc.written}
				st := writeTo("http://s.test")
				st.Protocol = config.ProtocolRW2
				w := run(t, map[string]config.Storage{"s": st}, memNet{"s.test": rc}, 500*time.Millisecond, nil)
				r := w.Results("s")
				rc.mu.Lock()
				defer rc.mu.Unlock()
				if r.GeneratedSamples == 0 || r.Protocol != "prometheus-rw2" {
					t.Fatalf("account %+v", r)
				}
				tc.check(t, r, rc.sent)
				for k, want := range map[string]string{
					"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf;proto=io.prometheus.write.v2.Request",
					"X-Prometheus-Remote-Write-Version": "2.0.0",
				} {
					if got := rc.headers.Get(k); got != want {
						t.Errorf("header %s = %q, want %q", k, got, want)
					}
				}
				if len(r.Notes) != len(tc.wantNotes) {
					t.Fatalf("notes %q, want %d", r.Notes, len(tc.wantNotes))
				}
				for i, n := range tc.wantNotes {
					if !strings.Contains(r.Notes[i], n) {
						t.Errorf("note %q lacks %q", r.Notes[i], n)
					}
				}
			})
		})
	}
}

// An OTLP receiver's partial success rejects points: their samples are dropped.
func TestOTLPPartialSuccess(t *testing.T) { synctest.Test(t, testOTLPPartialSuccess) }

func testOTLPPartialSuccess(t *testing.T) {
	var mu sync.Mutex
	var headers http.Header
	rc := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		headers = r.Header.Clone()
		mu.Unlock()
		// ExportMetricsServiceResponse{partial_success: {rejected_data_points: 2, error_message: "no"}}
		ps := append([]byte{0x08, 2, 0x12, 2}, "no"...)
		body := append([]byte{0x0a}, binary.AppendUvarint(nil, uint64(len(ps)))...)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(append(body, ps...))
	})
	st := config.Storage{WriteURL: "http://s.test/v1/metrics", Protocol: config.ProtocolOTLP}
	w := run(t, map[string]config.Storage{"s": st}, memNet{"s.test": rc}, 500*time.Millisecond, nil)
	r := w.Results("s")
	req := r.RequestsByStatus["200"]
	if req == 0 || r.DroppedSamples[reasonPartialWrite] != 2*req || r.AckedSamples != r.GeneratedSamples-2*req {
		t.Errorf("account %+v: want 2 samples dropped per request (partial_write)", r)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "OTLP partial success") {
		t.Errorf("notes %q", r.Notes)
	}
	mu.Lock()
	defer mu.Unlock()
	if headers.Get("Content-Encoding") != "gzip" || headers.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("headers %v", headers)
	}
}

func TestRejectedSamples(t *testing.T) {
	for _, tc := range []struct{ rejected, points, samples, want int64 }{
		{0, 10, 10, 0},
		{3, 10, 10, 3},
		{10, 10, 30, 30},
		{11, 10, 30, 30},
		{1, 10, 15, 2}, // 1.5 samples per point, rounded up
		{-1, 10, 10, 0},
	} {
		if got := rejectedSamples(tc.rejected, tc.points, tc.samples); got != tc.want {
			t.Errorf("rejectedSamples(%d, %d, %d) = %d, want %d", tc.rejected, tc.points, tc.samples, got, tc.want)
		}
	}
}

// BenchmarkProtocols generates, encodes and compresses the same workload — ten scrapes of ten
// node_exporter targets, requests of up to 5000 samples (the default maxSamplesPerRequest) —
// in each protocol, on one goroutine, as the writer does: remote write 1.0 and 2.0 through
// their prepared series, OTLP from each sample's labels. Reported: the CPU per million
// samples (generation included, the same for all) and the bytes on the wire per sample.
func BenchmarkProtocols(b *testing.B) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		b.Fatal(err)
	}
	gen, err := workload.New(profile, workload.Options{Seed: 1, Start: time.UnixMilli(1_700_000_000_000), Hosts: 10, ScrapeInterval: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	meta := newMetadata(profile.Series)
	for _, tc := range []struct{ name string }{
		{"prometheus-rw1"}, {"prometheus-rw2"}, {"otlp-http"}, {"otlp-http,compression=none"},
	} {
		b.Run("protocol="+tc.name, func(b *testing.B) {
			rw1 := encoderV1{tpl: newTemplates(gen)}
			rw2 := newEncoderV2(meta, newV2Templates(gen, meta))
			otlp := newEncoderOTLP(meta)
			var gz gzipper
			var packed []byte
			snappyOf := func(body []byte) []byte {
				if n := s2.MaxEncodedLen(len(body)); cap(packed) < n {
					packed = make([]byte, n)
				}
				return s2.EncodeSnappy(packed[:cap(packed)], body)
			}
			var app workload.Appender
			var flush func(last bool) (samples, wire int)
			switch tc.name {
			case "prometheus-rw1":
				app = &rw1
				flush = func(last bool) (int, int) {
					n := rw1.samples
					if n < 5000 && !last {
						return 0, 0
					}
					w := len(snappyOf(rw1.buf))
					rw1.reset()
					return n, w
				}
			case "prometheus-rw2":
				app = rw2
				flush = func(last bool) (int, int) {
					n := rw2.samples
					if n < 5000 && !last {
						return 0, 0
					}
					w := len(snappyOf(rw2.body()))
					rw2.reset()
					return n, w
				}
			default:
				app = otlp
				plain := strings.HasSuffix(tc.name, "none")
				flush = func(last bool) (int, int) {
					n := otlp.samples
					if n < 5000 && !last || otlp.fam.open && !last {
						return 0, 0
					}
					body := otlp.body()
					w := len(body)
					if !plain {
						w = len(gz.compress(body))
					}
					otlp.reset()
					return n, w
				}
			}
			var samples, wire int64
			runtime.LockOSThread() // CPU time of this thread: the figure holds on a busy machine
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			for b.Loop() {
				for k := range int64(10) {
					for target := range 10 {
						gen.Scrape(app, target, k)
						n, w := flush(false)
						samples, wire = samples+int64(n), wire+int64(w)
					}
				}
				n, w := flush(true)
				samples, wire = samples+int64(n), wire+int64(w)
			}
			b.ReportMetric((threadCPU()-cpu0).Seconds()*1e3/(float64(samples)/1e6), "cpu-ms/Msamples")
			b.ReportMetric(float64(wire)/float64(samples), "wire-bytes/sample")
		})
	}
}

// FuzzPartialSuccess reads OTLP answers as the upstream types do: for a well-formed protobuf
// answer pmetricotlp decodes, partialSuccess finds the same rejected points and message.
// (pmetricotlp also takes some malformed groups, which no receiver sends.)
func FuzzPartialSuccess(f *testing.F) {
	for _, seed := range []func(pmetricotlp.ExportPartialSuccess){
		func(pmetricotlp.ExportPartialSuccess) {},
		func(ps pmetricotlp.ExportPartialSuccess) { ps.SetRejectedDataPoints(3) },
		func(ps pmetricotlp.ExportPartialSuccess) {
			ps.SetRejectedDataPoints(1 << 40)
			ps.SetErrorMessage("too old")
		},
	} {
		r := pmetricotlp.NewExportResponse()
		seed(r.PartialSuccess())
		b, err := r.MarshalProto()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08, 0x05}) // a repeated partial_success merges
	f.Fuzz(func(t *testing.T, body []byte) {
		r := pmetricotlp.NewExportResponse()
		if err := r.UnmarshalProto(body); err != nil || !wellFormed(body, 1) {
			return
		}
		rejected, msg := partialSuccess(body)
		if want := r.PartialSuccess(); rejected != want.RejectedDataPoints() || msg != want.ErrorMessage() {
			t.Errorf("partialSuccess(%x) = %d, %q; pmetricotlp reads %d, %q", body, rejected, msg, want.RejectedDataPoints(), want.ErrorMessage())
		}
	})
}

// wellFormed reports whether b is a sequence of whole protobuf fields, and so is the payload
// of every length-delimited field numbered nested (the partial_success message).
func wellFormed(b []byte, nested protowire.Number) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return false
		}
		if num == nested && typ == protowire.BytesType {
			payload, _ := protowire.ConsumeBytes(b[n:])
			if !wellFormed(payload, 0) {
				return false
			}
		}
		b = b[n+m:]
	}
	return true
}

// A run writes its shard's part of the workload: the writer of a part knows the profile's
// types, so 2.0 and OTLP send them.
func TestWriterOfPartHasMetadata(t *testing.T) {
	profile, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(profile, workload.Options{Seed: 1, Start: time.Now(), Hosts: 4, ScrapeInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.RemoteStorages = map[string]config.Storage{"s": {WriteURL: "http://s.test/api/v1/write", Protocol: config.ProtocolRW2}}
	w, err := New(OptionsFrom(&cfg), gen.Part(1, 2), slog.New(slog.DiscardHandler), NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	if m := w.meta["node_cpu_seconds_total"]; m.typ != typeCounter || w.v2tpl == nil {
		t.Errorf("metadata of node_cpu_seconds_total %+v, 2.0 templates %v: want a counter, prepared series", m, w.v2tpl != nil)
	}
}
