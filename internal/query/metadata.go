package query

import (
	"context"
	"net/http"
	"net/url"
)

// MetricMetadata is one metadata entry of a metric family, as /api/v1/metadata gives it.
type MetricMetadata struct {
	Type string `json:"type"`
	Help string `json:"help"`
	Unit string `json:"unit"`
}

// Metadata asks the metadata of every metric family (GET api/v1/metadata), or of one when
// metric is set; a family may have several entries (targets that disagree).
func (a *API) Metadata(ctx context.Context, metric string) (map[string][]MetricMetadata, error) {
	form := url.Values{}
	if metric != "" {
		form.Set("metric", metric)
	}
	data := map[string][]MetricMetadata{}
	if _, err := a.do(ctx, http.MethodGet, "api/v1/metadata", form, &data); err != nil {
		return nil, err
	}
	return data, nil
}
