package remotewrite

import (
	"strings"

	"github.com/tsbench/tsbench/internal/workload"
)

// metricType is a series' type as the profile's # TYPE gives it.
type metricType uint8

const (
	typeUnknown metricType = iota // untyped, or a name the profile does not have
	typeCounter
	typeGauge
	typeHistogram
	typeSummary
)

// Roles of a sample in a histogram or summary family; every other sample is roleValue.
const (
	roleValue uint8 = iota
	roleCount
	roleSum
	roleQuantile // a summary's {quantile=...}
	roleBucket   // a histogram's _bucket{le=...}
)

// metricMeta is what remote write 2.0 and OTLP send beside a sample's labels.
type metricMeta struct {
	typ        metricType
	help, unit string
	// family is the histogram's or summary's name (the sample's name less _bucket, _count,
	// _sum); role is the sample's part in it.
	family string
	role   uint8
}

// metadata is the profile's metadata by sample name (__name__), built once and read-only.
type metadata map[string]metricMeta

// newMetadata reads the type, help and unit of every series of a profile. A name with
// several types in the profile keeps the first.
func newMetadata(series []workload.Series) metadata {
	m := metadata{}
	for _, s := range series {
		if _, ok := m[s.Name]; ok {
			continue
		}
		mm := metricMeta{help: s.Help, unit: s.Unit, family: s.Name}
		switch s.Type {
		case "counter":
			mm.typ = typeCounter
		case "gauge":
			mm.typ = typeGauge
		case "histogram":
			mm.typ = typeHistogram
			mm.family, mm.role = familyOf(s, "le", "_bucket")
		case "summary":
			mm.typ = typeSummary
			mm.family, mm.role = familyOf(s, "quantile", "")
		}
		m[s.Name] = mm
	}
	return m
}

// familyOf names the family of a histogram or summary series and its role: the series with
// the label part (le, quantile) is a bucket or quantile, named with suffix; the others are
// _count and _sum.
func familyOf(s workload.Series, part, suffix string) (string, uint8) {
	for _, l := range s.Labels {
		if l.Name == part {
			if part == "le" {
				return strings.TrimSuffix(s.Name, suffix), roleBucket
			}
			return s.Name, roleQuantile
		}
	}
	if f, ok := strings.CutSuffix(s.Name, "_count"); ok {
		return f, roleCount
	}
	if f, ok := strings.CutSuffix(s.Name, "_sum"); ok {
		return f, roleSum
	}
	return s.Name, roleValue // a stray series of the family: sent as a plain value
}

// metricName is the value of the __name__ label, "" if there is none.
func metricName(labels []workload.Label) string {
	for _, l := range labels {
		if l.Name == "__name__" {
			return l.Value
		}
	}
	return ""
}
