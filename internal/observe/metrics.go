package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
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

// diskGroup is one storage kind's size metrics: the parts that together are everything it
// keeps on disk. Each family's samples are summed (every label set: tenants), and the disk
// figure is known only when every required part is exposed (issue 10: a sum that leaves a
// part out would pass for the whole). Optional parts exist only in some setups and are
// added when exposed.
type diskGroup struct {
	required, optional []string
	// missing follows the names of the required parts not exposed: what is then not
	// counted and how to get the figure.
	missing string
	// uncounted, when set, is what the group never counts: its figure is always unknown.
	uncounted string
}

// diskGroups are the kinds whose disk tsbench reads from their metrics, after
// VictoriaMetrics' (diskVM). The first group of which any family is exposed is used.
var diskGroups = []diskGroup{
	{
		// Prometheus and Thanos receive (its TSDB, as far as we know with the same names
		// per tenant: not confirmed). The WAL and head-chunk gauges came in Prometheus 2.43
		// (prometheus/prometheus#12013): 2.42 exposes only the blocks, 0 until the first
		// compaction, while its WAL grows. The out-of-order WBL exists only when enabled.
		required: []string{"prometheus_tsdb_storage_blocks_bytes", "prometheus_tsdb_wal_storage_size_bytes", "prometheus_tsdb_head_chunks_storage_size_bytes"},
		optional: []string{"prometheus_tsdb_out_of_order_wbl_storage_size_bytes"},
		missing: "not exposed (Prometheus before 2.43 gives only its blocks' size): its WAL and head chunks are not counted; " +
			"set dataDir to the storage's data directory, or run Prometheus 2.43 or newer",
	},
	{
		// Mimir and Cortex ingesters: local blocks only, per tenant (name confirmed in
		// Mimir's mixin and ingester tests). Their WAL and head chunks have no size gauge,
		// and the blocks shipped to object storage are not on local disk: never complete.
		required: []string{"cortex_ingester_tsdb_storage_blocks_bytes"},
		uncounted: "cortex_ingester_tsdb_storage_blocks_bytes is the ingesters' local blocks only: their WAL and head chunks " +
			"have no size metric and the blocks in object storage are not on local disk; " +
			"set dataDir to a directory that holds all of the storage's data",
	},
}

// vmDiskParts are the types of vm_data_size_bytes that are on disk, each under its name in
// VictoriaMetrics 1.79 or newer versions (indexdb/file since the in-memory parts got their
// own types).
var vmDiskParts = [][]string{{"indexdb", "indexdb/file"}, {"storage/small"}, {"storage/big"}}

// disk is the storage's bytes on disk by its own size metrics. exposed is false when the page
// has none of them (vminsert, vmselect, a distributor keep nothing on disk); why is set when
// it has some but not every part, and the figure is then unknown.
func disk(families map[string]*dto.MetricFamily) (v float64, why string, exposed bool) {
	if v, why, ok := diskVM(families); ok {
		return v, why, true
	}
	for _, g := range diskGroups {
		total, found := 0.0, false
		var absent []string
		for _, name := range g.required {
			if v, ok := sum(families, name); ok {
				total, found = total+v, true
			} else {
				absent = append(absent, name)
			}
		}
		if !found {
			continue
		}
		switch {
		case g.uncounted != "":
			return 0, g.uncounted, true
		case len(absent) > 0:
			return 0, strings.Join(absent, ", ") + " " + g.missing, true
		}
		for _, name := range g.optional {
			if v, ok := sum(families, name); ok {
				total += v
			}
		}
		return total, "", true
	}
	return 0, "", false
}

// diskVM is VictoriaMetrics' vm_data_size_bytes without the types ending in /inmemory
// (indexdb/inmemory, storage/inmemory in newer versions): those parts are in RAM, not on
// disk. VictoriaMetrics has no WAL: what it has not flushed yet (a second's worth) is in RAM.
func diskVM(families map[string]*dto.MetricFamily) (v float64, why string, exposed bool) {
	mf, ok := families["vm_data_size_bytes"]
	if !ok {
		return 0, "", false
	}
	total, seen := 0.0, map[string]bool{}
	for _, m := range mf.GetMetric() {
		t := labelValue(m, "type")
		seen[t] = true
		if !strings.HasSuffix(t, "/inmemory") {
			total += value(m)
		}
	}
	var absent []string
	for _, names := range vmDiskParts {
		if !slices.ContainsFunc(names, func(n string) bool { return seen[n] }) {
			absent = append(absent, `type="`+names[len(names)-1]+`"`)
		}
	}
	if len(absent) > 0 {
		return 0, "vm_data_size_bytes has no " + strings.Join(absent, ", ") + ": that part of the disk is not counted; set dataDir to the storage's data directory", true
	}
	return total, "", true
}

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
func kindOf(families map[string]*dto.MetricFamily) storage.Kind {
	var kind storage.Kind
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

// fromFamilies picks tsbench's figures out of a /metrics page. A storage figure whose metrics
// the page does not have is absent: a cluster's component that keeps nothing on disk or
// ingests nothing itself is left out of the sum. CPU and RSS are never absent: every
// component is a process that uses them, and a sum without one would pass for the whole.
func fromFamilies(families map[string]*dto.MetricFamily) Sample {
	s := Sample{Kind: kindOf(families)}
	if v, ok := sum(families, "process_cpu_seconds_total"); ok {
		s.CPUSeconds = &v
	} else {
		s.miss(figCPU, "metric process_cpu_seconds_total not exposed: set pid for /proc")
	}
	if v, ok := sum(families, "process_resident_memory_bytes"); ok {
		s.RSSBytes = &v
	} else {
		s.miss(figRSS, "metric process_resident_memory_bytes not exposed: set pid for /proc")
	}
	if v, ok := sum(families, "process_start_time_seconds"); ok {
		s.Start = &v
	}
	switch v, why, exposed := disk(families); {
	case !exposed:
		s.absent(figDisk, "no known storage size metric exposed (vm_data_size_bytes, prometheus_tsdb_storage_blocks_bytes, ...): set dataDir to the storage's data directory")
	case why != "":
		s.miss(figDisk, why)
	default:
		s.DiskBytes = &v
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
	s.SeriesCreated = seriesCreated(families)
	s.absent(figRead, "a /metrics page does not give disk IO: set pid for /proc")
	s.absent(figWrite, "a /metrics page does not give disk IO: set pid for /proc")
	return s
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
