package targets

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/workload"
)

// newGen is the embedded node_exporter profile's workload: 20 targets at 5 s, 10 % churn
// every 10 s, started 65 s ago so that six churn rounds have passed.
func newGen(t *testing.T) *workload.Generator {
	t.Helper()
	p, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := workload.New(p, workload.Options{
		Seed: 7, Start: time.Now().Add(-65 * time.Second), Hosts: 20, ScrapeInterval: 5 * time.Second,
		ChurnPercent: 10, ChurnInterval: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func get(t *testing.T, url, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestSD lists every target with the direct writer's labels at its current revision, at the
// address the agent asked, and nothing once stopped.
func TestSD(t *testing.T) {
	g := newGen(t)
	s := New(Options{Gen: g})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	_, b := get(t, ts.URL+SDPath, "")
	var groups []sdGroup
	if err := json.Unmarshal(b, &groups); err != nil {
		t.Fatal(err)
	}
	if len(groups) != 20 {
		t.Fatalf("%d groups, want 20", len(groups))
	}
	churned := 0
	for i, grp := range groups {
		rev := revisionAt(g, i, time.Now().UnixMilli())
		churned += int(min(rev, 1))
		want := map[string]string{
			"__metrics_path__": "/targets/" + strconv.Itoa(i) + "/" + strconv.FormatInt(rev, 10) + "/metrics",
			"instance":         g.Labels(i, 0, 0)[labelIndex(g.Labels(i, 0, 0), "instance")].Value,
			"job":              "node_exporter",
			"revision":         strconv.FormatInt(rev, 10),
		}
		if diff := cmp.Diff(want, grp.Labels); diff != "" {
			t.Errorf("target %d labels (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff([]string{strings.TrimPrefix(ts.URL, "http://")}, grp.Targets); diff != "" {
			t.Errorf("target %d address (-want +got):\n%s", i, diff)
		}
	}
	// Six rounds of 2 targets each: some target has a new revision.
	if churned == 0 {
		t.Error("no target churned after six rounds")
	}
	s.Stop()
	if _, b := get(t, ts.URL+SDPath, ""); strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("stopped: list %s, want []", b)
	}
	if resp, _ := get(t, ts.URL+"/targets/0/0/metrics", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("stopped: page status %d, want 404", resp.StatusCode)
	}
}

func labelIndex(ls []workload.Label, name string) int {
	for i, l := range ls {
		if l.Name == name {
			return i
		}
	}
	return -1
}

// TestPageParses serves a page in each format and parses it with Prometheus' own parsers:
// every sample is the workload's value at the served time, bit for bit, with the profile's
// labels, and the served log and counts say what was served.
func TestPageParses(t *testing.T) {
	for _, tc := range []struct {
		name, accept, contentType string
		timestamps                bool
	}{
		{"text", "text/plain;version=0.0.4", "text/plain", false},
		{"text with timestamps", "", "text/plain", true},
		{"openmetrics with timestamps", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5", "application/openmetrics-text", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGen(t)
			s := New(Options{Gen: g, ExposeTimestamps: tc.timestamps})
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()
			const target, rev = 3, 2
			before := time.Now().UnixMilli()
			resp, b := get(t, ts.URL+"/targets/3/2/metrics", tc.accept)
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.contentType) {
				t.Fatalf("content type %q, want %s", ct, tc.contentType)
			}
			w := s.Workload()
			if w.Revision(target, 0) != rev || w.ScrapeTime(target, 0) < before {
				t.Fatalf("served log: revision %d at %d, want %d at >= %d", w.Revision(target, 0), w.ScrapeTime(target, 0), rev, before)
			}
			at := w.ScrapeTime(target, 0)
			p, err := textparse.New(b, resp.Header.Get("Content-Type"), labels.NewSymbolTable(), textparse.ParserOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				e, err := p.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				if e != textparse.EntrySeries {
					continue
				}
				var ls labels.Labels
				p.Labels(&ls)
				_, ts, v := p.Series()
				wantTS := !tc.timestamps || (ts != nil && *ts == at)
				got = append(got, ls.String()+" "+bits(v)+" "+strconv.FormatBool(wantTS))
			}
			var want []string
			for s := range g.SeriesPerTarget() {
				b := labels.NewScratchBuilder(0)
				for _, l := range g.Labels(target, s, rev) {
					if !isTargetLabel(l.Name) {
						b.Add(l.Name, l.Value)
					}
				}
				b.Sort()
				want = append(want, b.Labels().String()+" "+bits(g.Value(target, s, at))+" true")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("page (-want +got):\n%s", diff)
			}
			sv := s.Served()
			if sv.Scrapes != 1 || sv.Samples != int64(g.SeriesPerTarget()) || sv.Bytes != int64(len(b)) {
				t.Errorf("served %+v, want 1 scrape of %d samples, %d bytes", sv, g.SeriesPerTarget(), len(b))
			}
			// The read-back expects exactly the page: the same values, the target's labels added.
			var n int
			app := appenderFunc(func(ls []workload.Label, ts int64, v float64) {
				if ts != at || math.Float64bits(v) != math.Float64bits(g.Value(target, n, at)) || ls[labelIndex(ls, "revision")].Value != "2" {
					t.Errorf("read-back series %d: %v at %d = %v", n, ls, ts, v)
				}
				n++
			})
			if values, markers := w.Scrape(app, target, 0); values != g.SeriesPerTarget() || markers != 0 {
				t.Errorf("read-back scrape: %d values %d markers", values, markers)
			}
		})
	}
}

type appenderFunc func(ls []workload.Label, t int64, v float64)

func (f appenderFunc) Append(ls []workload.Label, t int64, v float64) { f(ls, t, v) }

// bits shows a float64 exactly; every NaN as NaN (the text formats have one NaN).
func bits(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return strconv.FormatUint(math.Float64bits(v), 16)
}

func TestBadTargetPaths(t *testing.T) {
	s := New(Options{Gen: newGen(t)})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, path := range []string{"/targets/20/0/metrics", "/targets/-1/0/metrics", "/targets/x/0/metrics", "/targets/0/x/metrics"} {
		if resp, _ := get(t, ts.URL+path, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", path, resp.StatusCode)
		}
	}
	if sv := s.Served(); sv.Failed != 4 || sv.Scrapes != 0 {
		t.Errorf("served %+v, want 4 failed and none served", sv)
	}
}

func TestWantsOpenMetrics(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                         false,
		"text/plain;version=0.0.4": false,
		// Prometheus 2.42's default.
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1": true,
		"text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5":                                                                       false,
		"*/*": false,
	} {
		if got := wantsOpenMetrics(accept); got != want {
			t.Errorf("wantsOpenMetrics(%q) = %t, want %t", accept, got, want)
		}
	}
}

// TestExporterCache serves 50 concurrent scrapes from one fetch of the exporter, and fetches
// again once the copy is older than the TTL.
func TestExporterCache(t *testing.T) {
	var fetches int
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches++ // the cache's lock serialises fetches
		time.Sleep(50 * time.Millisecond)
		_, _ = io.WriteString(w, "# HELP a A.\n# TYPE a gauge\na 1\nb{x=\"1\"} 2\n\n")
	}))
	defer exporter.Close()
	s := New(Options{Gen: newGen(t), ExporterURL: exporter.URL, CacheTTL: 300 * time.Millisecond})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	done := make(chan []byte)
	for i := range 50 {
		go func() {
			_, b := get(t, ts.URL+"/targets/"+strconv.Itoa(i%20)+"/0/metrics", "")
			done <- b
		}()
	}
	for range 50 {
		if b := <-done; !strings.Contains(string(b), "b{x=\"1\"} 2") {
			t.Errorf("page %q, want the exporter's", b)
		}
	}
	if fetches != 1 {
		t.Errorf("%d fetches for 50 scrapes within the TTL, want 1", fetches)
	}
	time.Sleep(350 * time.Millisecond)
	get(t, ts.URL+"/targets/0/0/metrics", "")
	sv := s.Served()
	if fetches != 2 || sv.ExporterFetches != 2 || sv.Scrapes != 51 || sv.Samples != 51*2 {
		t.Errorf("fetches %d, served %+v: want 2 fetches, 51 scrapes of 2 samples", fetches, sv)
	}
}

// TestNewRevisions counts the revisions served beyond each target's first: the churn the
// agent saw, however its scrapes of an old and a new revision interleave.
func TestNewRevisions(t *testing.T) {
	s := New(Options{Gen: newGen(t)})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, path := range []string{"/targets/0/0/metrics", "/targets/0/1/metrics", "/targets/0/0/metrics", "/targets/0/1/metrics", "/targets/1/4/metrics", "/targets/2/0/metrics", "/targets/2/1/metrics", "/targets/2/2/metrics"} {
		if resp, _ := get(t, ts.URL+path, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", path, resp.StatusCode)
		}
	}
	if got := s.Workload().NewRevisions(); got != 3 {
		t.Errorf("new revisions %d, want 3 (target 0: 1, target 2: 2)", got)
	}
}

// TestSDReplicas lists writeReplicas × targetsCount targets, each with its replica label.
func TestSDReplicas(t *testing.T) {
	p, err := workload.LoadProfile(tsbench.Assets, "profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := workload.New(p, workload.Options{Seed: 1, Start: time.Now(), Hosts: 3, Replicas: 2, ScrapeInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(Options{Gen: g}).Handler())
	defer ts.Close()
	_, b := get(t, ts.URL+SDPath, "")
	var groups []sdGroup
	if err := json.Unmarshal(b, &groups); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, grp := range groups {
		got = append(got, grp.Labels["instance"]+" replica="+grp.Labels["replica"])
	}
	want := []string{
		"host-000000:9100 replica=0", "host-000001:9100 replica=0", "host-000002:9100 replica=0",
		"host-000000:9100 replica=1", "host-000001:9100 replica=1", "host-000002:9100 replica=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}
