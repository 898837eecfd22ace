package report

// Resources is what the storage used over the run (issue: observe). A nil figure is unknown,
// never zero; Reasons says why per figure.
type Resources struct {
	Source                  string                `json:"source"` // "proc", "metrics", "proc+metrics"
	CPUCoresMean            *float64              `json:"cpuCoresMean"`
	CPUCoresMax             *float64              `json:"cpuCoresMax"`
	RSSBytesMean            *float64              `json:"rssBytesMean"`
	RSSBytesMax             *float64              `json:"rssBytesMax"`
	DiskBytesEnd            *float64              `json:"diskBytesEnd"`
	DiskBytesMax            *float64              `json:"diskBytesMax"`
	DiskReadBytesPerSecond  *float64              `json:"diskReadBytesPerSecond"`
	DiskWriteBytesPerSecond *float64              `json:"diskWriteBytesPerSecond"`
	IngestedSamples         *float64              `json:"ingestedSamples"` // according to the storage
	BytesPerSample          *float64              `json:"bytesPerSample"`
	SnapshotBytes           *float64              `json:"snapshotBytes"`
	SnapshotBytesPerSample  *float64              `json:"snapshotBytesPerSample"`
	Reasons                 map[string]string     `json:"reasons,omitempty"` // figure name → why unknown
	Timeline                []ResourcePoint       `json:"timeline,omitempty"`
	Components              map[string]*Resources `json:"components,omitempty"` // per metrics URL of a cluster
	// Crosscheck holds the same figures from each source when both /proc and /metrics
	// observed the process, so a reader can see they agree.
	Crosscheck *Crosscheck `json:"crosscheck,omitempty"`
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
	Time                    string   `json:"time"`
	CPUCores                *float64 `json:"cpuCores"`
	RSSBytes                *float64 `json:"rssBytes"`
	DiskBytes               *float64 `json:"diskBytes"`
	DiskReadBytesPerSecond  *float64 `json:"diskReadBytesPerSecond"`
	DiskWriteBytesPerSecond *float64 `json:"diskWriteBytesPerSecond"`
	IngestedSamples         *float64 `json:"ingestedSamples"`
	BytesPerSample          *float64 `json:"bytesPerSample"`
}

// Generator is tsbench's own resource use, so a reader can see it was not the bottleneck.
type Generator struct {
	CPUCoresMean *float64        `json:"cpuCoresMean"`
	CPUCoresMax  *float64        `json:"cpuCoresMax"`
	RSSBytesMean *float64        `json:"rssBytesMean"`
	RSSBytesMax  *float64        `json:"rssBytesMax"`
	Timeline     []ResourcePoint `json:"timeline,omitempty"`
}
