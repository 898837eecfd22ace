package storagetest

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
)

// TestLiarWrites: each write lie reaches the TSDB as told, the answer is the receiver's, and
// the record holds exactly the samples lied about, in 1.0 and 2.0.
func TestLiarWrites(t *testing.T) {
	v1 := func(t *testing.T) []byte {
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
	stale := func(t *testing.T) []byte {
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
	const series = `{__name__="x_total", instance="i", job="j"}`
	for _, tc := range []struct {
		name string
		lies Lies
		body func(*testing.T) []byte
		ct   string
		want map[string][]Sample // floats stored, NaN compared by bits
		told []Told
	}{
		{
			name: "dropSamples", lies: Lies{Lie: LieDropSamples}, body: v1, ct: "application/x-protobuf",
			want: map[string][]Sample{series: {{T: 3000, V: math.NaN()}}},
			told: []Told{{series, 1000, 1}, {series, 2000, 1}},
		},
		{
			name: "ulp", lies: Lies{Lie: LieULP}, body: v1, ct: "application/x-protobuf",
			want: map[string][]Sample{series: {{1000, math.Nextafter(1.5, 2)}, {2000, math.Nextafter(2, 3)}, {3000, math.NaN()}}},
			told: []Told{{series, 1000, 1}, {series, 2000, 1}},
		},
		{
			name: "round", lies: Lies{Lie: LieRound}, body: v1, ct: "application/x-protobuf",
			want: map[string][]Sample{series: {{1000, 2}, {2000, 2}, {3000, math.NaN()}}},
			told: []Told{{series, 1000, 1}},
		},
		{
			name: "shift", lies: Lies{Lie: LieShiftTimestamps, Shift: 7 * time.Millisecond}, body: v1, ct: "application/x-protobuf",
			want: map[string][]Sample{series: {{1007, 1.5}, {2007, 2}, {3007, math.NaN()}}},
			told: []Told{{series, 1000, 1}, {series, 2000, 1}, {series, 3000, 1}},
		},
		{
			name: "renameJobInstance", lies: Lies{Lie: LieRenameJobInstance}, body: v1, ct: "application/x-protobuf",
			want: map[string][]Sample{`{__name__="x_total", service_instance_id="i", service_name="j"}`: {{1000, 1.5}, {2000, 2}, {3000, math.NaN()}}},
			told: []Told{{series, 1000, 1}, {series, 2000, 1}, {series, 3000, 1}},
		},
		{
			name: "addLabel/v2", lies: Lies{Lie: LieAddLabel, Label: labels.Label{Name: "tenant_id", Value: "t"}}, body: v2Request, ct: v2Type,
			want: map[string][]Sample{`{__name__="x_total", job="j", tenant_id="t"}`: {{1000, 1}, {2000, 2}}},
			told: []Told{{`{__name__="x_total", job="j"}`, 1000, 1}, {`{__name__="x_total", job="j"}`, 2000, 1}},
		},
		{
			name: "dropSamples/v2", lies: Lies{Lie: LieDropSamples}, body: v2Request, ct: v2Type,
			want: map[string][]Sample{},
			told: []Told{{`{__name__="x_total", job="j"}`, 1000, 1}, {`{__name__="x_total", job="j"}`, 2000, 1}},
		},
		{
			name: "dropStale", lies: Lies{Lie: LieDropStale}, body: stale, ct: "application/x-protobuf",
			want: map[string][]Sample{series: {{1000, 1.5}}},
			told: []Told{{series, 2000, 1}},
		},
		{
			name: "refuse", lies: Lies{Lie: LieRefuse, Status: http.StatusServiceUnavailable}, body: v1, ct: "application/x-protobuf",
			want: map[string][]Sample{},
			told: []Told{{"", 0, 3}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := start(t, Options{})
			l, err := StartLiar(r.URL, tc.lies)
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
			told := l.Told()
			for i := range told {
				if told[i].Series == "" {
					told[i].T = 0 // a request's arrival
				}
			}
			if diff := cmp.Diff(tc.told, told); diff != "" {
				t.Errorf("told (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLiarQueries: a partial answer leaves out the chosen series, and the record holds their
// samples with a number, written before.
func TestLiarQueries(t *testing.T) {
	r := start(t, Options{})
	l, err := StartLiar(r.URL, Lies{Lie: LiePartial, Share: 0.5})
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

// TestLiarDelay: an answer leaves out the points younger than Delay, and a series left with
// none; older points and other answers stay.
func TestLiarDelay(t *testing.T) {
	l := &Liar{lies: Lies{Lie: LieDelay, Delay: 10 * time.Second}}
	now := time.Unix(1000, 0)
	in := `{"status":"success","data":{"resultType":"matrix","result":[` +
		`{"metric":{"__name__":"a"},"values":[[985,"1"],[995,"2"]]},` +
		`{"metric":{"__name__":"b"},"values":[[999,"3"]]}]}}`
	out, err := l.lieInAnswer([]byte(in), now)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"a"},"values":[[985,"1"]]}]}}`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	vector := `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"a"},"value":[995,"2"]}]}}`
	if out, err = l.lieInAnswer([]byte(vector), now); err != nil || !strings.Contains(string(out), `"result":[]`) {
		t.Errorf("an instant answer 5 s old under a 10 s delay: %s, %v; want no series", out, err)
	}
}
