package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/storage"
)

// Error kinds that are not an HTTP status or an API error type.
const (
	ErrTimeout  = "timeout"  // the client-side deadline (queryTimeout) passed
	ErrNetwork  = "network"  // no answer: connection refused or reset, DNS, TLS
	ErrBadBody  = "bad_body" // an answer that is not the Prometheus API's JSON
	ErrCanceled = "canceled" // the caller's context was canceled
)

// Error is a classified failure of one API request. Kind is one of ErrTimeout, ErrNetwork,
// ErrBadBody, ErrCanceled, "http_<code>" (a non-2xx answer without an API error body) or
// "status_error:<errorType>" (an answer with "status":"error", whatever its HTTP status: the
// error type says more than the code, e.g. Prometheus answers bad_data with 400).
type Error struct {
	Kind   string
	Status int // HTTP status, 0 when none arrived
	Msg    string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (http %d): %s", e.Kind, e.Status, e.Msg)
	}
	return e.Kind + ": " + e.Msg
}

// IsPromQLError reports whether err is the query engine rejecting a query: an answer in the
// API's error envelope whose errorType is bad_data or execution (Prometheus, Thanos, Mimir),
// or 400 or 422 (VictoriaMetrics writes the HTTP status it answers with as the errorType). An
// HTTP status without that envelope (a 404 page), a network failure or a timeout is not: a
// probe that expects a query to be rejected must not take a storage's absence for an answer.
func IsPromQLError(err error) bool {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return false
	}
	switch e.Kind {
	case "status_error:bad_data", "status_error:execution", "status_error:400", "status_error:422":
		return true
	}
	return false
}

// ErrorKind returns the kind of a classified error, and ErrNetwork for any other error.
func ErrorKind(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return ErrNetwork
}

// API is a client of one storage's Prometheus HTTP query API, the one tsbench has: the read
// load and the read-back both use it.
//
// It is ours, not client_golang's api/prometheus/v1, because that client reports an HTTP
// status only inside its error text ("client error: 404"), decodes the error body only of 400
// and 422 answers (so Prometheus' 503 "timeout" and 500 "internal" lose their errorType),
// returns no response to measure, reads answers without a bound and sends times as float64
// seconds. The read load's error kinds (http_503, status_error:bad_data, ...) and the
// read-back's exactness need all of them. It decodes what the read-back must trust exactly:
// timestamps as integer milliseconds from the JSON number's digits (never through a float64
// of seconds), values with strconv.ParseFloat of their text ("NaN" and "±Inf" included).
type API struct {
	client *storage.Client
	base   string      // the API root with a trailing slash: base + "api/v1/query"
	params url.Values  // sent in the URL of every request; nil: none
	header http.Header // set on every request, beneath the client's own headers; nil: none
}

// NewAPI returns a client of the API rooted at readURL (e.g. http://host:8428/ or
// http://host/select/0/prometheus/); a missing trailing slash is added.
func NewAPI(client *storage.Client, readURL string) *API {
	if !strings.HasSuffix(readURL, "/") {
		readURL += "/"
	}
	return &API{client: client, base: readURL}
}

// With returns a client of the same API that sends params in the URL of each request (as
// vmalert sends a group's params, and where a proxy in front of a storage looks) and sets
// header on it. The caller keeps them from naming what a request sets itself (its form's
// parameters; Content-Type; the storage client's auth and headers, which are set last and
// win). Their values may be secrets: no error of the client quotes the URL or a header.
func (a *API) With(params url.Values, header http.Header) *API {
	c := *a
	c.params, c.header = params, header
	return &c
}

// Point is one sample of a result: T in milliseconds, V the value, both exactly as sent.
type Point struct {
	T int64
	V float64
}

// Series is one series of a query result with its points (one for a vector).
type Series struct {
	Metric     map[string]string
	Points     []Point
	Histograms []HistogramPoint // its native histogram points, in time order
}

// Result is a decoded instant or range query answer. A scalar is one Series without
// labels; a string result has no series.
type Result struct {
	Type     string // vector, matrix, scalar, string
	Series   []Series
	Warnings []string
	Infos    []string // info annotations (Prometheus 3); none from older servers
	String   string   // a string result's value
}

// SeriesResult is the answer of /api/v1/series.
type SeriesResult struct {
	Series   []map[string]string
	Warnings []string
}

// NamesResult is the answer of /api/v1/labels and /api/v1/label/<name>/values.
type NamesResult struct {
	Names    []string
	Warnings []string
}

// Instant runs an instant query at t (POST api/v1/query, form-encoded).
func (a *API) Instant(ctx context.Context, query string, t time.Time) (*Result, error) {
	form := url.Values{"query": {query}, "time": {formatTime(t)}}
	return a.query(ctx, "api/v1/query", form)
}

// Range runs a range query from start to end every step (POST api/v1/query_range).
func (a *API) Range(ctx context.Context, query string, start, end time.Time, step time.Duration) (*Result, error) {
	form := url.Values{
		"query": {query}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}
	return a.query(ctx, "api/v1/query_range", form)
}

// SeriesLookup finds the series matching any of matchers between start and end
// (POST api/v1/series).
func (a *API) SeriesLookup(ctx context.Context, matchers []string, start, end time.Time) (*SeriesResult, error) {
	var data []map[string]string
	w, err := a.do(ctx, http.MethodPost, "api/v1/series", lookupForm(matchers, start, end), &data)
	if err != nil {
		return nil, err
	}
	return &SeriesResult{Series: data, Warnings: w}, nil
}

// Labels lists label names of the series matching matchers (all series when none) between
// start and end (POST api/v1/labels).
func (a *API) Labels(ctx context.Context, matchers []string, start, end time.Time) (*NamesResult, error) {
	var data []string
	w, err := a.do(ctx, http.MethodPost, "api/v1/labels", lookupForm(matchers, start, end), &data)
	if err != nil {
		return nil, err
	}
	return &NamesResult{Names: data, Warnings: w}, nil
}

// LabelValues lists the values of label name among the series matching matchers between start
// and end (GET api/v1/label/<name>/values: the API has no POST form of it).
func (a *API) LabelValues(ctx context.Context, name string, matchers []string, start, end time.Time) (*NamesResult, error) {
	var data []string
	w, err := a.do(ctx, http.MethodGet, "api/v1/label/"+url.PathEscape(name)+"/values", lookupForm(matchers, start, end), &data)
	if err != nil {
		return nil, err
	}
	return &NamesResult{Names: data, Warnings: w}, nil
}

func lookupForm(matchers []string, start, end time.Time) url.Values {
	form := url.Values{"start": {formatTime(start)}, "end": {formatTime(end)}}
	if len(matchers) > 0 {
		form["match[]"] = matchers
	}
	return form
}

// formatTime writes t as Unix seconds with millisecond precision, exactly (no float rounding).
func formatTime(t time.Time) string { return FormatMillis(t.UnixMilli()) }

// FormatMillis writes ms as Unix seconds with exactly three decimals: the API's time format,
// exact where a float64 of seconds would round.
func FormatMillis(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return fmt.Sprintf("%s%d.%03d", sign, ms/1000, ms%1000)
}

// Check asks the API the one question every Prometheus-compatible storage answers cheaply,
// the instant query `1` at now; nil when the answer is the API's, a classified *Error else.
func (a *API) Check(ctx context.Context, now time.Time) error {
	_, err := a.Instant(ctx, "1", now)
	return err
}

func (a *API) query(ctx context.Context, path string, form url.Values) (*Result, error) {
	status, b, err := a.send(ctx, http.MethodPost, path, form)
	if err != nil {
		return nil, err
	}
	return decodeQuery(status, b)
}

// decodeQuery decodes the answer of an instant or range query.
func decodeQuery(status int, b []byte) (*Result, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	w, err := decodeEnvelope(status, b, &data)
	if err != nil {
		return nil, err
	}
	res := &Result{Type: data.ResultType, Warnings: w}
	var infos struct {
		Infos []string `json:"infos"`
	}
	if json.Unmarshal(b, &infos) == nil {
		res.Infos = infos.Infos
	}
	bad := func(err error) (*Result, error) {
		return nil, &Error{Kind: ErrBadBody, Status: status, Msg: fmt.Sprintf("%s result: %v", clip(data.ResultType), err)}
	}
	switch data.ResultType {
	case "vector", "matrix":
		var ss []struct {
			Metric     map[string]string `json:"metric"`
			Value      *pair             `json:"value"`
			Values     []pair            `json:"values"`
			Histogram  json.RawMessage   `json:"histogram"`
			Histograms []json.RawMessage `json:"histograms"`
		}
		if err := json.Unmarshal(data.Result, &ss); err != nil {
			return bad(err)
		}
		res.Series = make([]Series, len(ss))
		for i, s := range ss {
			res.Series[i].Metric = s.Metric
			switch {
			case s.Value != nil:
				res.Series[i].Points = []Point{Point(*s.Value)}
			case len(s.Values) > 0:
				res.Series[i].Points = make([]Point, len(s.Values))
				for j, p := range s.Values {
					res.Series[i].Points[j] = Point(p)
				}
			}
			if s.Histogram != nil {
				s.Histograms = append(s.Histograms, s.Histogram)
			}
			for _, raw := range s.Histograms {
				h, err := decodeHistogramPoint(raw)
				if err != nil {
					return bad(fmt.Errorf("histogram of %v: %w", s.Metric, err))
				}
				res.Series[i].Histograms = append(res.Series[i].Histograms, h)
			}
		}
	case "scalar":
		var p pair
		if err := json.Unmarshal(data.Result, &p); err != nil {
			return bad(err)
		}
		res.Series = []Series{{Points: []Point{Point(p)}}}
	case "string":
		var raw [2]json.RawMessage
		if err := json.Unmarshal(data.Result, &raw); err != nil {
			return bad(err)
		}
		if err := json.Unmarshal(raw[1], &res.String); err != nil {
			return bad(err)
		}
	default:
		return bad(errors.New("unknown result type"))
	}
	return res, nil
}

// pair is a [<unix seconds>, "<value>"] sample of the API.
type pair Point

func (p *pair) UnmarshalJSON(b []byte) error {
	var raw [2]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	ms, err := ParseMillis(string(bytes.TrimSpace(raw[0])))
	if err != nil {
		return err
	}
	var v string
	if err := json.Unmarshal(raw[1], &v); err != nil {
		return fmt.Errorf("value %s: %w", clip(string(raw[1])), err)
	}
	// Prometheus writes "NaN", "+Inf" and "-Inf", which ParseFloat takes; ParseFloat maps the
	// shortest or any longer decimal rendering back to the one float64 it denotes.
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("value %q: %w", clip(v), err)
	}
	p.T, p.V = ms, f
	return nil
}

// maxSeconds bounds a timestamp so that its milliseconds fit an int64 (Prometheus' own bound
// is 292 million years; this is 285).
const maxSeconds = 9e15

// ParseMillis turns a timestamp of the API, Unix seconds as a JSON number ("1700000000.123",
// "1700000000", "1700000000.1"), into exact integer milliseconds from its digits. Digits below
// the millisecond round to the nearest; an exponent ("1.7e9") goes through a float64.
func ParseMillis(s string) (int64, error) {
	bad := func(err error) (int64, error) { return 0, fmt.Errorf("timestamp %q: %w", clip(s), err) }
	neg := strings.HasPrefix(s, "-")
	abs := strings.TrimPrefix(s, "-")
	if strings.ContainsAny(abs, "eE") {
		f, err := strconv.ParseFloat(abs, 64)
		if err != nil {
			return bad(err)
		}
		if !(f <= maxSeconds) { // NaN too
			return bad(errors.New("out of range"))
		}
		ms := int64(f*1000 + 0.5)
		if neg {
			ms = -ms
		}
		return ms, nil
	}
	whole, frac, _ := strings.Cut(abs, ".")
	if strings.HasPrefix(whole, "+") || strings.HasPrefix(frac, "+") || strings.HasPrefix(frac, "-") {
		return bad(errors.New("sign inside the number"))
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return bad(err)
	}
	if sec > maxSeconds {
		return bad(errors.New("out of range"))
	}
	if strings.Trim(frac, "0123456789") != "" {
		return bad(errors.New("not a decimal number"))
	}
	var sub int64 // tenths of a millisecond: the first four digits of the fraction
	for i := range 4 {
		sub *= 10
		if i < len(frac) {
			sub += int64(frac[i] - '0')
		}
	}
	ms := sec*1000 + (sub+5)/10
	if neg {
		ms = -ms
	}
	return ms, nil
}

// maxBody bounds what is read of one answer: a series lookup over a big index is large, but
// a benchmark client must not be taken down by one.
const maxBody = 512 << 20

// do sends one request and decodes the data of a successful answer into data.
func (a *API) do(ctx context.Context, method, path string, form url.Values, data any) ([]string, error) {
	status, b, err := a.send(ctx, method, path, form)
	if err != nil {
		return nil, err
	}
	return decodeEnvelope(status, b, data)
}

// send sends one request and reads the answer, at most maxBody of it.
func (a *API) send(ctx context.Context, method, path string, form url.Values) (int, []byte, error) {
	u := a.base + path
	var query []string // the URL's query: a GET's form first, then the extra params
	var body io.Reader
	if method == http.MethodGet {
		query = append(query, form.Encode())
	} else {
		body = strings.NewReader(form.Encode())
	}
	if len(a.params) > 0 {
		query = append(query, a.params.Encode())
	}
	if len(query) > 0 {
		u += "?" + strings.Join(query, "&")
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // the URL carries the extra params, which may be secrets
		}
		return 0, nil, &Error{Kind: ErrNetwork, Msg: err.Error()}
	}
	maps.Copy(req.Header, a.header)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, nil, transportError(ctx, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return 0, nil, transportError(ctx, err)
	}
	if len(b) > maxBody {
		return 0, nil, &Error{Kind: ErrBadBody, Status: resp.StatusCode, Msg: fmt.Sprintf("answer larger than %d bytes", maxBody)}
	}
	return resp.StatusCode, b, nil
}

// decodeEnvelope classifies an answer of the API and decodes its data into data.
func decodeEnvelope(status int, b []byte, data any) ([]string, error) {
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
		Warnings  []string        `json:"warnings"`
	}
	decodeErr := json.Unmarshal(b, &env)
	ok2xx := status >= 200 && status < 300
	switch {
	case decodeErr == nil && env.Status == "error":
		et := env.ErrorType
		if et == "" {
			et = "unknown"
		}
		return nil, &Error{Kind: "status_error:" + et, Status: status, Msg: clip(env.Error)}
	case !ok2xx:
		return nil, &Error{Kind: "http_" + strconv.Itoa(status), Status: status, Msg: clip(string(b))}
	case decodeErr != nil:
		return nil, &Error{Kind: ErrBadBody, Status: status, Msg: clip(decodeErr.Error())}
	case env.Status != "success":
		return nil, &Error{Kind: ErrBadBody, Status: status, Msg: fmt.Sprintf("status %q", clip(env.Status))}
	}
	if err := json.Unmarshal(env.Data, data); err != nil {
		return nil, &Error{Kind: ErrBadBody, Status: status, Msg: "data: " + clip(err.Error())}
	}
	return env.Warnings, nil
}

// transportError classifies an error of sending or reading: the client's deadline, the
// caller's cancellation, or the network.
func transportError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: ErrTimeout, Msg: "no complete answer within the query timeout"}
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return &Error{Kind: ErrCanceled, Msg: "canceled"}
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err // the URL is the caller's to show (redacted), not the error's
	}
	return &Error{Kind: ErrNetwork, Msg: err.Error()}
}

// clip keeps error texts from answers short enough for a report.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
