package config

import (
	"fmt"
	"time"
)

// Freshness configures the canary series that measure, per storage, how long after its ack a
// sample becomes visible to a query (issue 21). The canary is tsbench's own: written apart
// from the workload (not in its account, its read-back or its queries), one request every
// WriteInterval, each sample looked for at the same fixed times after its ack on every storage
// (internal/freshness' Schedule: from Interval to WriteInterval, geometrically).
type Freshness struct {
	// Interval is the first time after a sample's ack each storage is asked for it, by an
	// instant query, a range query over the last 5 minutes and an /api/v1/series lookup: the
	// figures' finest resolution. 0 turns freshness off.
	Interval time.Duration `yaml:"interval" json:"interval"`
	// WriteInterval is how often a canary sample is written to each storage; 0, the default,
	// as seldom as keeps the canary's queries at a tenth of the workload's read load.
	WriteInterval time.Duration `yaml:"writeInterval" json:"writeInterval"`
	// Timeout is how long after its ack a canary sample may take to become visible before it
	// is counted as never visible.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
}

// On reports whether the canary runs.
func (f Freshness) On() bool { return f.Interval > 0 }

// OTLPLabels names how a storage maps OTLP resource attributes to labels, so that the
// read-back and the canary look for the workload's job and instance under the storage's names.
type OTLPLabels string

const (
	// OTLPLabelsPrometheus is Prometheus' translation (and Mimir's, Thanos receive's): job from
	// service.name (service.namespace/service.name when set), instance from
	// service.instance.id. The default.
	OTLPLabelsPrometheus OTLPLabels = "prometheus"
	// OTLPLabelsAttributes keeps resource attributes as labels under their own names,
	// service.name and service.instance.id, as VictoriaMetrics does.
	OTLPLabelsAttributes OTLPLabels = "attributes"
	// OTLPLabelsUnderscore is the same with names escaped to underscores: service_name and
	// service_instance_id (Prometheus with its resource attributes promoted and job and
	// instance taken away).
	OTLPLabelsUnderscore OTLPLabels = "underscore"
)

// OTLPLabelNames is where a storage with mapping m stores the workload's job and instance.
func OTLPLabelNames(m OTLPLabels) (job, instance string) {
	switch m {
	case OTLPLabelsAttributes:
		return "service.name", "service.instance.id"
	case OTLPLabelsUnderscore:
		return "service_name", "service_instance_id"
	}
	return "job", "instance"
}

// OTLPRenames is how the storage names job and instance when they differ from the
// workload's (written in otlp-http with otlpLabels other than prometheus): old → new; nil
// when it keeps them. The query load and the read-back's rules ask it under these names.
func (s Storage) OTLPRenames() map[string]string {
	if s.WriteProtocol() != ProtocolOTLP || s.OTLPLabelMapping() == OTLPLabelsPrometheus {
		return nil
	}
	job, instance := OTLPLabelNames(s.OTLPLabelMapping())
	return map[string]string{"job": job, "instance": instance}
}

// OTLPLabelMapping is OTLPLabels, prometheus when unset.
func (s Storage) OTLPLabelMapping() OTLPLabels {
	if s.OTLPLabels == "" {
		return OTLPLabelsPrometheus
	}
	return s.OTLPLabels
}

func (f Freshness) problems() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("freshness.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if f.Interval < 0 {
		bad("interval", "must be >= 0 (0 turns freshness off)")
	}
	if !f.On() {
		return errs
	}
	if f.Interval < time.Millisecond {
		bad("interval", "must be >= 1ms, or 0 to turn freshness off")
	}
	switch {
	case f.WriteInterval < 0:
		bad("writeInterval", "must be >= 0 (0: a tenth of the read load)")
	case f.WriteInterval > 0 && f.WriteInterval < f.Interval:
		bad("writeInterval", "%s is shorter than freshness.interval (%s): write at most as often as you poll", ShortDuration(f.WriteInterval), ShortDuration(f.Interval))
	}
	switch {
	case f.Timeout < f.WriteInterval:
		bad("timeout", "%s is shorter than freshness.writeInterval (%s)", ShortDuration(f.Timeout), ShortDuration(f.WriteInterval))
	case f.Timeout < f.Interval:
		bad("timeout", "%s is shorter than freshness.interval (%s)", ShortDuration(f.Timeout), ShortDuration(f.Interval))
	}
	return errs
}

func (s Storage) otlpLabelProblems(key string) []error {
	switch s.OTLPLabels {
	case "", OTLPLabelsPrometheus, OTLPLabelsAttributes, OTLPLabelsUnderscore:
	default:
		return []error{fmt.Errorf("%s.otlpLabels: must be %s (the default), %s or %s, not %q", key, OTLPLabelsPrometheus, OTLPLabelsAttributes, OTLPLabelsUnderscore, s.OTLPLabels)}
	}
	if s.OTLPLabels != "" && s.WriteProtocol() != ProtocolOTLP {
		return []error{fmt.Errorf("%s.otlpLabels: applies to protocol: %s only, the storage is written in %s", key, ProtocolOTLP, s.WriteProtocol())}
	}
	return nil
}
