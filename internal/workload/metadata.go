package workload

import (
	"context"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// baseUnits are the units Prometheus' naming conventions put at the end of a metric's name
// (before _total): the unit an exporter whose text format carries no # UNIT line means.
var baseUnits = map[string]bool{
	"seconds": true, "bytes": true, "joules": true, "grams": true, "meters": true, "ratio": true,
	"volts": true, "amperes": true, "celsius": true, "hertz": true, "watts": true, "percent": true,
}

// metadataNote is added to a filled profile's Source, once.
const metadataNote = "; help and units by tsbench profile metadata (units from # UNIT or the name's base unit)"

// FillMetadata scrapes url once and sets each series' Help and Unit from its family there:
// the family's # UNIT, or else the base unit its name ends with. It changes no name, label,
// type or shape, so a profile captured before metadata was recorded keeps every value it
// generates. It returns how many series got help text.
func FillMetadata(ctx context.Context, client *http.Client, url string, p *Profile) (int, error) {
	families, err := scrape(ctx, client, url)
	if err != nil {
		return 0, err
	}
	filled := 0
	for i := range p.Series {
		s := &p.Series[i]
		mf := familyFor(families, s.Name)
		if mf == nil {
			continue
		}
		s.Help, s.Unit = mf.GetHelp(), mf.GetUnit()
		if s.Unit == "" {
			s.Unit = unitOf(mf.GetName())
		}
		if s.Help != "" {
			filled++
		}
	}
	if !strings.Contains(p.Source, metadataNote) {
		p.Source += metadataNote
	}
	return filled, nil
}

// familyFor finds the family of a series name: its own, or the histogram's or summary's it
// is the _bucket, _count or _sum of.
func familyFor(families map[string]*dto.MetricFamily, name string) *dto.MetricFamily {
	if mf, ok := families[name]; ok {
		return mf
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if f, ok := strings.CutSuffix(name, suffix); ok {
			if mf, ok := families[f]; ok {
				return mf
			}
		}
	}
	return nil
}

// unitOf is the base unit a family's name ends with (node_cpu_seconds_total: seconds), ""
// for none.
func unitOf(family string) string {
	name := strings.TrimSuffix(family, "_total")
	u := name[strings.LastIndexByte(name, '_')+1:]
	if baseUnits[u] {
		return u
	}
	return ""
}
