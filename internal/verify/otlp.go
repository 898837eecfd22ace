package verify

import (
	"slices"
	"strings"

	"github.com/prometheus/otlptranslator"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// otlpNames maps each sample name of the profile that a receiver stores under another name
// after OTLP ingestion to that name. It assumes Prometheus' default translation
// (otlp.translation_strategy UnderscoreEscapingWithSuffixes), built with the receiver's own
// namer: a counter (a monotonic sum) gets _total, a metric with a unit gets the unit's suffix,
// a histogram's and summary's series are the family's name plus _bucket, _count, _sum.
// Labels need no mapping: job and instance come back from service.name and
// service.instance.id, and every other label was a data point attribute of a valid name.
func otlpNames(series []workload.Series) map[string]string {
	namer := otlptranslator.MetricNamer{WithMetricSuffixes: true}
	names := map[string]string{}
	for _, s := range series {
		if _, ok := names[s.Name]; ok {
			continue
		}
		family, suffix := s.Name, ""
		var typ otlptranslator.MetricType = otlptranslator.MetricTypeGauge // untyped: a gauge
		switch s.Type {
		case "counter":
			typ = otlptranslator.MetricTypeMonotonicCounter
		case "histogram", "summary":
			family, suffix = otlpFamily(s)
			typ = otlptranslator.MetricTypeHistogram
			if s.Type == "summary" {
				typ = otlptranslator.MetricTypeSummary
			}
			if suffix == "" && family == s.Name && !hasLabelName(s, "le", "quantile") {
				typ = otlptranslator.MetricTypeGauge // a stray series of the family, sent as a gauge
			}
		}
		stored, err := namer.Build(otlptranslator.Metric{Name: family, Unit: s.Unit, Type: typ})
		if err != nil {
			continue // a name the namer refuses: the receiver refuses it too, and the read-back shows it missing
		}
		names[s.Name] = stored + suffix
	}
	for k, v := range names {
		if k == v {
			delete(names, k)
		}
	}
	return names
}

// otlpFamily splits a histogram or summary series' name as the OTLP encoder groups it.
func otlpFamily(s workload.Series) (family, suffix string) {
	if hasLabelName(s, "le") {
		if f, ok := strings.CutSuffix(s.Name, "_bucket"); ok {
			return f, "_bucket"
		}
	}
	if hasLabelName(s, "quantile") {
		return s.Name, ""
	}
	for _, suf := range []string{"_count", "_sum"} {
		if f, ok := strings.CutSuffix(s.Name, suf); ok {
			return f, suf
		}
	}
	return s.Name, ""
}

func hasLabelName(s workload.Series, names ...string) bool {
	return slices.ContainsFunc(s.Labels, func(l workload.Label) bool { return slices.Contains(names, l.Name) })
}

// renameUnits returns units with every expected series under the name the receiver stores
// it as; units itself is left as it is, for the other storages.
func renameUnits(units []unit, names map[string]string) []unit {
	if len(names) == 0 {
		return units
	}
	out := make([]unit, len(units))
	for i, u := range units {
		out[i] = u
		if u.series == nil {
			continue
		}
		out[i].series = make(map[string]*expSeries, len(u.series))
		for _, s := range u.series {
			ls := slices.Clone(s.labels)
			for j := range ls {
				if n, ok := names[ls[j].Value]; ok && ls[j].Name == "__name__" {
					ls[j].Value = n
				}
			}
			out[i].series[keyOf(ls)] = &expSeries{labels: ls, samples: s.samples}
		}
	}
	return out
}

// otlpLabelUnits returns units with job and instance under the names a storage with mapping
// m stores them as (otlpLabels); units itself when they are job and instance.
func otlpLabelUnits(units []unit, m config.OTLPLabels) []unit {
	job, instance := config.OTLPLabelNames(m)
	if job == "job" && instance == "instance" {
		return units
	}
	lm := labelMap{rename: map[string]string{"job": job, "instance": instance}}
	out := make([]unit, len(units))
	for i, u := range units {
		out[i] = u
		if u.series != nil {
			out[i] = mapUnit(u, lm)
		}
	}
	return out
}
