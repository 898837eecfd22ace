package verify

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// maxMetadataExamples bounds the examples of families that came back changed or not at all.
const maxMetadataExamples = 10

// familyWant is one metric family's metadata as sent, under the name a storage keeps it.
type familyWant struct {
	name string
	md   query.MetricMetadata
}

// Metadata reads back, through /api/v1/metadata, the metadata of every family of the profile
// from each storage that was sent it: over remote write 2.0 and OTLP always, over 1.0 with
// sendMetadata. A family counts kept when one of its entries has the type, help and unit
// sent, changed when it has entries and none is, missing when it has none.
func (v *Verifier) Metadata(ctx context.Context, sendMetadata bool) map[string]*results.Metadata {
	p, ok := v.wl.(interface{ Series(s int) workload.Series })
	if !ok {
		return nil
	}
	series := make([]workload.Series, v.wl.SeriesPerTarget())
	for i := range series {
		series[i] = p.Series(i)
	}
	out := map[string]*results.Metadata{}
	for _, t := range v.targets {
		if t.Protocol == config.ProtocolRW1 && !sendMetadata {
			continue // 1.0 sent no metadata
		}
		want := v.familiesWant(series, t.Protocol)
		res := &results.Metadata{Families: len(want)}
		out[t.Name] = res
		if t.ReadURL == "" {
			res.Errors = append(res.Errors, "no query API (readURL): metadata is read back through /api/v1/metadata only")
		} else if got, err := query.NewAPI(t.Client, t.ReadURL).Metadata(ctx, ""); err != nil {
			res.Errors = append(res.Errors, err.Error())
		} else {
			compareMetadata(want, got, res)
		}
		res.Verdict = res.MetadataVerdict()
		v.log.Info("metadata read back", "storage", t.Name, "verdict", res.Verdict, "families", res.Families, "kept", res.Kept)
	}
	return out
}

// familiesWant lists the profile's families once each, in name order, with the metadata a
// storage written in proto must return: OTLP's names are Prometheus' translation of them
// (a counter gets _total, a unit its suffix), and an untyped series goes as an OTLP gauge.
func (v *Verifier) familiesWant(series []workload.Series, proto config.Protocol) []familyWant {
	seen := map[string]bool{}
	var out []familyWant
	for _, s := range series {
		family, suffix := s.Name, ""
		if s.Type == "histogram" || s.Type == "summary" {
			family, suffix = otlpFamily(s)
		}
		typ := s.Type
		if typ == "untyped" {
			typ = "unknown"
		}
		if proto == config.ProtocolOTLP {
			if n, ok := v.otlp[s.Name]; ok {
				family = n[:len(n)-len(suffix)]
			}
			if typ == "unknown" {
				typ = "gauge"
			}
		}
		if seen[family] {
			continue
		}
		seen[family] = true
		out = append(out, familyWant{name: family, md: query.MetricMetadata{Type: typ, Help: s.Help, Unit: s.Unit}})
	}
	slices.SortFunc(out, func(a, b familyWant) int { return cmp.Compare(a.name, b.name) })
	return out
}

// compareMetadata counts each wanted family kept, changed or missing in got. An entry of
// type unknown with no help and no unit holds no metadata: it is what a storage answers for a
// series that came without any (a 2.0 receiver keeps such a series as unknown), so a family
// with only that is missing, not changed: its metadata was dropped (issue 29).
func compareMetadata(want []familyWant, got map[string][]query.MetricMetadata, res *results.Metadata) {
	empty := func(m query.MetricMetadata) bool {
		return (m.Type == "unknown" || m.Type == "") && m.Help == "" && m.Unit == ""
	}
	for _, w := range want {
		entries := got[w.name]
		switch {
		case slices.Contains(entries, w.md):
			res.Kept++
		case !slices.ContainsFunc(entries, func(m query.MetricMetadata) bool { return !empty(m) }):
			res.Missing++
			what := "missing"
			if len(entries) > 0 {
				what = "missing: answered type unknown, no help or unit"
			}
			if len(res.Examples) < maxMetadataExamples {
				res.Examples = append(res.Examples, fmt.Sprintf("%s: %s (sent %s)", w.name, what, describeMetadata(w.md)))
			}
		default:
			res.Changed++
			if len(res.Examples) < maxMetadataExamples {
				res.Examples = append(res.Examples, fmt.Sprintf("%s: got %s, sent %s", w.name, describeMetadata(entries[0]), describeMetadata(w.md)))
			}
		}
	}
}

func describeMetadata(m query.MetricMetadata) string {
	return fmt.Sprintf("type=%s help=%q unit=%q", m.Type, m.Help, m.Unit)
}
