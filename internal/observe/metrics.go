package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tsbench/tsbench/internal/storage"
)

// doer sends a request: a *storage.Client with the storage's auth, headers and TLS, or a
// plain *http.Client.
type doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Disk and ingestion metrics per storage kind. Each family's samples are summed (every
// label set), and the families of a figure are added: Prometheus' disk is its blocks plus
// its WAL plus its head chunks. The first kind whose figure is exposed is used.
var (
	diskFamilies = [][]string{
		{"vm_data_size_bytes"}, // VictoriaMetrics single and vmstorage: every part type
		{"prometheus_tsdb_storage_blocks_bytes", "prometheus_tsdb_wal_storage_size_bytes", "prometheus_tsdb_head_chunks_storage_size_bytes"},
		// Mimir and Cortex ingesters: local blocks only, per tenant (name confirmed in
		// Mimir's mixin and ingester tests; their WAL and head sizes have no such gauge).
		// Thanos receive embeds Prometheus' TSDB and, as far as we know, exposes its
		// prometheus_tsdb_* names (per tenant): not confirmed, so no Thanos-only name here.
		{"cortex_ingester_tsdb_storage_blocks_bytes"},
	}
	ingestFamilies = [][]string{
		// vm_rows_inserted_total is handled first, by ingestedVM.
		{"prometheus_tsdb_head_samples_appended_total"}, // every type (float, histogram) and tenant
		// Mimir and Cortex ingesters, per tenant. Summed over a cluster's ingesters it counts
		// each sample once per replica (replication factor 3 by default).
		{"cortex_ingester_ingested_samples_total"},
	}
)

// ingestedVM is what VictoriaMetrics (single node or vminsert) took in by remote write:
// vm_rows_inserted_total{type="promremotewrite"}, or every type when that one is absent.
func ingestedVM(families map[string]*dto.MetricFamily) (float64, bool) {
	mf, ok := families["vm_rows_inserted_total"]
	if !ok {
		return 0, false
	}
	total, found := 0.0, false
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "type" && l.GetValue() == "promremotewrite" {
				total, found = total+value(m), true
			}
		}
	}
	if found {
		return total, true
	}
	return sum(families, "vm_rows_inserted_total")
}

// kindOf guesses the storage from the names of its metrics.
func kindOf(families map[string]*dto.MetricFamily) string {
	kind := ""
	for name := range families {
		switch {
		case strings.HasPrefix(name, "vm_"):
			return storage.KindVictoriaMetrics
		case strings.HasPrefix(name, "prometheus_tsdb_"):
			kind = storage.KindPrometheus // unless vm_ names show up too
		}
	}
	return kind
}

// metricsSource scrapes one /metrics page.
type metricsSource struct {
	url    string
	client doer
}

func (m metricsSource) Collect(ctx context.Context, _ time.Time) (Sample, error) {
	families, err := m.scrape(ctx)
	if err != nil {
		return Sample{}, err
	}
	return fromFamilies(families), nil
}

func (m metricsSource) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url, nil)
	if err != nil { // its text quotes the URL, password included
		return nil, fmt.Errorf("GET %s: invalid URL", redact(m.url))
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact(m.url), unwrapURLError(err))
	}
	defer func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", redact(m.url), resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: not the Prometheus text format: %w", redact(m.url), err)
	}
	return families, nil
}

// fromFamilies picks tsbench's figures out of a /metrics page.
func fromFamilies(families map[string]*dto.MetricFamily) Sample {
	s := Sample{Kind: kindOf(families)}
	if v, ok := sum(families, "process_cpu_seconds_total"); ok {
		s.CPUSeconds = &v
	} else {
		s.miss(figCPU, "metric process_cpu_seconds_total not exposed")
	}
	if v, ok := sum(families, "process_resident_memory_bytes"); ok {
		s.RSSBytes = &v
	} else {
		s.miss(figRSS, "metric process_resident_memory_bytes not exposed")
	}
	if v, ok := firstKnown(families, diskFamilies); ok {
		s.DiskBytes = &v
	} else {
		s.miss(figDisk, "no known storage size metric exposed (vm_data_size_bytes, prometheus_tsdb_storage_blocks_bytes, ...)")
	}
	if v, ok := ingestedVM(families); ok {
		s.Ingested = &v
	} else if v, ok := firstKnown(families, ingestFamilies); ok {
		s.Ingested = &v
	} else {
		s.miss(figIngested, "no known ingestion metric exposed (vm_rows_inserted_total, prometheus_tsdb_head_samples_appended_total, ...)")
	}
	s.miss(figRead, "a /metrics page does not give disk IO: set pid for /proc")
	s.miss(figWrite, "a /metrics page does not give disk IO: set pid for /proc")
	return s
}

// firstKnown adds the families of the first group of which any family is exposed.
func firstKnown(families map[string]*dto.MetricFamily, groups [][]string) (float64, bool) {
	for _, group := range groups {
		total, found := 0.0, false
		for _, name := range group {
			if v, ok := sum(families, name); ok {
				total, found = total+v, true
			}
		}
		if found {
			return total, true
		}
	}
	return 0, false
}

// sum adds every sample of a family; false when the family is absent.
func sum(families map[string]*dto.MetricFamily, name string) (float64, bool) {
	mf, ok := families[name]
	if !ok {
		return 0, false
	}
	total := 0.0
	for _, m := range mf.GetMetric() {
		total += value(m)
	}
	return total, true
}

// value of a counter, gauge or untyped sample; 0 for other types.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// redact hides the userinfo of a URL.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return raw
}

// unwrapURLError drops url.Error's own "Get \"URL\":" prefix: our messages name the
// redacted URL themselves.
func unwrapURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
