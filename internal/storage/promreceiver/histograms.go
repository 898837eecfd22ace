package promreceiver

import (
	"context"
	"errors"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// HistogramSample is one stored native histogram, as the TSDB returns it.
type HistogramSample struct {
	T int64
	H *histogram.Histogram
}

// Histograms reads every native histogram sample (integer counts) of every series matching
// ms in [mint, maxt] straight from the TSDB, keyed by the series' labels in their String form.
func (r *Receiver) Histograms(mint, maxt int64, ms ...*labels.Matcher) (_ map[string][]HistogramSample, err error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	q, err := r.db.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, q.Close()) }()
	if len(ms) == 0 {
		ms = []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, model.MetricNameLabel, ".+")}
	}
	out := map[string][]HistogramSample{}
	set := q.Select(context.Background(), true, nil, ms...)
	var it chunkenc.Iterator
	for set.Next() {
		s := set.At()
		it = s.Iterator(it)
		var samples []HistogramSample
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			if vt == chunkenc.ValHistogram {
				t, h := it.AtHistogram(nil)
				samples = append(samples, HistogramSample{T: t, H: h})
			}
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		if len(samples) > 0 {
			out[s.Labels().String()] = samples
		}
	}
	return out, set.Err()
}
