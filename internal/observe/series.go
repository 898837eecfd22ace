package observe

import "github.com/tsbench/tsbench/internal/storage"

// seriesCreated is the storage's own count of the series it created since it started, for
// the series section's figures (issue 22): the first family's, in Order, that the page
// exposes; nil when it exposes none.
func seriesCreated(p storage.Page) *float64 {
	var names []string
	for _, f := range storage.Families() {
		if f.SeriesCreated != "" {
			names = append(names, f.SeriesCreated)
		}
	}
	for _, name := range names {
		if v, ok := p.Sum(name); ok {
			return &v
		}
	}
	return nil
}

// addCreated is the created series over a cluster's components that count them; nil when
// none does.
func addCreated(parts []rates) *float64 {
	var total *float64
	for _, p := range parts {
		if p.created != nil {
			total = new(*p.created + valueOr0(total))
		}
	}
	return total
}

func valueOr0(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
