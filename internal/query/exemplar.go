package query

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ExemplarSeries is one series' exemplars, as /api/v1/query_exemplars gives them.
type ExemplarSeries struct {
	SeriesLabels map[string]string
	Exemplars    []ExemplarPoint
}

// ExemplarPoint is one stored exemplar: its labels (trace_id), value and time in ms.
type ExemplarPoint struct {
	Labels map[string]string
	Value  float64
	T      int64
}

// Exemplars asks the exemplars of the series query selects between start and end
// (POST api/v1/query_exemplars).
func (a *API) Exemplars(ctx context.Context, query string, start, end time.Time) ([]ExemplarSeries, error) {
	form := url.Values{"query": {query}, "start": {formatTime(start)}, "end": {formatTime(end)}}
	var data []struct {
		SeriesLabels map[string]string `json:"seriesLabels"`
		Exemplars    []struct {
			Labels    map[string]string `json:"labels"`
			Value     string            `json:"value"`
			Timestamp float64           `json:"timestamp"`
		} `json:"exemplars"`
	}
	if _, err := a.do(ctx, http.MethodPost, "api/v1/query_exemplars", form, &data); err != nil {
		return nil, err
	}
	out := make([]ExemplarSeries, len(data))
	for i, s := range data {
		out[i].SeriesLabels = s.SeriesLabels
		for _, e := range s.Exemplars {
			v, err := strconv.ParseFloat(e.Value, 64)
			if err != nil {
				return nil, &Error{Kind: ErrBadBody, Status: http.StatusOK, Msg: fmt.Sprintf("exemplar value %q of %v", clip(e.Value), s.SeriesLabels)}
			}
			out[i].Exemplars = append(out[i].Exemplars, ExemplarPoint{Labels: e.Labels, Value: v, T: int64(e.Timestamp*1000 + 0.5)})
		}
	}
	return out, nil
}
