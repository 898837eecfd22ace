package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// HistogramPoint is one native histogram of a query answer, as the Prometheus API gives it:
// count and sum, and each non-empty bucket with its bounds (the zero bucket included).
type HistogramPoint struct {
	T       int64
	Count   float64
	Sum     float64
	Buckets []Bucket
}

// Bucket is one bucket of a HistogramPoint. Boundaries: 0 (lower, upper], 1 [lower, upper),
// 2 (lower, upper), 3 [lower, upper].
type Bucket struct {
	Boundaries   int
	Lower, Upper float64
	Count        float64
}

// HistogramSeries is one series of a query answer with its native histogram points; Floats
// counts its float points, which a storage that turned the histograms into numbers returns.
type HistogramSeries struct {
	Metric     map[string]string
	Histograms []HistogramPoint
	Floats     int
}

// Histograms runs an instant query at t and returns its vector or matrix with the native
// histogram points ("histogram" and "histograms" of each series).
func (a *API) Histograms(ctx context.Context, query string, t time.Time) ([]HistogramSeries, error) {
	form := url.Values{"query": {query}, "time": {formatTime(t)}}
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric     map[string]string `json:"metric"`
			Value      json.RawMessage   `json:"value"`
			Values     []json.RawMessage `json:"values"`
			Histogram  json.RawMessage   `json:"histogram"`
			Histograms []json.RawMessage `json:"histograms"`
		} `json:"result"`
	}
	if _, err := a.do(ctx, http.MethodPost, "api/v1/query", form, &data); err != nil {
		return nil, err
	}
	out := make([]HistogramSeries, len(data.Result))
	for i, s := range data.Result {
		out[i] = HistogramSeries{Metric: s.Metric, Floats: len(s.Values)}
		if s.Value != nil {
			out[i].Floats++
		}
		hs := s.Histograms
		if s.Histogram != nil {
			hs = append(hs, s.Histogram)
		}
		for _, raw := range hs {
			p, err := decodeHistogramPoint(raw)
			if err != nil {
				return nil, &Error{Kind: ErrBadBody, Status: http.StatusOK, Msg: fmt.Sprintf("histogram of %v: %v", s.Metric, err)}
			}
			out[i].Histograms = append(out[i].Histograms, p)
		}
	}
	return out, nil
}

// decodeHistogramPoint reads [t, {"count": "..", "sum": "..", "buckets": [[b, "lo", "hi", "n"], ...]}].
func decodeHistogramPoint(raw json.RawMessage) (HistogramPoint, error) {
	var pair [2]json.RawMessage
	if err := json.Unmarshal(raw, &pair); err != nil {
		return HistogramPoint{}, err
	}
	var ts float64
	if err := json.Unmarshal(pair[0], &ts); err != nil {
		return HistogramPoint{}, err
	}
	var h struct {
		Count   string              `json:"count"`
		Sum     string              `json:"sum"`
		Buckets [][]json.RawMessage `json:"buckets"`
	}
	if err := json.Unmarshal(pair[1], &h); err != nil {
		return HistogramPoint{}, err
	}
	p := HistogramPoint{T: int64(ts*1000 + 0.5)}
	var errs []error
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		errs = append(errs, err)
		return f
	}
	p.Count, p.Sum = num(h.Count), num(h.Sum)
	for _, b := range h.Buckets {
		if len(b) != 4 {
			return HistogramPoint{}, fmt.Errorf("bucket of %d fields, want 4", len(b))
		}
		var bk Bucket
		var lo, hi, n string
		errs = append(errs, json.Unmarshal(b[0], &bk.Boundaries), json.Unmarshal(b[1], &lo), json.Unmarshal(b[2], &hi), json.Unmarshal(b[3], &n))
		bk.Lower, bk.Upper, bk.Count = num(lo), num(hi), num(n)
		p.Buckets = append(p.Buckets, bk)
	}
	return p, errors.Join(errs...)
}
