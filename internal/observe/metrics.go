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

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
)

// doer sends a request: a *storage.Client with the storage's auth, headers and TLS, or a
// plain *http.Client.
type doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Disk metrics per storage kind, after VictoriaMetrics' (diskVM). Each family's samples are
// summed (every label set), and the families of a group are added: Prometheus' disk is its
// blocks plus its WAL plus its head chunks. The first group of which a family is exposed is used.
var diskFamilies = [][]string{
	{"prometheus_tsdb_storage_blocks_bytes", "prometheus_tsdb_wal_storage_size_bytes", "prometheus_tsdb_head_chunks_storage_size_bytes"},
	// Mimir and Cortex ingesters: local blocks only, per tenant (name confirmed in Mimir's
	// mixin and ingester tests; their WAL and head sizes have no such gauge, and the blocks
	// shipped to object storage are not on local disk): see cortexDiskCaveat.
	// Thanos receive embeds Prometheus' TSDB and, as far as we know, exposes its
	// prometheus_tsdb_* names (per tenant): not confirmed, so no Thanos-only name here.
	{"cortex_ingester_tsdb_storage_blocks_bytes"},
}

const cortexDiskCaveat = "cortex_ingester_tsdb_storage_blocks_bytes: the ingesters' local blocks only, without their WAL, head and the blocks in object storage"

// ingestMetrics are the ingestion counters, best first: the first exposed one is used, and a
// cluster adds only the components that expose the best one seen.
var ingestMetrics = []string{
	"vm_rows_inserted_total",                      // VictoriaMetrics single and vminsert: see ingestedVM
	"prometheus_tsdb_head_samples_appended_total", // every type (float, histogram) and tenant
	// Mimir and Cortex, per tenant: distributors count each sample once; ingesters count it
	// once per replica (replication factor 3 by default), so they are only a fallback.
	"cortex_distributor_received_samples_total",
	"cortex_ingester_ingested_samples_total",
}

// diskVM is VictoriaMetrics' vm_data_size_bytes without the types ending in /inmemory
// (indexdb/inmemory, storage/inmemory in newer versions): those parts are in RAM, not on disk.
func diskVM(families map[string]*dto.MetricFamily) (float64, bool) {
	mf, ok := families["vm_data_size_bytes"]
	if !ok {
		return 0, false
	}
	total := 0.0
	for _, m := range mf.GetMetric() {
		if !strings.HasSuffix(labelValue(m, "type"), "/inmemory") {
			total += value(m)
		}
	}
	return total, true
}

// ingestedVM is what VictoriaMetrics (single node or vminsert) took in by remote write:
// vm_rows_inserted_total{type="promremotewrite"}, or every type when that one is absent.
func ingestedVM(families map[string]*dto.MetricFamily) (float64, bool) {
	mf, ok := families["vm_rows_inserted_total"]
	if !ok {
		return 0, false
	}
	total, found := 0.0, false
	for _, m := range mf.GetMetric() {
		if labelValue(m, "type") == "promremotewrite" {
			total, found = total+value(m), true
		}
	}
	if found {
		return total, true
	}
	return sum(families, "vm_rows_inserted_total")
}

// ingested is the first ingestion counter of ingestMetrics exposed, and its rank there.
func ingested(families map[string]*dto.MetricFamily) (v float64, rank int, ok bool) {
	if v, ok := ingestedVM(families); ok {
		return v, 0, true
	}
	for rank, name := range ingestMetrics[1:] {
		if v, ok := sum(families, name); ok {
			return v, rank + 1, true
		}
	}
	return 0, 0, false
}

// activeSeries is the series the storage holds in memory: Prometheus' head series, or
// VictoriaMetrics' series that got samples in the current hour.
func activeSeries(families map[string]*dto.MetricFamily) (float64, bool) {
	if mf, ok := families["vm_cache_entries"]; ok {
		for _, m := range mf.GetMetric() {
			if labelValue(m, "type") == "storage/hour_metric_ids" {
				return value(m), true
			}
		}
	}
	return sum(families, "prometheus_tsdb_head_series")
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
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
		return nil, fmt.Errorf("GET %s: invalid URL", config.RedactURL(m.url))
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", config.RedactURL(m.url), unwrapURLError(err))
	}
	defer func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", config.RedactURL(m.url), resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: not the Prometheus text format: %w", config.RedactURL(m.url), err)
	}
	return families, nil
}

// fromFamilies picks tsbench's figures out of a /metrics page. A figure whose metrics the
// page does not have is absent: a cluster's component that does not give it is left out.
func fromFamilies(families map[string]*dto.MetricFamily) Sample {
	s := Sample{Kind: kindOf(families)}
	if v, ok := sum(families, "process_cpu_seconds_total"); ok {
		s.CPUSeconds = &v
	} else {
		s.absent(figCPU, "metric process_cpu_seconds_total not exposed")
	}
	if v, ok := sum(families, "process_resident_memory_bytes"); ok {
		s.RSSBytes = &v
	} else {
		s.absent(figRSS, "metric process_resident_memory_bytes not exposed")
	}
	if v, ok := sum(families, "process_start_time_seconds"); ok {
		s.Start = &v
	}
	if v, ok := diskVM(families); ok {
		s.DiskBytes = &v
	} else if v, group, ok := firstKnown(families, diskFamilies); ok {
		s.DiskBytes = &v
		if group[0] == "cortex_ingester_tsdb_storage_blocks_bytes" {
			s.Caveats = map[string]string{figDisk: cortexDiskCaveat}
		}
	} else {
		s.absent(figDisk, "no known storage size metric exposed (vm_data_size_bytes, prometheus_tsdb_storage_blocks_bytes, ...)")
	}
	if v, rank, ok := ingested(families); ok {
		s.Ingested, s.IngestedRank = &v, rank
	} else {
		s.absent(figIngested, "no known ingestion metric exposed (vm_rows_inserted_total, prometheus_tsdb_head_samples_appended_total, ...)")
	}
	if v, ok := activeSeries(families); ok {
		s.ActiveSeries = &v
	} else {
		s.absent(figActive, "no known series metric exposed (prometheus_tsdb_head_series, vm_cache_entries{type=\"storage/hour_metric_ids\"})")
	}
	s.absent(figRead, "a /metrics page does not give disk IO: set pid for /proc")
	s.absent(figWrite, "a /metrics page does not give disk IO: set pid for /proc")
	return s
}

// firstKnown adds the families of the first group of which any family is exposed, and
// returns that group.
func firstKnown(families map[string]*dto.MetricFamily, groups [][]string) (float64, []string, bool) {
	for _, group := range groups {
		total, found := 0.0, false
		for _, name := range group {
			if v, ok := sum(families, name); ok {
				total, found = total+v, true
			}
		}
		if found {
			return total, group, true
		}
	}
	return 0, nil, false
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

// unwrapURLError drops url.Error's own "Get \"URL\":" prefix: our messages name the
// redacted URL themselves.
func unwrapURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
