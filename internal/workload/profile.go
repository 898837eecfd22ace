// Package workload generates the benchmark's data: the series of simulated exporter targets
// (from a profile captured from a real exporter), their values, scrape times and churn.
//
// Invariant: every sample is a pure function of (seed, start, config, target, series, scrape):
// nothing per series is stored, so memory grows with neither series nor time, and anything a
// storage returns can be checked against a recomputation.
package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
)

// Label is one label pair.
type Label struct{ Name, Value string }

// Profile is the set of series one target exposes, each with its value shape.
type Profile struct {
	// Source says where and how the profile was captured, for the reader of results.
	Source string   `json:"source"`
	Series []Series `json:"series"`
}

// Series is one series of a target, without the labels tsbench adds per target.
type Series struct {
	Name   string  `json:"name"`
	Labels []Label `json:"labels,omitempty"` // sorted by name, without __name__
	Type   string  `json:"type"`             // from # TYPE: counter, gauge, histogram, summary, untyped
	Shape  Shape   `json:"shape"`

	// Help and Unit are the family's # HELP and # UNIT, sent as metadata by remote write 2.0
	// and OTLP; a profile captured before they were recorded has neither.
	Help string `json:"help,omitempty"`
	Unit string `json:"unit,omitempty"`
}

// Shape kinds.
const (
	Constant = "constant"
	Counter  = "counter"
	Gauge    = "gauge"
	NaN      = "nan"
	// Remainder is a counter that takes the rest of its Sum group's Rate: a CPU's idle seconds
	// are the elapsed time less its other modes'.
	Remainder = "remainder"
)

// Shape is how a series' value moves over time. Values are quantized to Resolution, a power
// of ten (0 means not quantized), as real exporters' values are: CPU seconds in 0.01 steps,
// bytes as integers. Compression figures depend on it.
type Shape struct {
	Kind string `json:"kind"`
	// Value is the constant, or a counter's value at the start of the run.
	Value float64 `json:"value,omitempty"`
	// Rate is a counter's increase per second.
	Rate float64 `json:"rate,omitempty"`
	// Min and Max bound a gauge; it swings between them with PeriodSeconds plus Noise.
	Min           float64 `json:"min,omitempty"`
	Max           float64 `json:"max,omitempty"`
	PeriodSeconds float64 `json:"periodSeconds,omitempty"`
	Noise         float64 `json:"noise,omitempty"` // fraction of Max-Min
	Resolution    float64 `json:"resolution,omitempty"`

	// The tick model (issue 14), from a capture of several minutes: when TickSeconds > 0 the
	// value changes at a fraction Changes of the ticks TickSeconds apart and holds in between.
	TickSeconds float64 `json:"tickSeconds,omitempty"`
	Changes     float64 `json:"changes,omitempty"`  // fraction of ticks with a change, (0, 1]
	Jitter      float64 `json:"jitter,omitempty"`   // counter: spread of its steps, fraction of the mean step, [0, 1]
	Step        float64 `json:"step,omitempty"`     // gauge: mean size of a change
	Multiple    float64 `json:"multiple,omitempty"` // values are whole multiples of Multiple × Resolution (memory in 4096s)
	// Events: series with the same key change at the same ticks with the same noise (a
	// histogram's buckets, a summary's quantiles), so buckets stay cumulative, quantiles ordered.
	Events string `json:"events,omitempty"`
	// Sum: the counters with the same key and the remainder that completes them to its Rate.
	Sum string `json:"sum,omitempty"`
}

// LoadProfile reads a profile from fsys (the embedded assets, or a test's MapFS).
func LoadProfile(fsys fs.FS, path string) (*Profile, error) {
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, err
	}
	return parseProfile(path, b)
}

// LoadProfileFile reads a profile from the user's file system.
func LoadProfileFile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseProfile(path, b)
}

func parseProfile(path string, b []byte) (*Profile, error) {
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	return &p, nil
}

// Validate checks names, label order and shapes; errors name the series.
func (p *Profile) Validate() error {
	if len(p.Series) == 0 {
		return errors.New("no series")
	}
	// Legacy names ([a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*), not UTF-8 ones: the
	// remote-write encoder sends only those, and Prometheus 2.x (Debian's 2.42) refuses any
	// other name with a 400, where VictoriaMetrics would take it.
	names := model.LegacyValidation
	var errs []error
	seen := map[string]bool{}
	for i, s := range p.Series {
		id := fmt.Sprintf("series[%d] %s", i, s.Name)
		if !names.IsValidMetricName(s.Name) {
			errs = append(errs, fmt.Errorf("%s: invalid metric name", id))
		}
		for j, l := range s.Labels {
			if !names.IsValidLabelName(l.Name) || strings.HasPrefix(l.Name, "__") {
				errs = append(errs, fmt.Errorf("%s: invalid label name %q", id, l.Name))
			}
			if l.Value == "" {
				errs = append(errs, fmt.Errorf("%s: label %s has an empty value", id, l.Name))
			}
			if j > 0 && s.Labels[j-1].Name >= l.Name {
				errs = append(errs, fmt.Errorf("%s: labels not sorted or duplicated at %s", id, l.Name))
			}
		}
		if k := s.key(); seen[k] {
			errs = append(errs, fmt.Errorf("%s: duplicate series", id))
		} else {
			seen[k] = true
		}
		if err := s.Shape.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
		}
	}
	errs = append(errs, p.validateSums()...)
	return errors.Join(errs...)
}

// sumFits reports whether the Sum group key passes validateSums.
func (p *Profile) sumFits(key string) bool { return p.sumProblems()[key] == nil }

// validateSums returns the problems of every Sum group, in key order.
func (p *Profile) validateSums() []error {
	problems := p.sumProblems()
	keys := slices.Sorted(maps.Keys(problems))
	errs := make([]error, 0, len(keys))
	for _, k := range keys {
		errs = append(errs, problems[k])
	}
	return errs
}

// validateSums checks every remainder against its Sum group: the members share its tick and
// quantum, and their largest step per tick (μ + jitter) stays below the remainder's total
// step with a quantum of rounding per member to spare, so the remainder never decreases.
func (p *Profile) sumProblems() map[string]error {
	type group struct {
		rest    *Series
		members []*Series
	}
	groups := map[string]*group{}
	for i := range p.Series {
		s := &p.Series[i]
		if s.Shape.Sum == "" {
			continue
		}
		g := groups[s.Shape.Sum]
		if g == nil {
			g = &group{}
			groups[s.Shape.Sum] = g
		}
		switch {
		case s.Shape.Kind == Remainder && g.rest != nil:
			return map[string]error{s.Shape.Sum: fmt.Errorf("sum %q has two remainders", s.Shape.Sum)}
		case s.Shape.Kind == Remainder:
			g.rest = s
		case s.Shape.Kind == Counter:
			g.members = append(g.members, s)
		}
	}
	errs := map[string]error{}
	for key, g := range groups {
		if g.rest == nil {
			continue
		}
		r := g.rest.Shape
		quantum := r.Resolution * max(1, r.Multiple)
		budget := r.Rate * r.TickSeconds
		var steps float64
		for _, m := range g.members {
			sh := m.Shape
			if sh.TickSeconds != r.TickSeconds || sh.Resolution != r.Resolution || max(1, sh.Multiple) != max(1, r.Multiple) {
				errs[key] = fmt.Errorf("sum %q: member %s has another tickSeconds, resolution or multiple than its remainder", key, m.Name)
				break
			}
			c := compile(sh)
			step := c.mu + c.jit
			if c.quantum > 0 {
				step *= c.quantum
			}
			steps += step + quantum
		}
		if steps+quantum > budget {
			errs[key] = errors.Join(errs[key], fmt.Errorf("sum %q: its counters step up to %g per tick, more than the remainder's %g (rate × tickSeconds) less rounding: lower their jitter or rates", key, steps, budget))
		}
	}
	return errs
}

func (s Series) key() string {
	var b strings.Builder
	b.WriteString(s.Name)
	for _, l := range s.Labels {
		b.WriteString("\xff" + l.Name + "\xff" + l.Value)
	}
	return b.String()
}

func (sh Shape) validate() error {
	if sh.Resolution < 0 || math.IsNaN(sh.Resolution) {
		return errors.New("resolution must be >= 0")
	}
	switch sh.Kind {
	case Constant, NaN:
	case Counter, Remainder:
		if sh.Rate < 0 || sh.Value < 0 {
			return errors.New("counter with a negative start or rate")
		}
		if sh.Kind == Remainder && (sh.Sum == "" || sh.TickSeconds <= 0) {
			return errors.New("a remainder needs a sum group and tickSeconds > 0")
		}
	case Gauge:
		if sh.Min > sh.Max {
			return errors.New("gauge min > max")
		}
		if sh.PeriodSeconds <= 0 && sh.TickSeconds == 0 {
			return errors.New("gauge periodSeconds must be > 0")
		}
	default:
		return fmt.Errorf("unknown shape kind %q", sh.Kind)
	}
	switch {
	case sh.TickSeconds < 0 || math.IsNaN(sh.TickSeconds) || math.IsInf(sh.TickSeconds, 0):
		return errors.New("tickSeconds must be >= 0")
	case sh.TickSeconds > 0 && sh.Kind != Remainder && !(sh.Changes > 0 && sh.Changes <= 1):
		return errors.New("changes must be in (0, 1] with tickSeconds")
	case !(sh.Jitter >= 0 && sh.Jitter <= 1):
		return errors.New("jitter must be in [0, 1]")
	case !(sh.Step >= 0) || math.IsInf(sh.Step, 0):
		return errors.New("step must be >= 0")
	case !(sh.Multiple >= 0) || sh.Multiple != math.Trunc(sh.Multiple) || sh.Multiple > 1<<40:
		return errors.New("multiple must be a whole number >= 0")
	}
	return nil
}

// Kinds returns the shape kinds present in the profile, sorted.
func (p *Profile) Kinds() []string {
	var kinds []string
	for _, s := range p.Series {
		if !slices.Contains(kinds, s.Shape.Kind) {
			kinds = append(kinds, s.Shape.Kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// HasType reports whether any of the profile's series is of the # TYPE typ (histogram,
// summary, ...).
func (p *Profile) HasType(typ string) bool {
	return slices.ContainsFunc(p.Series, func(s Series) bool { return s.Type == typ })
}
