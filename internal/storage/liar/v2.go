package liar

import (
	"strings"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// v2 lies in a remote write 2.0 request; it returns the floats, histograms and exemplars received.
func (l *Liar) v2(body []byte) (out []byte, floats, hists, exs int64, err error) {
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
			l.liesV2(ls, ts)
			ls = l.relabel(ls)
			if l.lies.Lie == LieDropMetadata && (md.Type != writev2.Metadata_METRIC_TYPE_UNSPECIFIED || mdHelp != "" || mdUnit != "") {
				l.recordFamily(familyOf(ls.Get(model.MetricNameLabel), md.Type))
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

// liesV2 applies the sample lies to one 2.0 series, through the 1.0 code.
func (l *Liar) liesV2(ls labels.Labels, ts *writev2.TimeSeries) {
	key := ls.String()
	v1 := make([]prompb.Sample, len(ts.Samples))
	var times []int64
	for i, s := range ts.Samples {
		v1[i] = prompb.Sample{Value: s.Value, Timestamp: s.Timestamp}
		times = append(times, s.Timestamp)
	}
	for _, h := range ts.Histograms {
		times = append(times, h.Timestamp)
	}
	l.saw(ls.Get("instance"), times...)
	l.recordLabels(ls, times)
	kept := l.floats(ls, v1)
	samples := ts.Samples[:0]
	for _, s := range kept {
		// The start timestamp goes with the sample it was written with.
		var st int64
		for _, o := range ts.Samples {
			if o.Timestamp == s.Timestamp {
				st = o.StartTimestamp
				break
			}
		}
		samples = append(samples, writev2.Sample{Value: s.Value, Timestamp: s.Timestamp, StartTimestamp: st})
	}
	ts.Samples = samples
	if l.lies.Lie == LieDropHistograms {
		for _, h := range ts.Histograms {
			l.record(key, h.Timestamp, 1)
		}
		ts.Histograms = nil
	}
	if l.lies.Lie == LieDropExemplars {
		for _, e := range ts.Exemplars {
			l.record(key, e.Timestamp, 1)
		}
		ts.Exemplars = nil
	}
}
