package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SampleTypes holds the keys of the sample types beyond floats (issue 23).
type SampleTypes struct {
	// NativeHistograms sends the profile's histograms as native (exponential) histograms.
	NativeHistograms NativeHistograms `yaml:"nativeHistograms" json:"nativeHistograms"`
	// Exemplars puts exemplars (trace ids) on counters and native histograms.
	Exemplars Exemplars `yaml:"exemplars" json:"exemplars"`
	// SendMetadata sends the profile's metadata (type, help, unit per family) to the storages
	// on remote write 1.0 in its WriteRequest.metadata field: one request at the start and
	// one a minute after, as Prometheus' metadata_config does. 2.0 and OTLP carry metadata
	// with every series anyway.
	SendMetadata bool `yaml:"sendMetadata" json:"sendMetadata,omitempty"`
}

// Exemplars is exemplars: {percent}.
type Exemplars struct {
	// Percent of counter samples and native histograms that carry an exemplar, 0 to 100.
	Percent float64 `yaml:"percent" json:"percent"`
}

// NativeHistograms is nativeHistograms: false, true or both alone, or a mapping of send,
// fromSummaries and schema.
type NativeHistograms struct {
	// Send is false (classic series only), true (each histogram family as one native
	// histogram series instead of its _bucket, _count and _sum) or both (classic and native,
	// as Prometheus' always_scrape_classic_histograms).
	Send string `yaml:"send" json:"send"`
	// FromSummaries turns summaries into native histograms too, their quantiles' values as
	// bucket positions (the default profile has summaries and no histogram).
	FromSummaries bool `yaml:"fromSummaries" json:"fromSummaries,omitempty"`
	// Schema is the native histograms' schema, -4 to 8; unset, each family gets the coarsest
	// that keeps its bounds in buckets of their own, stated in the results.
	Schema *int32 `yaml:"schema" json:"schema,omitempty"`
}

// Values of nativeHistograms.send.
const (
	NativeOff  = "false"
	NativeOn   = "true"
	NativeBoth = "both"
)

// nativeKeys are the keys of nativeHistograms' mapping form.
var nativeKeys = []string{"send", "fromSummaries", "schema"}

// UnmarshalYAML takes the short form (nativeHistograms: both) or the mapping. The mapping's
// keys are checked here: a custom unmarshaler does not inherit the decoder's KnownFields.
// Its errors are *yaml.TypeError, so the decoding of the rest goes on.
func (n *NativeHistograms) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		n.Send = v.Value
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want false, true, both or a mapping of %s", v.Line, strings.Join(nativeKeys, ", "))}}
	}
	for i := 0; i < len(v.Content); i += 2 {
		if k := v.Content[i]; !slices.Contains(nativeKeys, k.Value) {
			return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: unknown key nativeHistograms.%s (the keys here: %s)", k.Line, k.Value, strings.Join(nativeKeys, ", "))}}
		}
	}
	type plain NativeHistograms // without this method
	return v.Decode((*plain)(n))
}

// On reports whether native histograms are sent.
func (n NativeHistograms) On() bool { return n.Send == NativeOn || n.Send == NativeBoth }

// NativeHistogramWarnings says when nativeHistograms, as set, sends no native histogram
// with a profile that has histogram families (histograms) or summaries (summaries) or
// neither: send true or both with no histogram family, and fromSummaries unset or without
// summaries to turn. The default node_exporter profile has summaries and no histogram, so
// there `true` alone sends none (issue 31). `true` keeps meaning "the profile's histograms
// as native", as a Prometheus scrape does: turning summaries into histograms changes the
// workload's series and the rules over them, so it stays the user's explicit choice.
func (c *Config) NativeHistogramWarnings(histograms, summaries bool) []string {
	n := c.NativeHistograms
	switch {
	case !n.On() && n.FromSummaries:
		return []string{fmt.Sprintf("nativeHistograms.fromSummaries: has no effect with send: %s; set nativeHistograms: {send: true, fromSummaries: true} to send the summaries as native histograms", n.Send)}
	case !n.On() || histograms || (n.FromSummaries && summaries):
		return nil
	case summaries:
		return []string{fmt.Sprintf("nativeHistograms: %s sends no native histogram: the profile has no histogram family, only summaries; "+
			"set nativeHistograms: {send: %s, fromSummaries: true} to send its summaries as native histograms", n.Send, n.Send)}
	}
	return []string{fmt.Sprintf("nativeHistograms: %s sends no native histogram: the profile has neither histogram families nor summaries", n.Send)}
}

func (c *Config) sampleTypeProblems() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	n := c.NativeHistograms
	switch n.Send {
	case NativeOff, NativeOn, NativeBoth:
	default:
		bad("nativeHistograms.send", "%q: use false, true or both", n.Send)
	}
	if s := n.Schema; s != nil && (*s < -4 || *s > 8) {
		bad("nativeHistograms.schema", "%d: must be -4 to 8 (Prometheus' exponential schemas)", *s)
	}
	if p := c.Exemplars.Percent; !(p >= 0 && p <= 100) {
		bad("exemplars.percent", "%g: must be 0 to 100 (0 sends none)", p)
	}
	if c.Exemplars.Percent > 0 && c.ScrapeModeOn() {
		bad("exemplars", "applies to sender: tsbench only")
	}
	if c.SendMetadata && c.ScrapeModeOn() {
		bad("sendMetadata", "applies to sender: tsbench only (the agent sends the metadata it scrapes)")
	}
	if n.On() && c.ScrapeModeOn() {
		bad("nativeHistograms", "applies to sender: tsbench only (an agent scrapes the text exposition, which has no native histograms)")
	}
	return errs
}
