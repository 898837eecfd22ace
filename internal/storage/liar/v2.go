package liar

import (
	"strings"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// v2 lies in a remote write 2.0 request; it returns the floats, histograms and exemplars received.
func (l *Liar) v2(rq *request, body []byte) (out []byte, floats, hists, exs int64, err error) {
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	var req writev2.Request
	if err := req.Unmarshal(raw); err != nil {
		return nil, 0, 0, 0, err
	}
	syms := writev2.NewSymbolTable()
	b := labels.NewScratchBuilder(0)
	emptied := make([]bool, len(req.Timeseries))
	for i := range req.Timeseries {
		ts := &req.Timeseries[i]
		if len(ts.Samples)+len(ts.Histograms) > 0 {
			emptied[i] = true // unless some are left: see below
		}
		floats += int64(len(ts.Samples))
		hists += int64(len(ts.Histograms))
		exs += int64(len(ts.Exemplars))
		ls, err := ts.ToLabels(&b, req.Symbols)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		var exLabels [][]uint32 // exemplars' labels, re-symbolized
		for _, e := range ts.Exemplars {
			ex, err := e.ToExemplar(&b, req.Symbols)
			if err != nil {
				return nil, 0, 0, 0, err
			}
			exLabels = append(exLabels, syms.SymbolizeLabels(ex.Labels, nil))
		}
		md := ts.Metadata
		mdHelp, mdUnit := symbol(req.Symbols, md.HelpRef), symbol(req.Symbols, md.UnitRef)
		if !l.skip(ls) {
			l.liesV2(rq, ls, ts)
			ls = l.relabel(ls)
			if (md.Type != writev2.Metadata_METRIC_TYPE_UNSPECIFIED || mdHelp != "" || mdUnit != "") && l.tellMetadata(familyOf(ls.Get(model.MetricNameLabel), md.Type)) {
				md, mdHelp, mdUnit = writev2.Metadata{}, "", ""
			}
		}
		ts.LabelsRefs = syms.SymbolizeLabels(ls, nil)
		for j := range ts.Exemplars {
			ts.Exemplars[j].LabelsRefs = exLabels[j]
		}
		md.HelpRef, md.UnitRef = syms.Symbolize(mdHelp), syms.Symbolize(mdUnit)
		ts.Metadata = md
	}
	// A series the lie left without samples goes: the receiver refuses one (400).
	kept := req.Timeseries[:0]
	for i, ts := range req.Timeseries {
		if !emptied[i] || len(ts.Samples)+len(ts.Histograms) > 0 {
			kept = append(kept, ts)
		}
	}
	req.Timeseries = kept
	req.Symbols = syms.Symbols()
	raw, err = req.Marshal()
	return snappy.Encode(nil, raw), floats, hists, exs, err
}

// familyOf is the metric family a 2.0 series' metadata describes, as the receiver keeps it:
// a histogram's or summary's name without _bucket, _count or _sum.
func familyOf(name string, typ writev2.Metadata_MetricType) string {
	if typ == writev2.Metadata_METRIC_TYPE_HISTOGRAM || typ == writev2.Metadata_METRIC_TYPE_SUMMARY {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if f, ok := strings.CutSuffix(name, suffix); ok {
				return f
			}
		}
	}
	return name
}

func symbol(syms []string, ref uint32) string {
	if int(ref) < len(syms) {
		return syms[ref]
	}
	return ""
}

// liesV2 tells the lie on one 2.0 series' samples, histograms and exemplars.
func (l *Liar) liesV2(rq *request, ls labels.Labels, ts *writev2.TimeSeries) {
	p := l.seriesPoint(ls)
	ts.Samples = tellEach(l, rq, p, ts.Samples, func(s *writev2.Sample, p *point) {
		p.kind, p.t, p.v, p.stale = kindFloat, s.Timestamp, s.Value, value.IsStaleNaN(s.Value)
	}, func(s *writev2.Sample, p point) {
		s.Timestamp, s.Value = p.t, p.v // its start timestamp kept: the series began then still
	})
	ts.Histograms = tellEach(l, rq, p, ts.Histograms, func(h *writev2.Histogram, p *point) {
		p.kind, p.t = kindHistogram, h.Timestamp
	}, nil)
	ts.Exemplars = tellEach(l, rq, p, ts.Exemplars, func(e *writev2.Exemplar, p *point) {
		p.kind, p.t = kindExemplar, e.Timestamp
	}, nil)
}
