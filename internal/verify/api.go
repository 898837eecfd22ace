package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/tsbench/tsbench/internal/storage"
)

// reader is verify's own client of the Prometheus HTTP API. It is not query.API because
// read-back needs what a general client need not keep: every value as the exact float64 its
// text parses to (strconv.ParseFloat of the JSON string, "NaN" and "±Inf" included), every
// timestamp as exact integer milliseconds parsed from the JSON number's digits (never through
// a float64 of seconds), the result type as sent (a probe tells "scalar" from "vector"), and
// the error type of a rejected query (a probe expects a type error).
type reader struct {
	client *storage.Client
	base   string // readURL with a trailing slash
}

func newReader(client *storage.Client, readURL string) *reader {
	if !strings.HasSuffix(readURL, "/") {
		readURL += "/"
	}
	return &reader{client: client, base: readURL}
}

// point is one sample as a storage returned it.
type point struct {
	T int64 // milliseconds
	V float64
}

// series is one series of a result: its labels, sorted by name, and its points.
type series struct {
	Labels []label
	Points []point
}

type label struct{ Name, Value string }

// result is a decoded query answer.
type result struct {
	Type   string   // "matrix", "vector", "scalar", "string"
	Series []series // matrix and vector; a scalar is one series without labels
}

// apiError is an answer with status "error" (or a non-2xx status): the query was rejected.
type apiError struct {
	Status    int
	ErrorType string
	Message   string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("status %d %s: %s", e.Status, e.ErrorType, e.Message)
}

// instant runs query at ms.
func (r *reader) instant(ctx context.Context, query string, ms int64) (*result, error) {
	return r.do(ctx, "api/v1/query", url.Values{"query": {query}, "time": {formatMillis(ms)}})
}

// rangeQuery runs query from start to end (ms) every step (ms).
func (r *reader) rangeQuery(ctx context.Context, query string, start, end, step int64) (*result, error) {
	return r.do(ctx, "api/v1/query_range", url.Values{
		"query": {query}, "start": {formatMillis(start)}, "end": {formatMillis(end)}, "step": {formatMillis(step)},
	})
}

func (r *reader) do(ctx context.Context, path string, form url.Values) (*result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	return decodeResponse(resp.StatusCode, body)
}

type rawResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

type rawSeries struct {
	Metric map[string]string    `json:"metric"`
	Values [][2]json.RawMessage `json:"values"`
	Value  *[2]json.RawMessage  `json:"value"`
}

func decodeResponse(status int, body []byte) (*result, error) {
	var raw rawResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		if status/100 != 2 {
			return nil, &apiError{Status: status, ErrorType: "http", Message: truncate(string(body), 200)}
		}
		return nil, fmt.Errorf("decode response: %w", err)
	}
	if raw.Status != "success" || status/100 != 2 {
		return nil, &apiError{Status: status, ErrorType: raw.ErrorType, Message: truncate(raw.Error, 200)}
	}
	res := &result{Type: raw.Data.ResultType}
	switch res.Type {
	case "matrix", "vector":
		var list []rawSeries
		if err := json.Unmarshal(raw.Data.Result, &list); err != nil {
			return nil, fmt.Errorf("decode %s: %w", res.Type, err)
		}
		for _, rs := range list {
			s := series{Labels: sortedLabels(rs.Metric)}
			pairs := rs.Values
			if rs.Value != nil {
				pairs = append(pairs, *rs.Value)
			}
			for _, p := range pairs {
				pt, err := decodePoint(p)
				if err != nil {
					return nil, err
				}
				s.Points = append(s.Points, pt)
			}
			res.Series = append(res.Series, s)
		}
	case "scalar", "string":
		var p [2]json.RawMessage
		if err := json.Unmarshal(raw.Data.Result, &p); err != nil {
			return nil, fmt.Errorf("decode %s: %w", res.Type, err)
		}
		pt, err := decodePoint(p)
		if err != nil {
			return nil, err
		}
		res.Series = []series{{Points: []point{pt}}}
	default:
		return nil, fmt.Errorf("unknown result type %q", res.Type)
	}
	return res, nil
}

// decodePoint parses [seconds, "value"]: the timestamp from its decimal digits to exact
// milliseconds, the value with strconv.ParseFloat, which maps the shortest or any longer
// decimal rendering back to the one float64 it denotes.
func decodePoint(p [2]json.RawMessage) (point, error) {
	ms, err := parseMillis(string(bytes.TrimSpace(p[0])))
	if err != nil {
		return point{}, err
	}
	var text string
	if err := json.Unmarshal(p[1], &text); err != nil {
		return point{}, fmt.Errorf("value %s: %w", truncate(string(p[1]), 40), err)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return point{}, fmt.Errorf("value %q: %w", text, err)
	}
	return point{T: ms, V: v}, nil
}

// parseMillis turns "1700000000.123" (or "1700000000", "1700000000.1") into 1700000000123.
// A timestamp with digits below the millisecond is rounded to the nearest millisecond.
func parseMillis(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("timestamp %q: %w", s, err)
		}
		ms := int64(f*1000 + 0.5)
		if neg {
			ms = -ms
		}
		return ms, nil
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %w", s, err)
	}
	for len(frac) < 4 {
		frac += "0"
	}
	sub, err := strconv.ParseInt(frac[:4], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %w", s, err)
	}
	ms := sec*1000 + (sub+5)/10
	if neg {
		ms = -ms
	}
	return ms, nil
}

// formatMillis renders ms as seconds with exactly three decimals.
func formatMillis(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return fmt.Sprintf("%s%d.%03d", sign, ms/1000, ms%1000)
}

func sortedLabels(m map[string]string) []label {
	ls := make([]label, 0, len(m))
	for k, v := range m {
		ls = append(ls, label{k, v})
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
	return ls
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// isAPIError reports whether err is a rejected query (not a transport problem).
func isAPIError(err error) (*apiError, bool) {
	var ae *apiError
	ok := errors.As(err, &ae)
	return ae, ok
}

// export reads raw samples from VictoriaMetrics' /api/v1/export (JSON lines, one series per
// line, values as JSON numbers and a staleness marker as null) over [start, end] in ms.
// It shows what the storage holds without the query engine: markers included.
func (r *reader) export(ctx context.Context, selector string, start, end int64) (*result, error) {
	form := url.Values{"match[]": {selector}, "start": {formatMillis(start)}, "end": {formatMillis(end)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"api/v1/export", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &apiError{Status: resp.StatusCode, ErrorType: "http", Message: truncate(string(body), 200)}
	}
	return decodeExport(body)
}

func decodeExport(body []byte) (*result, error) {
	// VictoriaMetrics writes ±Inf and NaN values as bare words, which JSON lacks: quote them
	// where a value starts (after "[" or ",").
	for _, word := range []string{"+Inf", "-Inf", "NaN"} {
		for _, before := range []string{"[", ","} {
			body = bytes.ReplaceAll(body, []byte(before+word), []byte(before+`"`+word+`"`))
		}
	}
	res := &result{Type: "matrix"}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for dec.More() {
		var line struct {
			Metric     map[string]string `json:"metric"`
			Values     []any             `json:"values"`
			Timestamps []int64           `json:"timestamps"`
		}
		if err := dec.Decode(&line); err != nil {
			return nil, fmt.Errorf("decode export: %w", err)
		}
		if len(line.Values) != len(line.Timestamps) {
			return nil, fmt.Errorf("decode export: %d values, %d timestamps", len(line.Values), len(line.Timestamps))
		}
		s := series{Labels: sortedLabels(line.Metric)}
		for i, v := range line.Values {
			f := math.Float64frombits(staleNaNBits) // null
			var text string
			switch v := v.(type) {
			case json.Number:
				text = string(v)
			case string:
				text = v
			}
			if v != nil {
				var err error
				if f, err = strconv.ParseFloat(text, 64); err != nil {
					return nil, fmt.Errorf("decode export value %v: %w", v, err)
				}
			}
			s.Points = append(s.Points, point{T: line.Timestamps[i], V: f})
		}
		res.Series = append(res.Series, s)
	}
	return res, nil
}
