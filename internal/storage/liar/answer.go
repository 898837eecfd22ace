package liar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// hidden reports whether a query answer leaves out the series with these labels.
func (l *Liar) hidden(metric map[string]string, now time.Time) bool {
	if !l.hides() {
		return false
	}
	if l.lies.Lie == LieDeleteAfter {
		l.mu.Lock()
		after := l.after
		l.mu.Unlock()
		if now.Before(after) {
			return false
		}
	}
	ls := labels.FromMap(metric)
	return !l.skip(ls) && l.chosen(ls.String())
}

// rewriteQuery applies the query-side lies to a query API answer.
func (l *Liar) rewriteQuery(resp *http.Response) error {
	if !l.hides() {
		return nil
	}
	p := resp.Request.URL.Path
	if p != "/api/v1/query" && p != "/api/v1/query_range" || resp.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := resp.Body.Close(); err != nil {
		return err
	}
	out, err := l.lieInAnswer(body, time.Now())
	if err != nil {
		return fmt.Errorf("liar: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	return nil
}

type apiSeries struct {
	Metric     map[string]string `json:"metric"`
	Value      json.RawMessage   `json:"value,omitempty"`
	Values     []json.RawMessage `json:"values,omitempty"`
	Histogram  json.RawMessage   `json:"histogram,omitempty"`
	Histograms []json.RawMessage `json:"histograms,omitempty"`
}

// lieInAnswer leaves hidden series out of a vector or matrix answer.
func (l *Liar) lieInAnswer(body []byte, now time.Time) ([]byte, error) {
	var a struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
		Warnings []string `json:"warnings,omitempty"`
		Infos    []string `json:"infos,omitempty"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, err
	}
	if a.Data.ResultType != "vector" && a.Data.ResultType != "matrix" {
		return body, nil
	}
	var series []apiSeries
	if err := json.Unmarshal(a.Data.Result, &series); err != nil {
		return nil, err
	}
	kept := series[:0]
	for _, s := range series {
		if !l.hidden(s.Metric, now) {
			kept = append(kept, s)
		}
	}
	res, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	a.Data.Result = res
	return json.Marshal(a)
}
