package workload

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// exporterPage is scrape n of a small exporter: a counter in 0.01 steps, a byte counter, a
// gauge, a constant, a NaN summary quantile and a histogram whose buckets grow unevenly.
func exporterPage(n int) string {
	return fmt.Sprintf(`# TYPE cpu_seconds_total counter
cpu_seconds_total{cpu="0",mode="idle"} %.2f
cpu_seconds_total{cpu="1",mode="idle"} %.2f
# TYPE rx_bytes_total counter
rx_bytes_total{device="eth0"} %d
# TYPE mem_free_bytes gauge
mem_free_bytes %d
# TYPE info gauge
info{version="1.5",revision="abc",empty=""} 1
# TYPE job_seconds summary
job_seconds{quantile="0.5"} NaN
job_seconds_sum 0
job_seconds_count 0
# TYPE req_seconds histogram
req_seconds_bucket{le="0.1"} %d
req_seconds_bucket{le="1"} %d
req_seconds_bucket{le="+Inf"} %d
req_seconds_sum %.3f
req_seconds_count %d
`, 100+0.37*float64(n), 200+0.5*float64(n), 5000+1500*n, 1000000-4096*(n%3),
		10+n, 12+3*n, 13+3*n, 4.5+0.25*float64(n), 13+3*n)
}

// exporterClient serves h in memory. Inside a synctest bubble the capture's scrapes then land
// exactly on their schedule, so rates fitted over the elapsed time are exact on a busy machine.
func exporterClient(h http.HandlerFunc) *http.Client {
	return &http.Client{Transport: handlerTransport{h}}
}

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// exporterURL is where the in-memory exporter answers; no request leaves the process.
const exporterURL = "http://exporter.invalid/metrics"

func TestCaptureFitsShapes(t *testing.T) {
	synctest.Test(t, testCaptureFitsShapes)
}

func testCaptureFitsShapes(t *testing.T) {
	var n atomic.Int64
	client := exporterClient(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, exporterPage(int(n.Add(1)-1)))
	})
	p, err := Capture(context.Background(), client, CaptureOptions{
		URL: exporterURL, Scrapes: 4, Interval: 10 * time.Millisecond,
		Expand: []Expansion{{Prefix: "cpu_", Label: "cpu", Count: 4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Series{}
	for _, s := range p.Series {
		got[s.key()] = s
	}
	want := map[string]string{ // series → kind / resolution
		"cpu_seconds_total\xffcpu\xff0\xffmode\xffidle":      "counter/0.01",
		"cpu_seconds_total\xffcpu\xff3\xffmode\xffidle":      "counter/0.1", // expanded: cpu 2 copies cpu 0, cpu 3 copies cpu 1
		"rx_bytes_total\xffdevice\xffeth0":                   "counter/1",
		"mem_free_bytes":                                     "gauge/1",
		"info\xffexported_revision\xffabc\xffversion\xff1.5": "constant/0",
		"job_seconds\xffquantile\xff0.5":                     "nan/0",
		"job_seconds_count":                                  "counter/1",
		"req_seconds_bucket\xffle\xff0.1":                    "counter/1",
		"req_seconds_count":                                  "counter/1",
		"req_seconds_sum":                                    "counter/0.01", // 4.500, 4.750, ...: the trailing zero is no digit
	}
	for k, w := range want {
		s, ok := got[k]
		if !ok {
			t.Errorf("series %q not captured", strings.ReplaceAll(k, "\xff", " "))
			continue
		}
		if g := fmt.Sprintf("%s/%g", s.Shape.Kind, s.Shape.Resolution); g != w {
			t.Errorf("%s: %s, want %s", strings.ReplaceAll(k, "\xff", " "), g, w)
		}
	}
	if len(p.Series) != 2+2+1+1+1+3+5 {
		t.Errorf("%d series, want 15 (2 cpus expanded to 4)", len(p.Series))
	}
	// The histogram's _count took the +Inf bucket's shape; buckets stay cumulative.
	inf := got["req_seconds_bucket\xffle\xff+Inf"].Shape
	if diff := cmp.Diff(inf, got["req_seconds_count"].Shape); diff != "" {
		t.Errorf("_count shape differs from +Inf bucket (-inf +count):\n%s", diff)
	}
	g, err := New(p, Options{Seed: 1, Start: time.UnixMilli(0), Hosts: 3, ScrapeInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if checkHistograms(t, g) != 1 {
		t.Error("the histogram family was not checked")
	}
	if r := got["rx_bytes_total\xffdevice\xffeth0"].Shape.Rate; math.Abs(r-1500/0.01) > 1e-6*1500/0.01 {
		t.Errorf("rx rate %v, want %v per second: the scrapes are exactly 10ms apart", r, 1500/0.01)
	}
}

func TestCaptureErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, err := Capture(context.Background(), srv.Client(), CaptureOptions{URL: srv.URL, Scrapes: 2})
	if err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("got %v, want the status named", err)
	}
	if _, err := ParseExpansions("node_cpu_:cpu"); err == nil {
		t.Error("an expansion without a count was accepted")
	}
}

func TestProfileValidate(t *testing.T) {
	p := &Profile{Series: []Series{
		{Name: "a", Labels: []Label{{"z", "1"}, {"b", "2"}}, Shape: Shape{Kind: Constant}},
		{Name: "1bad", Shape: Shape{Kind: "wobbly"}},
		{Name: "g", Shape: Shape{Kind: Gauge, Min: 2, Max: 1, PeriodSeconds: 1}},
	}}
	err := p.Validate()
	for _, want := range []string{"labels not sorted", "invalid metric name", `unknown shape kind "wobbly"`, "gauge min > max"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
