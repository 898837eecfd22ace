package results

// Resources is what the storage used over the run (issue: observe). A nil figure is unknown,
// never zero; Reasons says why per figure. Means and maxima cover the load only (not the
// read-back and snapshot after it), each observation weighted by its interval; disk end and
// growth and ingested samples are taken at the end of the run.
type Resources struct {
	Source       string   `json:"source"` // "proc", "metrics", "proc+metrics"
	CPUCoresMean *float64 `json:"cpuCoresMean"`
	CPUCoresMax  *float64 `json:"cpuCoresMax"`
	RSSBytesMean *float64 `json:"rssBytesMean"`
	RSSBytesMax  *float64 `json:"rssBytesMax"`
	DiskBytesEnd *float64 `json:"diskBytesEnd"`
	DiskBytesMax *float64 `json:"diskBytesMax"`
	// DiskBytesGrowth is DiskBytesEnd minus the disk bytes at the first observation, before
	// the load.
	DiskBytesGrowth         *float64 `json:"diskBytesGrowth"`
	DiskReadBytesPerSecond  *float64 `json:"diskReadBytesPerSecond"`
	DiskWriteBytesPerSecond *float64 `json:"diskWriteBytesPerSecond"`
	// IngestedSamples is what the storage says it ingested since the first observation
	// (increases of its own counter, a restart counted from zero), not its count since it started.
	IngestedSamples *float64 `json:"ingestedSamples"`
	ActiveSeriesMax *float64 `json:"activeSeriesMax"` // series in memory by the storage's own count, the load's maximum
	// BytesPerSample is DiskBytesGrowth over the acked samples: what this run's samples took.
	// For a storage tsbench started empty it is nearly DiskBytesEnd over the acked samples.
	BytesPerSample *float64 `json:"bytesPerSample"`
	SnapshotBytes  *float64 `json:"snapshotBytes"`
	// SnapshotBytesPerSample is SnapshotBytes over the acked samples. A snapshot holds all
	// the storage's data, what it held before the run too (Reasons then carries a caveat).
	SnapshotBytesPerSample *float64 `json:"snapshotBytesPerSample"`
	// Reasons maps a figure name to why it is unknown, or to a caveat on a known one (a disk
	// figure that leaves something out, a snapshot that holds older data).
	Reasons    map[string]string     `json:"reasons,omitempty"`
	Timeline   []ResourcePoint       `json:"timeline,omitempty"`
	Components map[string]*Resources `json:"components,omitempty"` // per metrics URL of a cluster
	// Crosscheck holds the same figures from each source when both /proc and /metrics
	// observed the process, so a reader can see they agree.
	Crosscheck *Crosscheck `json:"crosscheck,omitempty"`
	// History is the same figures over the storage's catch-up alone (config history): means
	// and maxima until it caught up, disk growth and bytes per sample at the first
	// observation after. The figures above cover the whole run, catch-up included.
	History *Resources `json:"history,omitempty"`
}

// HeldDataBytes is the disk size at the first observation from which a storage is taken to
// hold data from before the run: a fresh data dir holds a few kB (VictoriaMetrics 1.79: 12
// bytes; Prometheus 2.42: 20001, its preallocated query log), the smallest earlier run more.
const HeldDataBytes = 1 << 20

// DiskBytesStart is the disk the storage used at the first observation, before the load:
// DiskBytesEnd less DiskBytesGrowth; nil when either is unknown.
func (r *Resources) DiskBytesStart() *float64 {
	if r == nil || r.DiskBytesEnd == nil || r.DiskBytesGrowth == nil {
		return nil
	}
	return new(*r.DiskBytesEnd - *r.DiskBytesGrowth)
}

// Crosscheck compares /proc and the storage's own process_* metrics for one process.
type Crosscheck struct {
	ProcCPUCoresMean    *float64 `json:"procCpuCoresMean"`
	MetricsCPUCoresMean *float64 `json:"metricsCpuCoresMean"`
	ProcRSSBytesMean    *float64 `json:"procRssBytesMean"`
	MetricsRSSBytesMean *float64 `json:"metricsRssBytesMean"`
}

// ResourcePoint is one observation of a storage's resources; nil is unknown.
type ResourcePoint struct {
	Time                    string   `json:"time"` // RFC 3339 with nanoseconds
	CPUCores                *float64 `json:"cpuCores"`
	RSSBytes                *float64 `json:"rssBytes"`
	DiskBytes               *float64 `json:"diskBytes"`
	DiskReadBytesPerSecond  *float64 `json:"diskReadBytesPerSecond"`
	DiskWriteBytesPerSecond *float64 `json:"diskWriteBytesPerSecond"`
	IngestedSamples         *float64 `json:"ingestedSamples"`
	ActiveSeries            *float64 `json:"activeSeries"`
	// SeriesCreated is the storage's own count of series created since it started
	// (VictoriaMetrics' vm_new_timeseries_created_total, Prometheus'
	// prometheus_tsdb_head_series_created_total); omitted where it has none.
	SeriesCreated  *float64 `json:"seriesCreated,omitempty"`
	BytesPerSample *float64 `json:"bytesPerSample"` // disk growth since the first point over the samples acked by then
	// AckedSamples is what tsbench counted the storage as having acked at this observation:
	// over the target rate, how much of the workload's time the storage holds.
	AckedSamples int64 `json:"ackedSamples,omitempty"`
	// HeapLiveBytes is tsbench's own live heap after the last GC (Generator only).
	HeapLiveBytes *float64 `json:"heapLiveBytes,omitempty"`
	// N is how many observations the point stands for (0: one) in a long run's downsampled
	// timeline (Timeline): gauges and rates are their means, counts the last one's, and Min
	// and Max hold each gauge's extremes.
	N   int               `json:"n,omitempty"`
	Min *ResourceExtremes `json:"min,omitempty"`
	Max *ResourceExtremes `json:"max,omitempty"`
}

// ResourceExtremes are the smallest or largest gauges over the observations of one point.
type ResourceExtremes struct {
	CPUCores                *float64 `json:"cpuCores,omitempty"`
	RSSBytes                *float64 `json:"rssBytes,omitempty"`
	DiskBytes               *float64 `json:"diskBytes,omitempty"`
	DiskReadBytesPerSecond  *float64 `json:"diskReadBytesPerSecond,omitempty"`
	DiskWriteBytesPerSecond *float64 `json:"diskWriteBytesPerSecond,omitempty"`
	ActiveSeries            *float64 `json:"activeSeries,omitempty"`
	HeapLiveBytes           *float64 `json:"heapLiveBytes,omitempty"`
}

// Generator is tsbench's own resource use, so a reader can see it was not the bottleneck.
type Generator struct {
	CPUCoresMean *float64          `json:"cpuCoresMean"`
	CPUCoresMax  *float64          `json:"cpuCoresMax"`
	RSSBytesMean *float64          `json:"rssBytesMean"`
	RSSBytesMax  *float64          `json:"rssBytesMax"`
	Reasons      map[string]string `json:"reasons,omitempty"` // figure name → why unknown
	Timeline     []ResourcePoint   `json:"timeline,omitempty"`
	// HeapLiveBytesPerHour and RSSBytesPerHour are the slopes (least squares) of tsbench's
	// live heap after GC and of its RSS over the timeline after SlopeAfterSeconds of the
	// live load (10 minutes, or the first fifth of a shorter run; with history, from the
	// moment every storage caught up): a long run's memory must stay flat (issue 19). Nil,
	// with the reason in Reasons, when less than MinSlopeSpan of the run is left after it
	// (SetSlopes).
	HeapLiveBytesPerHour *float64 `json:"heapLiveBytesPerHour,omitempty"`
	RSSBytesPerHour      *float64 `json:"rssBytesPerHour,omitempty"`
	SlopeAfterSeconds    float64  `json:"slopeAfterSeconds,omitempty"`
}
