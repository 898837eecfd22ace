package observe

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

// disk is the storage's bytes on disk by its own size metrics: the first family's, in Order,
// that the page exposes. exposed is false when the page has none of them (vminsert,
// vmselect, a distributor keep nothing on disk); why is set when it has some but not every
// part, and the figure is then unknown.
func disk(p storage.Page) (v float64, why string, exposed bool) {
	for _, f := range storage.Families() {
		if f.Disk == nil {
			continue
		}
		if v, why, ok := f.Disk(p); ok {
			return v, why, true
		}
	}
	return 0, "", false
}

// ingestMetrics are the ingestion counters, best first: every family's, in Order. The
// first exposed one is used, and a cluster adds only the components that expose the best
// one seen.
func ingestMetrics() []storage.Selector {
	var s []storage.Selector
	for _, f := range storage.Families() {
		s = append(s, f.Ingested...)
	}
	return s
}

// ingested is the first ingestion counter of ingestMetrics exposed, and its rank there.
func ingested(p storage.Page) (v float64, rank int, ok bool) {
	for rank, s := range ingestMetrics() {
		if v, ok := p.Select(s); ok {
			return v, rank, true
		}
	}
	return 0, 0, false
}

// activeSeries is the series the storage holds in memory: the first family's series gauge,
// in Order, that the page exposes.
func activeSeries(p storage.Page) (float64, bool) {
	for _, f := range storage.Families() {
		if f.Series == nil {
			continue
		}
		if v, ok := p.Select(*f.Series); ok {
			return v, true
		}
	}
	return 0, false
}

// kindOf guesses the storage from the names of its metrics: the first family, in Order,
// with a name of its MetricPrefix.
func kindOf(p storage.Page) storage.Kind {
	for _, f := range storage.Families() {
		if f.MetricPrefix == "" {
			continue
		}
		for name := range p {
			if strings.HasPrefix(name, f.MetricPrefix) {
				return f.Kind
			}
		}
	}
	return ""
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
		return nil, fmt.Errorf("GET %s: %w", config.RedactURL(m.url), storage.StripURL(err))
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

// fromFamilies picks tsbench's figures out of a /metrics page. A storage figure whose metrics
// the page does not have is absent: a cluster's component that keeps nothing on disk or
// ingests nothing itself is left out of the sum. CPU and RSS are never absent: every
// component is a process that uses them, and a sum without one would pass for the whole.
func fromFamilies(families map[string]*dto.MetricFamily) Sample {
	p := storage.Page(families)
	s := Sample{Kind: kindOf(p)}
	if v, ok := p.Sum("process_cpu_seconds_total"); ok {
		s.CPUSeconds = &v
	} else {
		s.miss(figCPU, "metric process_cpu_seconds_total not exposed: set pid for /proc")
	}
	if v, ok := p.Sum("process_resident_memory_bytes"); ok {
		s.RSSBytes = &v
	} else {
		s.miss(figRSS, "metric process_resident_memory_bytes not exposed: set pid for /proc")
	}
	if v, ok := p.Sum("process_start_time_seconds"); ok {
		s.Start = &v
	}
	switch v, why, exposed := disk(p); {
	case !exposed:
		s.absent(figDisk, "no known storage size metric exposed (vm_data_size_bytes, prometheus_tsdb_storage_blocks_bytes, ...): set dataDir to the storage's data directory")
	case why != "":
		s.miss(figDisk, why)
	default:
		s.DiskBytes = &v
	}
	if v, rank, ok := ingested(p); ok {
		s.Ingested, s.IngestedRank = &v, rank
	} else {
		s.absent(figIngested, "no known ingestion metric exposed (vm_rows_inserted_total, prometheus_tsdb_head_samples_appended_total, ...)")
	}
	if v, ok := activeSeries(p); ok {
		s.ActiveSeries = &v
	} else {
		s.absent(figActive, "no known series metric exposed (prometheus_tsdb_head_series, vm_cache_entries{type=\"storage/hour_metric_ids\"})")
	}
	s.SeriesCreated = seriesCreated(p)
	s.absent(figRead, "a /metrics page does not give disk IO: set pid for /proc")
	s.absent(figWrite, "a /metrics page does not give disk IO: set pid for /proc")
	return s
}
