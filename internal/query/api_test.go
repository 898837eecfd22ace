package query

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/model/value"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
)

// seen is one request as the fake query API received it.
type seen struct {
	Method, Path, ContentType, Auth, Tenant string
	Form                                    url.Values
}

func newClient(t *testing.T, st config.Storage) *storage.Client {
	t.Helper()
	c, err := storage.NewClient("s", st, storage.Read, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestAPIRequests(t *testing.T) {
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		form := r.PostForm
		if r.Method == http.MethodGet {
			form = r.URL.Query()
		}
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, ct, r.Header.Get("Authorization"), r.Header.Get("X-Scope-OrgID"), form})
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/query"), strings.HasSuffix(r.URL.Path, "/query_range"):
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1700000000.5,"NaN"]}]}}`)
		case strings.HasSuffix(r.URL.Path, "/series"):
			_, _ = io.WriteString(w, `{"status":"success","data":[{"__name__":"up"}],"warnings":["w"]}`)
		default:
			_, _ = io.WriteString(w, `{"status":"success","data":["a","b"]}`)
		}
	}))
	defer srv.Close()
	st := config.Storage{ReadBearerToken: "tok", ReadHeaders: map[string]string{"X-Scope-OrgID": "team"}}
	api := NewAPI(newClient(t, st), srv.URL+"/prefix") // no trailing slash: added
	ctx := context.Background()
	at := time.UnixMilli(1_700_000_000_123)
	res, err := api.Instant(ctx, `rate(x[5m])`, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) != 1 || res.Series[0].Points[0].T != 1_700_000_000_500 || !math.IsNaN(res.Series[0].Points[0].V) {
		t.Errorf("instant result = %+v", res)
	}
	if _, err := api.Range(ctx, "up", at.Add(-time.Hour), at, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	sr, err := api.SeriesLookup(ctx, []string{`{a="1"}`}, at.Add(-time.Hour), at)
	if err != nil || len(sr.Series) != 1 || len(sr.Warnings) != 1 {
		t.Errorf("series = %+v, %v", sr, err)
	}
	if _, err := api.Labels(ctx, nil, at.Add(-time.Hour), at); err != nil {
		t.Fatal(err)
	}
	nr, err := api.LabelValues(ctx, "instance", []string{`{job="j"}`}, at.Add(-time.Hour), at)
	if err != nil || len(nr.Names) != 2 {
		t.Errorf("label values = %+v, %v", nr, err)
	}
	const form = "application/x-www-form-urlencoded"
	want := []seen{
		{"POST", "/prefix/api/v1/query", form, "Bearer tok", "team", url.Values{"query": {`rate(x[5m])`}, "time": {"1700000000.123"}}},
		{"POST", "/prefix/api/v1/query_range", form, "Bearer tok", "team", url.Values{"query": {"up"}, "start": {"1699996400.123"}, "end": {"1700000000.123"}, "step": {"15"}}},
		{"POST", "/prefix/api/v1/series", form, "Bearer tok", "team", url.Values{"match[]": {`{a="1"}`}, "start": {"1699996400.123"}, "end": {"1700000000.123"}}},
		{"POST", "/prefix/api/v1/labels", form, "Bearer tok", "team", url.Values{"start": {"1699996400.123"}, "end": {"1700000000.123"}}},
		{"GET", "/prefix/api/v1/label/instance/values", "", "Bearer tok", "team", url.Values{"match[]": {`{job="j"}`}, "start": {"1699996400.123"}, "end": {"1700000000.123"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestAPIBasicAuth(t *testing.T) {
	var user, pass string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ = r.BasicAuth()
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}`)
	}))
	defer srv.Close()
	api := NewAPI(newClient(t, config.Storage{BasicAuth: &config.BasicAuth{Username: "u", Password: "p"}}), srv.URL+"/")
	res, err := api.Instant(context.Background(), "1+1", time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if user != "u" || pass != "p" || res.Type != "scalar" || res.Series[0].Points[0] != (Point{T: 1000, V: 2}) {
		t.Errorf("user %q pass %q result %+v", user, pass, res)
	}
}

func TestAPIErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"plain 503", 503, "overloaded", "http_503"},
		{"plain 404", 404, "404 page not found", "http_404"},
		{"prometheus bad_data", 400, `{"status":"error","errorType":"bad_data","error":"parse error"}`, "status_error:bad_data"},
		{"victoriametrics 422", 422, `{"status":"error","errorType":"422","error":"cannot parse"}`, "status_error:422"},
		{"error without type", 500, `{"status":"error","error":"x"}`, "status_error:unknown"},
		{"not json", 200, "<html>", ErrBadBody},
		{"unknown status", 200, `{"status":"maybe"}`, ErrBadBody},
		{"bad data", 200, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}}`, ErrBadBody},
		{"unknown result type", 200, `{"status":"success","data":{"resultType":"tensor","result":[]}}`, ErrBadBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			_, err := NewAPI(newClient(t, config.Storage{}), srv.URL).Instant(context.Background(), "up", time.Unix(0, 0))
			if got := ErrorKind(err); got != tc.want {
				t.Errorf("kind = %q (err %v), want %q", got, err, tc.want)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := NewAPI(newClient(t, config.Storage{}), srv.URL).Instant(ctx, "up", time.Unix(0, 0))
		if got := ErrorKind(err); got != ErrTimeout {
			t.Errorf("kind = %q (err %v), want timeout", got, err)
		}
	})
	t.Run("network", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		u := srv.URL
		srv.Close() // nothing listens there any more
		_, err := NewAPI(newClient(t, config.Storage{}), u).Instant(context.Background(), "up", time.Unix(0, 0))
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrNetwork {
			t.Errorf("err = %v, want a network error", err)
		}
	})
}

func TestErrorHidesSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(401)
		_, _ = io.WriteString(w, "unauthorized")
	}))
	defer srv.Close()
	_, err := NewAPI(newClient(t, config.Storage{ReadBearerToken: "s3cret-token"}), srv.URL).Instant(context.Background(), "up", time.Unix(0, 0))
	if err == nil || strings.Contains(err.Error(), "s3cret") || ErrorKind(err) != "http_401" {
		t.Errorf("err = %v", err)
	}
}

// With sends its params in the URL of every request, after a GET's own form and apart from
// a POST's body, and its headers beside the storage's auth and headers; the client it was
// made from sends neither. A failed request's error quotes neither.
func TestAPIWith(t *testing.T) {
	type req struct {
		Method, Path, RawQuery, Body, Auth, Team, Tenant string
	}
	var mu sync.Mutex
	var got []req
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, req{r.Method, r.URL.Path, r.URL.RawQuery, string(body), r.Header.Get("Authorization"), r.Header.Get("X-Team"), r.Header.Get("X-Scope-OrgID")})
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/query") {
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
			return
		}
		_, _ = io.WriteString(w, `{"status":"success","data":["a"]}`)
	}))
	defer srv.Close()
	base := NewAPI(newClient(t, config.Storage{ReadBearerToken: "tok", ReadHeaders: map[string]string{"X-Scope-OrgID": "team"}}), srv.URL)
	group := base.With(url.Values{"nocache": {"1"}, "extra_label": {"env=dev", "dc=a"}}, http.Header{"X-Team": {"perf"}})
	ctx := context.Background()
	at := time.UnixMilli(1_700_000_000_123)
	for _, api := range []*API{group, base} {
		if _, err := api.Instant(ctx, "up", at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := group.LabelValues(ctx, "job", nil, at.Add(-time.Hour), at); err != nil {
		t.Fatal(err)
	}
	want := []req{
		{"POST", "/api/v1/query", "extra_label=env%3Ddev&extra_label=dc%3Da&nocache=1", "query=up&time=1700000000.123", "Bearer tok", "perf", "team"},
		{"POST", "/api/v1/query", "", "query=up&time=1700000000.123", "Bearer tok", "", "team"},
		{"GET", "/api/v1/label/job/values", "end=1700000000.123&start=1699996400.123&extra_label=env%3Ddev&extra_label=dc%3Da&nocache=1", "", "Bearer tok", "perf", "team"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	srv.Close() // connection refused from here on
	const secret = "s3cret-key"
	_, err := base.With(url.Values{"api_key": {secret}}, http.Header{"X-Api-Key": {secret}}).Instant(ctx, "up", at)
	if err == nil || ErrorKind(err) != ErrNetwork || strings.Contains(err.Error(), secret) {
		t.Errorf("err = %v, want a network error without the secret", err)
	}
}

// TLS on reads: with tls.caFile holding the server's certificate, an instant query goes through;
// without it, the unknown authority is a network error.
func TestAPITLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, vector2)
	}))
	srv.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError) // the refused handshake
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := NewAPI(newClient(t, config.Storage{TLS: config.TLS{CAFile: ca}}), srv.URL).Instant(t.Context(), "up", time.Unix(1, 0))
	if err != nil || len(res.Series) != 2 {
		t.Errorf("with the CA: %+v, %v; want 2 series", res, err)
	}
	_, err = NewAPI(newClient(t, config.Storage{}), srv.URL).Instant(t.Context(), "up", time.Unix(1, 0))
	if ErrorKind(err) != ErrNetwork || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("without the CA: %v, want a network error for the unknown authority", err)
	}
}

func TestParseMillis(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1700000000.123", 1_700_000_000_123},
		{"1700000000", 1_700_000_000_000},
		{"1700000000.1", 1_700_000_000_100},
		{"1700000000.1236", 1_700_000_000_124}, // below the millisecond: the nearest
		{"1700000000.1234999", 1_700_000_000_123},
		{"1.7e9", 1_700_000_000_000},
		{"-1.5", -1500},
		{"-0.001", -1},
	} {
		got, err := ParseMillis(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseMillis(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if err == nil && !strings.ContainsAny(tc.in, "eE") && len(tc.in) <= len("1700000000.123") {
			if back, _ := ParseMillis(FormatMillis(got)); back != got {
				t.Errorf("ParseMillis(FormatMillis(%d)) = %d", got, back)
			}
		}
	}
	for _, bad := range []string{"", "x", "1.2.3", "1.-5", "1.+5", "1.5x", "99999999999999999999", "1e400"} {
		if ms, err := ParseMillis(bad); err == nil {
			t.Errorf("ParseMillis(%q) = %d, want an error", bad, ms)
		}
	}
}

// The read-back trusts every value and timestamp bit for bit: a value's text parses to the one
// float64 it denotes (17 digits, NaN, ±Inf), a timestamp to its integer milliseconds.
func TestDecodeQueryExact(t *testing.T) {
	body := `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"b":"2","a":"1"},"values":[[1700000000.123,"0.30000000000000004"],[1700000000.124,"NaN"],[1700000000.125,"+Inf"],[1700000000.126,"-0"]]}]}}`
	res, err := decodeQuery(200, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{{1700000000123, math.Nextafter(0.3, 1)}, {1700000000124, math.NaN()}, {1700000000125, math.Inf(1)}, {1700000000126, math.Copysign(0, -1)}}
	if diff := cmp.Diff(want, res.Series[0].Points, cmp.Comparer(func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	})); diff != "" || res.Type != "matrix" || res.Series[0].Metric["a"] != "1" {
		t.Errorf("decoded %+v (-want +got):\n%s", res, diff)
	}
}

// Only the engine's rejection of a query is a PromQL error: not a 404 page, not a timeout,
// not the network, not an API error that says the storage is unavailable.
func TestIsPromQLError(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		{400, `{"status":"error","errorType":"bad_data","error":"1:5: parse error"}`, true},
		{422, `{"status":"error","errorType":"execution","error":"vector cannot contain metrics with the same labelset"}`, true},
		{422, `{"status":"error","errorType":"422","error":"cannot parse"}`, true}, // VictoriaMetrics
		{400, `{"status":"error","errorType":"400","error":"missing query arg"}`, true},
		{503, `{"status":"error","errorType":"timeout","error":"query timed out"}`, false},
		{503, `{"status":"error","errorType":"503","error":"cannot handle more than 8 concurrent requests"}`, false},
		{404, "404 page not found", false},
		{400, "bad request", false},
		{200, "<html>", false},
	} {
		_, err := decodeQuery(tc.status, []byte(tc.body))
		if got := IsPromQLError(err); got != tc.want {
			t.Errorf("%d %s: IsPromQLError(%v) = %v, want %v", tc.status, tc.body, err, got, tc.want)
		}
	}
	for _, err := range []error{nil, &Error{Kind: ErrTimeout}, &Error{Kind: ErrNetwork}, errors.New("x")} {
		if IsPromQLError(err) {
			t.Errorf("IsPromQLError(%v) = true", err)
		}
	}
}

func TestDecodeExport(t *testing.T) {
	body := `{"metric":{"__name__":"up","job":"a"},"values":[1,NaN,null,+Inf,0.1],"timestamps":[1000,2000,3000,4000,5000]}
{"metric":{"__name__":"up","job":"b"},"values":[],"timestamps":[]}
`
	res, err := decodeExport(200, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) != 2 || res.Series[0].Metric["job"] != "a" {
		t.Fatalf("series %+v", res.Series)
	}
	want := []uint64{math.Float64bits(1), 0, value.StaleNaN, math.Float64bits(math.Inf(1)), math.Float64bits(0.1)}
	for i, p := range res.Series[0].Points {
		if p.T != int64(i+1)*1000 || (i != 1 && math.Float64bits(p.V) != want[i]) || (i == 1 && !math.IsNaN(p.V)) {
			t.Errorf("point %d = %v, want %d at %d", i, p, want[i], (i+1)*1000)
		}
	}
	if value.IsStaleNaN(res.Series[0].Points[1].V) || !value.IsStaleNaN(res.Series[0].Points[2].V) {
		t.Errorf("NaN and the marker: %v", res.Series[0].Points)
	}
	for _, bad := range []string{`{"values":[1],"timestamps":[]}`, `{"values":[true],"timestamps":[1]}`, `{`} {
		if _, err := decodeExport(200, []byte(bad)); ErrorKind(err) != ErrBadBody {
			t.Errorf("decodeExport(%s) = %v, want bad_body", bad, err)
		}
	}
	if _, err := decodeExport(404, []byte("not found")); ErrorKind(err) != "http_404" {
		t.Errorf("404: %v", err)
	}
}
