package remotewrite

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/tsbench/tsbench/internal/workload"
)

// latencyProfile is 20 classic histogram families (handler="0".."19") with client_golang's
// default buckets (.005 to 10 s, 11 bounds and +Inf), _count and _sum: a web server's
// request latency.
func latencyProfile() *workload.Profile {
	bounds := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	counter := func(rate float64, res float64) workload.Shape {
		return workload.Shape{Kind: workload.Counter, Value: rate * 1000, Rate: rate, Resolution: res}
	}
	p := &workload.Profile{Source: "test"}
	for h := range 20 {
		handler := workload.Label{Name: "handler", Value: strconv.Itoa(h)}
		total := 50.0 + float64(h)
		for i, le := range bounds {
			share := float64(i+1) / float64(len(bounds)+1)
			p.Series = append(p.Series, workload.Series{
				Name: "http_request_duration_seconds_bucket", Type: "histogram",
				Labels: []workload.Label{handler, {Name: "le", Value: strconv.FormatFloat(le, 'g', -1, 64)}}, Shape: counter(total*share, 1),
			})
		}
		p.Series = append(p.Series,
			workload.Series{Name: "http_request_duration_seconds_bucket", Type: "histogram", Labels: []workload.Label{handler, {Name: "le", Value: "+Inf"}}, Shape: counter(total, 1)},
			workload.Series{Name: "http_request_duration_seconds_count", Type: "histogram", Labels: []workload.Label{handler}, Shape: counter(total, 1)},
			workload.Series{Name: "http_request_duration_seconds_sum", Type: "histogram", Labels: []workload.Label{handler}, Shape: counter(total*0.3, 0.001)})
	}
	return p
}

// BenchmarkNativeHistograms generates, encodes and compresses ten scrapes of ten targets of
// latencyProfile, the families sent classic (14 samples each: 12 buckets, _count, _sum) or
// native (one histogram each), in each protocol, as the writer does (batches of at most 5000
// samples; remote write through the prepared series, OTLP through the labels). Reported per
// family and scrape (one histogram's worth of data either way): bytes on the wire and CPU
// nanoseconds on one thread; and bytes per sample as the account counts samples.
func BenchmarkNativeHistograms(b *testing.B) {
	p := latencyProfile()
	meta := newMetadata(p.Series)
	for _, proto := range []string{"rw1", "rw2", "otlp"} {
		for _, mode := range []workload.NativeMode{workload.NativeOff, workload.NativeOnly} {
			name := map[workload.NativeMode]string{workload.NativeOff: "classic", workload.NativeOnly: "native"}[mode]
			b.Run(fmt.Sprintf("proto=%s/%s", proto, name), func(b *testing.B) {
				gen, err := workload.New(p, workload.Options{
					Seed: 1, Start: time.UnixMilli(1_700_000_000_000), Hosts: 10,
					ScrapeInterval: 10 * time.Second, Native: workload.NativeOptions{Mode: mode},
				})
				if err != nil {
					b.Fatal(err)
				}
				enc := newBenchEncoder(proto, gen, meta)
				runtime.LockOSThread() // CPU time of this thread: the figure holds on a busy machine
				defer runtime.UnlockOSThread()
				var wire, samples, families int64
				cpu0 := threadCPU()
				for b.Loop() {
					for k := range int64(10) {
						for target := range 10 {
							gen.Scrape(enc.app, target, k)
							families += 20
							if enc.samples() >= 5000 {
								n, s := enc.flush()
								wire, samples = wire+n, samples+s
							}
						}
					}
					n, s := enc.flush()
					wire, samples = wire+n, samples+s
				}
				cpu := threadCPU() - cpu0
				b.ReportMetric(float64(wire)/float64(families), "wire-bytes/histogram")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(families), "cpu-ns/histogram")
				b.ReportMetric(float64(wire)/float64(samples), "wire-bytes/sample")
			})
		}
	}
}

// benchEncoder is one protocol's encoder with its compression, as the writer uses them.
type benchEncoder struct {
	app     workload.Appender
	samples func() int
	flush   func() (wire, samples int64) // compress the batch, reset
}

func newBenchEncoder(proto string, gen *workload.Generator, meta metadata) benchEncoder {
	var packed []byte
	snappy := func(body []byte) int64 {
		if n := s2.MaxEncodedLen(len(body)); cap(packed) < n {
			packed = make([]byte, n)
		}
		return int64(len(s2.EncodeSnappy(packed[:cap(packed)], body)))
	}
	switch proto {
	case "rw1":
		e := &encoderV1{tpl: newTemplates(gen)}
		return benchEncoder{e, func() int { return e.samples }, func() (int64, int64) {
			n, s := snappy(e.buf), int64(e.samples)
			e.reset()
			return n, s
		}}
	case "rw2":
		e := newEncoderV2(meta, newV2Templates(gen, meta))
		return benchEncoder{e, func() int { return e.samples }, func() (int64, int64) {
			n, s := snappy(e.body()), int64(e.samples)
			e.reset()
			return n, s
		}}
	}
	e := newEncoderOTLP(meta)
	var gz gzipper
	return benchEncoder{otlpLabels{e}, func() int { return e.samples }, func() (int64, int64) {
		n, s := int64(len(gz.compress(e.body()))), int64(e.samples)
		e.reset()
		return n, s
	}}
}

// otlpLabels gives the OTLP encoder every label of every sample, as the writer does.
type otlpLabels struct{ e *encoderOTLP }

func (o otlpLabels) Append(ls []workload.Label, t int64, v float64) { o.e.Append(ls, t, v) }
func (o otlpLabels) AppendHistogram(ls []workload.Label, t int64, h *workload.Histogram) {
	o.e.AppendHistogram(ls, t, h)
}
