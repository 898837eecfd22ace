package storage

import (
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Page is a /metrics page, parsed (expfmt): its metric families by name.
type Page map[string]*dto.MetricFamily

// Sum adds every sample of the metric name; false when the page has none.
func (p Page) Sum(name string) (float64, bool) {
	mf, ok := p[name]
	if !ok {
		return 0, false
	}
	total := 0.0
	for _, m := range mf.GetMetric() {
		total += Value(m)
	}
	return total, true
}

// Selector picks samples of one metric from a page: those of Name whose label Label is
// Value, or every one when Label is "". With Fallback, every sample of Name counts when none
// has that label value.
type Selector struct {
	Name, Label, Value string
	Fallback           bool
}

// Select adds the samples s picks; false when it picks none (with a Label) or the page has
// no Name (without).
func (p Page) Select(s Selector) (float64, bool) {
	if s.Label == "" {
		return p.Sum(s.Name)
	}
	mf, ok := p[s.Name]
	if !ok {
		return 0, false
	}
	total, found := 0.0, false
	for _, m := range mf.GetMetric() {
		if LabelValue(m, s.Label) == s.Value {
			total, found = total+Value(m), true
		}
	}
	if !found && s.Fallback {
		return p.Sum(s.Name)
	}
	return total, found
}

// DiskGroup is a family's size metrics: the parts that together are everything it keeps on
// disk. Each metric's samples are summed (every label set: tenants), and the disk figure is
// known only when every required part is exposed (issue 10: a sum that leaves a part out
// would pass for the whole). Optional parts exist only in some setups and are added when
// exposed.
type DiskGroup struct {
	Required, Optional []string
	// Missing follows the names of the required parts not exposed: what is then not
	// counted and how to get the figure.
	Missing string
	// Uncounted, when set, is what the group never counts: its figure is always unknown.
	Uncounted string
}

// Read is a Family's Disk by the group.
func (g DiskGroup) Read(p Page) (v float64, why string, exposed bool) {
	total, found := 0.0, false
	var absent []string
	for _, name := range g.Required {
		if v, ok := p.Sum(name); ok {
			total, found = total+v, true
		} else {
			absent = append(absent, name)
		}
	}
	switch {
	case !found:
		return 0, "", false
	case g.Uncounted != "":
		return 0, g.Uncounted, true
	case len(absent) > 0:
		return 0, strings.Join(absent, ", ") + " " + g.Missing, true
	}
	for _, name := range g.Optional {
		if v, ok := p.Sum(name); ok {
			total += v
		}
	}
	return total, "", true
}

// LabelValue is m's value of the label name, "" without.
func LabelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Value is a counter's, gauge's or untyped sample's value; 0 for other types.
func Value(m *dto.Metric) float64 {
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
