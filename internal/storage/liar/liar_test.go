package liar

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// v1 is a 1.0 request of a series with 2 samples and a NaN.
func v1(t *testing.T) []byte {
	t.Helper()
	req := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "__name__", Value: "x_total"}, {Name: "instance", Value: "i"}, {Name: "job", Value: "j"}},
		Samples: []prompb.Sample{{Value: 1.5, Timestamp: 1000}, {Value: 2, Timestamp: 2000}, {Value: math.NaN(), Timestamp: 3000}},
	}}}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stale is a 1.0 request of a series with a sample and its staleness marker.
func stale(t *testing.T) []byte {
	t.Helper()
	req := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "__name__", Value: "x_total"}, {Name: "instance", Value: "i"}, {Name: "job", Value: "j"}},
		Samples: []prompb.Sample{{Value: 1.5, Timestamp: 1000}, {Value: math.Float64frombits(value.StaleNaN), Timestamp: 2000}},
	}}}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLiarWrites: each write lie reaches the TSDB as told, the answer is the receiver's, and
// the record holds exactly the samples lied about, in 1.0 and 2.0.
func TestLiarWrites(t *testing.T) {
	const series = `{__name__="x_total", instance="i", job="j"}`
	for _, tc := range []struct {
		name string
		lies Lies
		body func(*testing.T) []byte
		ct   string
		want map[string][]storagetest.Sample // floats stored, NaN compared by bits
		told []Told
		// newest is the newest sample timestamp written, lied about or not (Newest).
		newest int64
	}{
		{
			name: "dropSamples", lies: Lies{Lie: LieDropSamples}, body: v1, ct: "application/x-protobuf",
			want: map[string][]storagetest.Sample{series: {{T: 3000, V: math.NaN()}}},
			told: []Told{{series, 1000, 1}, {series, 2000, 1}}, newest: 3000,
		},
		{
			name: "ulp", lies: Lies{Lie: LieULP}, body: v1, ct: "application/x-protobuf",
			want: map[string][]storagetest.Sample{series: {{T: 1000, V: math.Nextafter(1.5, 2)}, {T: 2000, V: math.Nextafter(2, 3)}, {T: 3000, V: math.NaN()}}},
			told: []Told{{series, 1000, 1}, {series, 2000, 1}}, newest: 3000,
		},
		{
			name: "round", lies: Lies{Lie: LieRound}, body: v1, ct: "application/x-protobuf",
			want: map[string][]storagetest.Sample{series: {{T: 1000, V: 2}, {T: 2000, V: 2}, {T: 3000, V: math.NaN()}}},
			told: []Told{{series, 1000, 1}}, newest: 3000,
		},
		{
			name: "shift", lies: Lies{Lie: LieShiftTimestamps, Shift: 7 * time.Millisecond}, body: v1, ct: "application/x-protobuf",
			want: map[string][]storagetest.Sample{series: {{T: 1007, V: 1.5}, {T: 2007, V: 2}, {T: 3007, V: math.NaN()}}},
			told: []Told{{series, 1000, 1}, {series, 2000, 1}, {series, 3000, 1}}, newest: 3000,
		},
		{
			name: "renameJobInstance", lies: Lies{Lie: LieRenameJobInstance}, body: v1, ct: "application/x-protobuf",
			want: map[string][]storagetest.Sample{`{__name__="x_total", service_instance_id="i", service_name="j"}`: {{T: 1000, V: 1.5}, {T: 2000, V: 2}, {T: 3000, V: math.NaN()}}},
			told: []Told{{series, 1000, 1}, {series, 2000, 1}, {series, 3000, 1}}, newest: 3000,
		},
		{
			name: "addLabel/v2", lies: Lies{Lie: LieAddLabel, Label: labels.Label{Name: "tenant_id", Value: "t"}}, body: v2Request, ct: v2Type,
			want: map[string][]storagetest.Sample{`{__name__="x_total", job="j", tenant_id="t"}`: {{T: 1000, V: 1}, {T: 2000, V: 2}}},
			told: []Told{{`{__name__="x_total", job="j"}`, 1000, 1}, {`{__name__="x_total", job="j"}`, 2000, 1}}, newest: 2000,
		},
		{
			name: "dropSamples/v2", lies: Lies{Lie: LieDropSamples}, body: v2Request, ct: v2Type,
			want: map[string][]storagetest.Sample{},
			told: []Told{{`{__name__="x_total", job="j"}`, 1000, 1}, {`{__name__="x_total", job="j"}`, 2000, 1}}, newest: 2000,
		},
		{
			name: "dropStale", lies: Lies{Lie: LieDropStale}, body: stale, ct: "application/x-protobuf",
			want: map[string][]storagetest.Sample{series: {{T: 1000, V: 1.5}}},
			told: []Told{{series, 2000, 1}}, newest: 2000,
		},
		{
			name: "refuse", lies: Lies{Lie: LieRefuse, Status: http.StatusServiceUnavailable}, body: v1, ct: "application/x-protobuf",
			want: map[string][]storagetest.Sample{},
			told: []Told{{"", 0, 3}}, newest: 3000,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := storagetest.StartT(t, storagetest.Options{})
			l, err := Start(r.URL, tc.lies)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			resp := post(t, l.URL+WritePath, tc.ct, tc.body(t))
			wantStatus := http.StatusNoContent
			if tc.lies.Lie == LieRefuse {
				wantStatus = tc.lies.Status
			}
			if resp.StatusCode != wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, wantStatus)
			}
			if tc.ct == v2Type && tc.lies.Lie != LieRefuse && resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "2" {
				t.Errorf("2.0 answer claims %q samples written, want the 2 received", resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written"))
			}
			got, err := r.Series(0, 10_000)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
			})); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			told := toldWithoutArrivals(l)
			if diff := cmp.Diff(tc.told, told); diff != "" {
				t.Errorf("told (-want +got):\n%s", diff)
			}
			if got := l.Newest(); got.UnixMilli() != tc.newest {
				t.Errorf("newest %d, want %d", got.UnixMilli(), tc.newest)
			}
		})
	}
}

// toldWithoutArrivals is l's record with each request's arrival zeroed, as a test cannot
// know it.
func toldWithoutArrivals(l *Liar) []Told {
	told := l.Told()
	for i := range told {
		if told[i].Series == "" {
			told[i].T = 0
		}
	}
	return told
}

// TestLiarReached: Newest is the newest sample received, Reached the oldest of the targets'
// newest (a target by its instance label): what every target has reached.
func TestLiarReached(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{})
	l, err := Start(r.URL, Lies{Lie: LieRound})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	series := func(instance string, ts ...int64) prompb.TimeSeries {
		s := prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "x"}, {Name: "instance", Value: instance}}}
		for _, t := range ts {
			s.Samples = append(s.Samples, prompb.Sample{Value: 1, Timestamp: t})
		}
		return s
	}
	req := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{series("a", 1000, 3000), series("b", 2000)}}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if resp := post(t, l.URL+WritePath, "application/x-protobuf", b); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n, r := l.Newest().UnixMilli(), l.Reached().UnixMilli(); n != 3000 || r != 2000 {
		t.Errorf("newest %d, reached %d; want 3000 and 2000", n, r)
	}
}

// TestLiarReachedOnAnswer: a request the storage behind has not answered is received
// (Newest) but not reached (Reached) until its answer is written: a writer that gave up on
// it holds its samples pending.
func TestLiarReachedOnAnswer(t *testing.T) {
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-release
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(stuck.Close)
	l, err := Start(stuck.URL, Lies{Lie: LieRound})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	done := make(chan *http.Response)
	go func() { done <- post(t, l.URL+WritePath, "application/x-protobuf", v1(t)) }()
	for l.Newest().IsZero() {
		time.Sleep(10 * time.Millisecond)
	}
	if n, r := l.Newest().UnixMilli(), l.Reached(); n != 3000 || !r.IsZero() {
		t.Errorf("while unanswered: newest %d, reached %s; want 3000 and none", n, r)
	}
	close(release)
	if resp := <-done; resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if r := l.Reached().UnixMilli(); r != 3000 {
		t.Errorf("once answered: reached %d, want 3000", r)
	}
}

// TestLiarNotReachedWhenGivenUp: a request the writer gave up on before the receiver
// answered is not reached, though the receiver then stored it: for the writer its samples
// are pending (a matrix cell once expected a run's read-back to reach them).
func TestLiarNotReachedWhenGivenUp(t *testing.T) {
	stored := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done() // the liar's forward, given up with the writer's request
		close(stored)        // as a receiver that stores what it read all the same
	}))
	t.Cleanup(stuck.Close)
	l, err := Start(stuck.URL, Lies{Lie: LieRound})
	if err != nil {
		t.Fatal(err)
	}
	ctx, giveUp := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.URL+WritePath, bytes.NewReader(snappy.Encode(nil, v1(t))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	sent := make(chan error)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		sent <- err
	}()
	for l.Newest().IsZero() {
		time.Sleep(10 * time.Millisecond)
	}
	giveUp()
	if err := <-sent; err == nil {
		t.Fatal("the request was answered before the writer gave up")
	}
	<-stored
	if err := l.Close(); err != nil { // waits for the liar's handler to end
		t.Fatal(err)
	}
	if r := l.Reached(); !r.IsZero() {
		t.Errorf("reached %s after the writer gave up on the only request: want none", r)
	}
}

// TestLiarQueries: a partial answer leaves out the chosen series, and the record holds their
// samples with a number, written before.
func TestLiarQueries(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{})
	l, err := Start(r.URL, Lies{Lie: LiePartial, Share: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	now := time.Now().UnixMilli()
	req := prompb.WriteRequest{}
	for _, job := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		req.Timeseries = append(req.Timeseries, prompb.TimeSeries{
			Labels:  []prompb.Label{{Name: "__name__", Value: "up"}, {Name: "job", Value: job}},
			Samples: []prompb.Sample{{Value: 1, Timestamp: now - 1000}, {Value: 1, Timestamp: now}},
		})
	}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	post(t, l.URL+WritePath, "application/x-protobuf", b)

	hidden := map[string]bool{}
	for _, told := range l.Told() {
		hidden[told.Series] = true
	}
	resp, err := http.Get(l.URL + "/api/v1/query?query=" + url.QueryEscape("up[1m]"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values [][]any           `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	if len(hidden) == 0 || len(hidden) == 8 {
		t.Fatalf("%d of 8 series chosen: want some", len(hidden))
	}
	if got := len(l.Told()); got != 2*len(hidden) {
		t.Errorf("told %d samples, want 2 for each of the %d hidden series", got, len(hidden))
	}
	if len(a.Data.Result)+len(hidden) != 8 {
		t.Errorf("answered %d series, %d hidden: want 8 in all", len(a.Data.Result), len(hidden))
	}
	for _, s := range a.Data.Result {
		if ls := labels.FromMap(s.Metric); hidden[ls.String()] {
			t.Errorf("%s answered, but hidden", ls)
		}
	}
}

// TestLiarDelay: a write is acknowledged at once and stored Delay later, and recorded.
func TestLiarDelay(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{})
	l, err := Start(r.URL, Lies{Lie: LieDelay, Delay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	sent := time.Now()
	if resp := post(t, l.URL+WritePath, v2Type, v2Request(t)); resp.StatusCode != http.StatusNoContent || resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "2" {
		t.Fatalf("answered %d, %q samples written; want 204 and 2 at once", resp.StatusCode, resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written"))
	}
	if got, err := r.Series(0, 10_000); err != nil || len(got) != 0 {
		t.Fatalf("stored at once: %v, %v", got, err)
	}
	for {
		got, err := r.Series(0, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			if d := time.Since(sent); d < time.Second {
				t.Errorf("stored %s after the write, want 1s at least", d)
			}
			break
		}
		if time.Since(sent) > 10*time.Second {
			t.Fatal("not stored 10 s after the write")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if told := l.Told(); len(told) != 1 || told[0].N != 2 {
		t.Errorf("told %+v, want one request of 2 samples", told)
	}
	// Recorded once the receiver answered, just after it stored the write.
	for deadline := time.Now().Add(10 * time.Second); len(l.Delays()) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if h := l.Delays(); len(h) != 1 || h[0].Sent < time.Second || h[0].Answered < h[0].Sent {
		t.Errorf("held %+v, want one write sent 1 s after its arrival at least, answered after", h)
	}
}

// TestLiarDelaySeries: the index shows a delayed write's series as a query does, Delay after
// the ack: /api/v1/series through the liar finds nothing at once, then the series.
func TestLiarDelaySeries(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{})
	l, err := Start(r.URL, Lies{Lie: LieDelay, Delay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	sent := time.Now()
	if resp := post(t, l.URL+WritePath, v2Type, v2Request(t)); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("write answered %d, want 204", resp.StatusCode)
	}
	match := url.Values{"match[]": {"x_total"}, "start": {"0"}, "end": {"10"}}
	if status, a := ask(t, l.URL, "/api/v1/series", match); status != http.StatusOK || string(a.Data) != "[]" {
		t.Fatalf("series at once: %d %+v, want 200 and none", status, a)
	}
	for {
		status, a := ask(t, l.URL, "/api/v1/series", match)
		if status != http.StatusOK {
			t.Fatalf("series: %d %+v", status, a)
		}
		if string(a.Data) != "[]" {
			if d := time.Since(sent); d < time.Second {
				t.Errorf("found %s after the write, want 1s at least", d)
			}
			if want := `[{"__name__":"x_total","job":"j"}]`; string(a.Data) != want {
				t.Errorf("series %s, want %s", a.Data, want)
			}
			break
		}
		if time.Since(sent) > 10*time.Second {
			t.Fatal("no series 10 s after the write")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLiarMetadataOncePerFamily: metadata dropped from two 2.0 requests of one family, and
// from two 1.0 metadata requests, is recorded once per family.
func TestLiarMetadataOncePerFamily(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{})
	l, err := Start(r.URL, Lies{Lie: LieDropMetadata})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	meta := prompb.WriteRequest{Metadata: []prompb.MetricMetadata{
		{MetricFamilyName: "y", Type: prompb.MetricMetadata_GAUGE, Help: "h"},
		{MetricFamilyName: "z_seconds", Type: prompb.MetricMetadata_HISTOGRAM, Help: "h"},
	}}
	b, err := meta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		post(t, l.URL+WritePath, v2Type, v2Request(t))
		post(t, l.URL+WritePath, "application/x-protobuf", b)
	}
	want := []Told{{Series: "x_total", N: 1}, {Series: "y", N: 1}, {Series: "z_seconds", N: 1}}
	if diff := cmp.Diff(want, l.Told()); diff != "" {
		t.Errorf("told (-want +got):\n%s", diff)
	}
	if got, want := familyOf("z_seconds_bucket", writev2.Metadata_METRIC_TYPE_HISTOGRAM), "z_seconds"; got != want {
		t.Errorf("family of a histogram's bucket series %q, want %q", got, want)
	}
	if got, want := familyOf("z_count", writev2.Metadata_METRIC_TYPE_COUNTER), "z_count"; got != want {
		t.Errorf("family of a counter named _count %q, want %q", got, want)
	}
}

// TestLiarRetriedWriteOnce: a write sent again, as a sender does when a starved machine
// lost the first answer to its timeout, brings the same samples and the same lies: each
// sample lied about is in the record once (the matrix counted partial's twice, issue 37),
// while each refused request is a refusal of its own.
func TestLiarRetriedWriteOnce(t *testing.T) {
	const series = `{__name__="x_total", instance="i", job="j"}`
	for _, tc := range []struct {
		lies Lies
		want []Told
	}{
		{Lies{Lie: LieDropSamples}, []Told{{series, 1000, 1}, {series, 2000, 1}}},
		{Lies{Lie: LiePartial}, []Told{{series, 1000, 1}, {series, 2000, 1}}},
		{Lies{Lie: LieRefuse, Status: http.StatusServiceUnavailable}, []Told{{"", 0, 3}, {"", 0, 3}}},
	} {
		t.Run(string(tc.lies.Lie), func(t *testing.T) {
			r := storagetest.StartT(t, storagetest.Options{})
			l, err := Start(r.URL, tc.lies)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			for range 2 {
				post(t, l.URL+WritePath, "application/x-protobuf", v1(t))
			}
			told := toldWithoutArrivals(l)
			if diff := cmp.Diff(tc.want, told); diff != "" {
				t.Errorf("told (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLiarRefuseBody: a refused request is answered with the body given, as a storage
// names the limit it hit.
func TestLiarRefuseBody(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{})
	const body = "the request has been rejected (err-mimir-tenant-max-ingestion-rate)"
	l, err := Start(r.URL, Lies{Lie: LieRefuse, Status: http.StatusTooManyRequests, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, l.URL+WritePath, strings.NewReader(string(snappy.Encode(nil, v2Request(t)))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", v2Type)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTooManyRequests || strings.TrimSpace(string(got)) != body {
		t.Errorf("answered %d %q, want 429 %q", resp.StatusCode, got, body)
	}
}

// TestLiarSetAfter: a deleted series is answered until the moment SetAfter sets, not after it.
func TestLiarSetAfter(t *testing.T) {
	l := &Liar{lies: Lies{Lie: LieDeleteAfter, Share: 1}, after: time.Unix(2000, 0)}
	m := map[string]string{"__name__": "up"}
	if l.hidden(m, time.Unix(1000, 0)) {
		t.Error("hidden before After")
	}
	l.SetAfter(time.Unix(500, 0))
	if !l.hidden(m, time.Unix(1000, 0)) {
		t.Error("answered after SetAfter moved After before now")
	}
}

// TestLiarShiftKeepsStartTimestamp: in 2.0 a shifted sample keeps the start timestamp it was
// written with, so the lie is the shift alone, the one recorded: a receiver that stores a
// start timestamp as a zero sample before its sample (created-timestamp-zero-ingestion)
// stores it as it would without the liar.
func TestLiarShiftKeepsStartTimestamp(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{CreatedZeroIngestion: true})
	l, err := Start(r.URL, Lies{Lie: LieShiftTimestamps, Shift: 7 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	req := writev2.Request{
		Symbols: []string{"", "__name__", "x_total", "job", "j"},
		Timeseries: []writev2.TimeSeries{{
			LabelsRefs: []uint32{1, 2, 3, 4},
			Samples:    []writev2.Sample{{Value: 1, Timestamp: 1000, StartTimestamp: 500}, {Value: 2, Timestamp: 2000, StartTimestamp: 500}},
			Metadata:   writev2.Metadata{Type: writev2.Metadata_METRIC_TYPE_COUNTER},
		}},
	}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if resp := post(t, l.URL+WritePath, v2Type, b); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got, err := r.Series(0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	const series = `{__name__="x_total", job="j"}`
	want := map[string][]storagetest.Sample{series: {{T: 500, V: 0}, {T: 1007, V: 1}, {T: 2007, V: 2}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Told{{series, 1000, 1}, {series, 2000, 1}}, l.Told()); diff != "" {
		t.Errorf("told (-want +got):\n%s", diff)
	}
}
