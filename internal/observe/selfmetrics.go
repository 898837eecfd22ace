package observe

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/tsbench/tsbench/internal/results"
)

// metrics are the observed figures on tsbench's own /metrics.
type metrics struct {
	storage        map[string]*prometheus.GaugeVec // figure → gauge with the storage label
	bytesPerSample *prometheus.GaugeVec
	cpu, rss       *prometheus.GaugeVec // tsbench's own, no labels: a vec so an unknown figure can have no series
}

// newMetrics registers the observe metrics; a nil registerer gets unregistered ones.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	gauge := func(name, help string) *prometheus.GaugeVec {
		return f.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"storage"})
	}
	return &metrics{
		storage: map[string]*prometheus.GaugeVec{
			figCPU:      gauge("tsbench_storage_cpu_cores", "CPU cores the storage used over the last observe interval."),
			figRSS:      gauge("tsbench_storage_rss_bytes", "Resident memory of the storage."),
			figDisk:     gauge("tsbench_storage_disk_bytes", "Bytes the storage holds on disk (data dir, or its own size metrics)."),
			figRead:     gauge("tsbench_storage_disk_read_bytes_per_second", "Bytes the storage read from disk per second over the last observe interval."),
			figWrite:    gauge("tsbench_storage_disk_write_bytes_per_second", "Bytes the storage wrote to disk per second over the last observe interval."),
			figIngested: gauge("tsbench_storage_ingested_samples", "Samples the storage says it ingested since tsbench first observed it: increases of its own count, corrected for restarts."),
			figActive:   gauge("tsbench_storage_active_series", "Series the storage holds in memory by its own count (Prometheus' head series, VictoriaMetrics' series of the current hour)."),
		},
		bytesPerSample: gauge("tsbench_storage_bytes_per_sample", "Disk growth since tsbench first observed the storage over the samples it acked so far, as bytesPerSample in results.json."),
		cpu:            f.NewGaugeVec(prometheus.GaugeOpts{Name: "tsbench_generator_cpu_cores", Help: "CPU cores tsbench itself used over the last observe interval."}, nil),
		rss:            f.NewGaugeVec(prometheus.GaugeOpts{Name: "tsbench_generator_rss_bytes", Help: "Resident memory of tsbench itself."}, nil),
	}
}

// set exports one storage's point; an unknown figure has no series rather than a zero.
func (m *metrics) set(name string, p results.ResourcePoint) {
	for fig, v := range map[string]*float64{
		figCPU: p.CPUCores, figRSS: p.RSSBytes, figDisk: p.DiskBytes,
		figRead: p.DiskReadBytesPerSecond, figWrite: p.DiskWriteBytesPerSecond, figIngested: p.IngestedSamples,
		figActive: p.ActiveSeries,
	} {
		setOrDelete(m.storage[fig], name, v)
	}
	setOrDelete(m.bytesPerSample, name, p.BytesPerSample)
}

// setOrDelete sets the storage's series, or deletes it when v is unknown.
func setOrDelete(g *prometheus.GaugeVec, name string, v *float64) {
	if v == nil {
		g.DeleteLabelValues(name)
		return
	}
	g.WithLabelValues(name).Set(*v)
}

func (m *metrics) setSelf(p results.ResourcePoint) {
	for g, v := range map[*prometheus.GaugeVec]*float64{m.cpu: p.CPUCores, m.rss: p.RSSBytes} {
		if v == nil {
			g.DeleteLabelValues()
			continue
		}
		g.WithLabelValues().Set(*v)
	}
}
