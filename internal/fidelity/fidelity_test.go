package fidelity

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCacheServesLastPage: scrapes get the page of the last refresh, however many ask, and
// never wait for the exporter.
func TestCacheServesLastPage(t *testing.T) {
	var fetches atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "page %d\n", fetches.Add(1))
	}))
	defer up.Close()
	c := &pageCache{upstream: up.URL, client: up.Client()}
	if err := c.refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	get := func() string {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics/7", nil))
		return rec.Body.String()
	}
	for range 40 {
		if got := get(); got != "page 1\n" {
			t.Fatalf("got %q before a refresh, want page 1", got)
		}
	}
	if err := c.refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "page 2\n" || fetches.Load() != 2 {
		t.Errorf("got %q after %d fetches, want page 2 after 2", got, fetches.Load())
	}
}

func TestQuoteNonFinite(t *testing.T) {
	line := []byte(`{"metric":{"__name__":"x","q":"NaN"},"values":[1,NaN,+Inf,-Inf,2.5],"timestamps":[1,2,3,4,5]}`)
	var got struct {
		Metric     map[string]string `json:"metric"`
		Values     []any             `json:"values"`
		Timestamps []int64           `json:"timestamps"`
	}
	if err := json.Unmarshal(quoteNonFinite(line), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{1.0, "NaN", "+Inf", "-Inf", 2.5}, got.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if got.Metric["q"] != "NaN" || len(got.Timestamps) != 5 {
		t.Errorf("labels or timestamps changed: %+v", got)
	}
}

func TestOnlyLoopback(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:9100/metrics", "http://[::1]:9100/"} {
		if err := loopback(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1:9100/metrics", "http://example.com/", "not a url"} {
		if err := loopback(u); err == nil {
			t.Errorf("%s was accepted", u)
		}
	}
}

func TestTableRatios(t *testing.T) {
	f := func(vmData, changed float64) figures {
		return figures{
			seriesPerTarget: 520, vmSamples: 1000, promSamples: 1000, vmData: vmData, vmTotal: 2 * vmData,
			promChunks: 1500, promTotal: 2000, changed: map[string][2]float64{"node_cpu": {changed, 100}}, exported: 1000, stale: 2,
		}
	}
	var b strings.Builder
	printTable(&b, []pipeline{{name: "real"}, {name: "captured"}, {name: "default"}}, []figures{f(500, 30), f(450, 27), f(600, 33)})
	rows := map[string]string{}
	for line := range strings.Lines(b.String()) {
		f := strings.Fields(line)
		rows[strings.Join(f[:len(f)-5], " ")] = strings.Join(f[len(f)-5:], " ")
	}
	for label, want := range map[string]string{
		"changed samples node_cpu":       "0.300 0.270 0.330 0.90 1.10",
		"VM data bytes/sample":           "0.500 0.450 0.600 0.90 1.20",
		"Prometheus chunks bytes/sample": "1.500 1.500 1.500 1.00 1.00",
	} {
		if rows[label] != want {
			t.Errorf("%s: %q, want %q in\n%s", label, rows[label], want, b.String())
		}
	}
}
