package query

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/prometheus/model/value"
)

// Export reads the raw samples of the series matching selector between start and end from
// VictoriaMetrics' /api/v1/export, which it serves beside the Prometheus API: JSON lines, one
// series a line, values as JSON numbers and a staleness marker as null. It shows what the
// storage holds without a query engine in between, markers included. The result is a matrix.
func (a *API) Export(ctx context.Context, selector string, start, end time.Time) (*Result, error) {
	form := url.Values{"match[]": {selector}, "start": {formatTime(start)}, "end": {formatTime(end)}}
	status, b, err := a.send(ctx, http.MethodPost, "api/v1/export", form)
	if err != nil {
		return nil, err
	}
	return decodeExport(status, b)
}

// decodeExport decodes an answer of /api/v1/export; a staleness marker (null) becomes the
// marker's NaN, value.StaleNaN.
func decodeExport(status int, body []byte) (*Result, error) {
	if status/100 != 2 {
		return nil, &Error{Kind: "http_" + strconv.Itoa(status), Status: status, Msg: clip(string(body))}
	}
	bad := func(format string, args ...any) (*Result, error) {
		return nil, &Error{Kind: ErrBadBody, Status: status, Msg: "export: " + clip(fmt.Sprintf(format, args...))}
	}
	// VictoriaMetrics writes ±Inf and NaN values as bare words, which JSON lacks: quote them
	// where a value starts (after "[" or ",").
	for _, word := range []string{"+Inf", "-Inf", "NaN"} {
		for _, before := range []string{"[", ","} {
			body = bytes.ReplaceAll(body, []byte(before+word), []byte(before+`"`+word+`"`))
		}
	}
	res := &Result{Type: "matrix"}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for dec.More() {
		var line struct {
			Metric     map[string]string `json:"metric"`
			Values     []any             `json:"values"`
			Timestamps []int64           `json:"timestamps"`
		}
		if err := dec.Decode(&line); err != nil {
			return bad("%v", err)
		}
		if len(line.Values) != len(line.Timestamps) {
			return bad("%d values, %d timestamps", len(line.Values), len(line.Timestamps))
		}
		s := Series{Metric: line.Metric, Points: make([]Point, len(line.Values))}
		for i, v := range line.Values {
			f := math.Float64frombits(value.StaleNaN) // null
			var text string
			switch v := v.(type) {
			case json.Number:
				text = string(v)
			case string:
				text = v
			case nil:
			default:
				return bad("value %v", v)
			}
			if v != nil {
				var err error
				if f, err = strconv.ParseFloat(text, 64); err != nil {
					return bad("value %v: %v", v, err)
				}
			}
			s.Points[i] = Point{T: line.Timestamps[i], V: f}
		}
		res.Series = append(res.Series, s)
	}
	return res, nil
}
