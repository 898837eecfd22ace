package verify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/workload"
)

// reader reads one storage back: through its Prometheus query API (query.API, the client the
// read load uses too) when it has one, else through Prometheus remote read.
type reader struct {
	api    *query.API    // nil: no query API
	remote *remoteReader // nil: no remoteReadURL
}

// point is one sample as a storage returned it: T in ms, V exactly.
type point struct {
	T int64
	V float64
}

// series is one series of a result: its labels, sorted by name, and its points.
type series struct {
	Labels []label
	Points []point
}

// label is the generator's label type: a label read back is compared with the one written,
// and both have one key (keyOf).
type label = workload.Label

// result is a decoded answer.
type result struct {
	Type   string   // "matrix", "vector", "scalar", "string"
	Series []series // matrix and vector; a scalar is one series without labels
}

// fromAPI converts an answer of the query API, labels sorted by name.
func fromAPI(r *query.Result) *result {
	out := &result{Type: r.Type, Series: make([]series, len(r.Series))}
	for i, s := range r.Series {
		ps := make([]point, len(s.Points))
		for j, p := range s.Points {
			ps[j] = point(p)
		}
		out.Series[i] = series{Labels: sortedLabels(s.Metric), Points: ps}
	}
	return out
}

// instant runs query at ms.
func (r *reader) instant(ctx context.Context, q string, ms int64) (*result, error) {
	res, err := r.api.Instant(ctx, q, time.UnixMilli(ms))
	if err != nil {
		return nil, err
	}
	return fromAPI(res), nil
}

// rangeQuery runs q from start to end (ms) every step (ms).
func (r *reader) rangeQuery(ctx context.Context, q string, start, end, step int64) (*result, error) {
	res, err := r.api.Range(ctx, q, time.UnixMilli(start), time.UnixMilli(end), time.Duration(step)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return fromAPI(res), nil
}

// export reads the raw samples of selector over [start, end] (ms) from VictoriaMetrics'
// /api/v1/export.
func (r *reader) export(ctx context.Context, selector string, start, end int64) (*result, error) {
	res, err := r.api.Export(ctx, selector, time.UnixMilli(start), time.UnixMilli(end))
	if err != nil {
		return nil, err
	}
	return fromAPI(res), nil
}

func sortedLabels(m map[string]string) []label {
	ls := make([]label, 0, len(m))
	for k, v := range m {
		ls = append(ls, label{Name: k, Value: v})
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
	return ls
}

// describeErr renders a failed probe or rule: a query rejected by the engine as its error
// type and status, anything else (an HTTP status without the API's answer, the network) as
// a failure.
func describeErr(err error) string {
	if e, ok := errors.AsType[*query.Error](err); ok && query.IsPromQLError(err) {
		return fmt.Sprintf("error %s (status %d)", strings.TrimPrefix(e.Kind, "status_error:"), e.Status)
	}
	return "failed: " + err.Error()
}
