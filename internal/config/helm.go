package config

// HelmOnly holds the keys of tsbench's own Helm chart (deploy/helm/tsbench) that size and
// place its pods rather than the benchmark: a chart values file is also a config file
// (`tsbench validate -config my-values.yaml`, `tsbench run` on one machine), and each of
// these set is named in a warning. The chart leaves them out of the config it renders.
type HelmOnly struct {
	Shards           any `yaml:"shards" json:"-"`
	Image            any `yaml:"image" json:"-"`
	StartDelay       any `yaml:"startDelay" json:"-"`
	SamplesPerCore   any `yaml:"samplesPerCore" json:"-"`
	CPUHeadroom      any `yaml:"cpuHeadroom" json:"-"`
	Resources        any `yaml:"resources" json:"-"`
	ServiceMonitor   any `yaml:"serviceMonitor" json:"-"`
	PodMonitor       any `yaml:"podMonitor" json:"-"`
	GrafanaDashboard any `yaml:"grafanaDashboard" json:"-"`
}

// helmWarning is the warning for a key of HelmOnly.
const helmWarning = "key of tsbench's Helm chart ignored here: it sizes and places the chart's pods"
