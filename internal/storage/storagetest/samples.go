package storagetest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// HistogramSample is one stored native histogram, as the TSDB returns it.
type HistogramSample struct {
	T int64
	H *histogram.Histogram
}

// Histograms reads every native histogram sample (integer counts) of every series matching
// ms in [mint, maxt] straight from the TSDB, keyed by the series' labels in their String form.
func (r *Receiver) Histograms(mint, maxt int64, ms ...*labels.Matcher) (map[string][]HistogramSample, error) {
	out := map[string][]HistogramSample{}
	err := r.each(mint, maxt, ms, func(lset labels.Labels, it chunkenc.Iterator) {
		var samples []HistogramSample
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			if vt == chunkenc.ValHistogram {
				t, h := it.AtHistogram(nil)
				samples = append(samples, HistogramSample{T: t, H: h})
			}
		}
		if len(samples) > 0 {
			out[lset.String()] = samples
		}
	})
	return out, err
}

// queryExemplars answers /api/v1/query_exemplars from the TSDB's exemplar storage, in the
// Prometheus HTTP API's JSON: value as a string, timestamp in seconds.
func (r *Receiver) queryExemplars(w http.ResponseWriter, req *http.Request) {
	if err := req.ParseForm(); err != nil {
		apiError(w, http.StatusBadRequest, "bad_data", err)
		return
	}
	start, err := parseTime(req.Form.Get("start"))
	var end time.Time
	if err == nil {
		end, err = parseTime(req.Form.Get("end"))
	}
	var expr parser.Expr
	if err == nil {
		expr, err = parser.ParseExpr(req.Form.Get("query"))
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "bad_data", err)
		return
	}
	eq, err := r.db.ExemplarQuerier(req.Context())
	if err == nil {
		var res []exemplar.QueryResult
		res, err = eq.Select(start.UnixMilli(), end.UnixMilli(), parser.ExtractSelectors(expr)...)
		if err == nil {
			writeExemplars(w, res)
			return
		}
	}
	apiError(w, http.StatusUnprocessableEntity, "execution", err)
}

func writeExemplars(w http.ResponseWriter, res []exemplar.QueryResult) {
	type ex struct {
		Labels    labels.Labels `json:"labels"`
		Value     string        `json:"value"`
		Timestamp float64       `json:"timestamp"`
	}
	type series struct {
		SeriesLabels labels.Labels `json:"seriesLabels"`
		Exemplars    []ex          `json:"exemplars"`
	}
	out := make([]series, 0, len(res))
	for _, r := range res {
		s := series{SeriesLabels: r.SeriesLabels}
		for _, e := range r.Exemplars {
			s.Exemplars = append(s.Exemplars, ex{e.Labels, strconv.FormatFloat(e.Value, 'f', -1, 64), float64(e.Ts) / 1000})
		}
		out = append(out, s)
	}
	body, err := json.Marshal(map[string]any{"status": "success", "data": out})
	if err != nil {
		apiError(w, http.StatusInternalServerError, "internal", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
