package liar

import (
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
)

// v1 lies in a remote write 1.0 request; n is its samples (floats and histograms).
func (l *Liar) v1(rq *request, body []byte) (out []byte, n int64, err error) {
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		return nil, 0, err
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		return nil, 0, err
	}
	for i := range req.Timeseries {
		ts := &req.Timeseries[i]
		n += int64(len(ts.Samples) + len(ts.Histograms))
		ls := labelsOfV1(ts.Labels)
		if l.skip(ls) {
			continue
		}
		p := l.seriesPoint(ls)
		ts.Samples = tellEach(l, rq, p, ts.Samples, func(s *prompb.Sample, p *point) {
			p.kind, p.t, p.v, p.stale = kindFloat, s.Timestamp, s.Value, value.IsStaleNaN(s.Value)
		}, func(s *prompb.Sample, p point) { s.Timestamp, s.Value = p.t, p.v })
		ts.Histograms = tellEach(l, rq, p, ts.Histograms, func(h *prompb.Histogram, p *point) {
			p.kind, p.t = kindHistogram, h.Timestamp
		}, nil)
		ts.Exemplars = tellEach(l, rq, p, ts.Exemplars, func(e *prompb.Exemplar, p *point) {
			p.kind, p.t = kindExemplar, e.Timestamp
		}, nil)
		ts.Labels = v1Labels(l.relabel(ls))
	}
	kept := req.Metadata[:0]
	for _, md := range req.Metadata {
		if !l.tellMetadata(md.MetricFamilyName) {
			kept = append(kept, md)
		}
	}
	req.Metadata = kept
	raw, err = req.Marshal()
	return snappy.Encode(nil, raw), n, err
}

// seriesPoint is the point every sample of the series ls starts from, in 1.0 and 2.0: its
// key, its target and whether a label lie moves it.
func (l *Liar) seriesPoint(ls labels.Labels) point {
	return point{series: ls.String(), target: ls.Get("instance"), n: 1, moved: !labels.Equal(ls, l.relabel(ls))}
}

// tellEach tells the lie on each of a series' items (samples, histograms or exemplars), each
// made a point from p by fill, and returns those kept, each changed by set (nil: never
// changed) as tell answered.
func tellEach[T any](l *Liar, rq *request, p point, items []T, fill func(*T, *point), set func(*T, point)) []T {
	kept := items[:0]
	for i := range items {
		item := items[i]
		fill(&item, &p)
		out, keep := l.tell(rq, p)
		if !keep {
			continue
		}
		if set != nil {
			set(&item, out)
		}
		kept = append(kept, item)
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

func (l *Liar) skip(ls labels.Labels) bool { return l.skipName(ls.Get(model.MetricNameLabel)) }

func labelsOfV1(ls []prompb.Label) labels.Labels {
	b := labels.NewScratchBuilder(len(ls))
	for _, l := range ls {
		b.Add(l.Name, l.Value)
	}
	b.Sort()
	return b.Labels()
}

func v1Labels(ls labels.Labels) []prompb.Label {
	out := make([]prompb.Label, 0, ls.Len())
	ls.Range(func(l labels.Label) { out = append(out, prompb.Label{Name: l.Name, Value: l.Value}) })
	return out
}
