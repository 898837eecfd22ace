package config

import (
	"fmt"
	"time"
)

// Series is the series section (issue 22): cardinality events and late or out-of-order
// samples. Its zero value changes nothing: the default run is as before.
type Series struct {
	Events Events `yaml:"events" json:"events,omitzero"`
	// Late holds a share of each target's series back: every sample of them (and their
	// staleness markers) is sent By later, in order per series, as an agent that resends an
	// old batch.
	Late Held `yaml:"late" json:"late,omitzero"`
	// OutOfOrder holds a share of each scrape's samples back and sends them By later, after
	// newer samples of the same series.
	OutOfOrder Held `yaml:"outOfOrder" json:"outOfOrder,omitzero"`
	// HAReplicas writes every target's series once per replica of an HA pair (ha.go).
	HAReplicas int           `yaml:"haReplicas" json:"haReplicas,omitempty"`
	HALabels   HALabels      `yaml:"haLabels" json:"haLabels,omitzero"`
	HAOffset   time.Duration `yaml:"haOffset" json:"haOffset,omitempty"`
}

// Events are the cardinality events; each is off unless set, and they combine: the active
// targets are the ramp's (or targetsCount) × the spike's factor × 2 in a doubled half.
type Events struct {
	Ramp        *Ramp        `yaml:"ramp" json:"ramp,omitempty"`
	Spike       *Spike       `yaml:"spike" json:"spike,omitempty"`
	DoubleHalve *DoubleHalve `yaml:"doubleHalve" json:"doubleHalve,omitempty"`
	PodChurn    *PodChurn    `yaml:"podChurn" json:"podChurn,omitempty"`
}

// Ramp grows (or shrinks) the targets from From to To over Over, then holds To.
type Ramp struct {
	From int           `yaml:"from" json:"from"`
	To   int           `yaml:"to" json:"to"`
	Over time.Duration `yaml:"over" json:"over"`
}

// Spike multiplies the targets by Factor for For, every Every (the first one Every after
// the start).
type Spike struct {
	For    time.Duration `yaml:"for" json:"for"`
	Every  time.Duration `yaml:"every" json:"every"`
	Factor float64       `yaml:"factor" json:"factor"`
}

// DoubleHalve doubles the targets Every after the start, halves them Every later, and so on.
type DoubleHalve struct {
	Every time.Duration `yaml:"every" json:"every"`
}

// PodChurn replaces each target by a new instance after Lifetime, each at its own seeded
// moment, as a Kubernetes deployment replaces pods.
type PodChurn struct {
	Lifetime time.Duration `yaml:"lifetime" json:"lifetime"`
}

// Held is a share of samples sent later than their timestamp.
type Held struct {
	Percent float64       `yaml:"percent" json:"percent"`
	By      time.Duration `yaml:"by" json:"by"`
}

// On reports whether any part of the section is set.
func (s Series) On() bool {
	e := s.Events
	return e.Ramp != nil || e.Spike != nil || e.DoubleHalve != nil || e.PodChurn != nil ||
		s.Late.Percent > 0 || s.OutOfOrder.Percent > 0 || s.HAOn()
}

func (c *Config) seriesProblems() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("series.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	s, iv := c.Series, c.ScrapeInterval
	if s.On() && c.ScrapeModeOn() {
		errs = append(errs, fmt.Errorf("series: applies to sender: %s only: in scrape mode the agent decides what it sends; remove the series section", SenderTsbench))
	}
	if r := s.Events.Ramp; r != nil {
		if r.From < 1 || r.To < 1 {
			bad("events.ramp", "from and to must be >= 1 targets")
		}
		if r.Over < iv {
			bad("events.ramp.over", "must be >= scrapeInterval (%s)", ShortDuration(iv))
		}
	}
	if sp := s.Events.Spike; sp != nil {
		if sp.Factor <= 1 {
			bad("events.spike.factor", "must be > 1 (2 doubles the targets during a spike)")
		}
		if sp.For < iv || sp.Every <= sp.For {
			bad("events.spike", "for must be >= scrapeInterval (%s) and every longer than for", ShortDuration(iv))
		}
	}
	if d := s.Events.DoubleHalve; d != nil && d.Every < iv {
		bad("events.doubleHalve.every", "must be >= scrapeInterval (%s)", ShortDuration(iv))
	}
	if p := s.Events.PodChurn; p != nil && p.Lifetime < iv {
		bad("events.podChurn.lifetime", "must be >= scrapeInterval (%s)", ShortDuration(iv))
	}
	held := func(key string, h Held, minBy time.Duration) {
		if h.Percent < 0 || h.Percent > 100 {
			bad(key+".percent", "must be between 0 and 100")
		}
		if h.Percent > 0 && h.By < minBy {
			bad(key+".by", "must be >= %s", ShortDuration(minBy))
		}
	}
	held("late", s.Late, iv)
	// A held sample is out of order only when a newer one of its series went before it: two
	// intervals, so that the newer sample's batch was sent first.
	held("outOfOrder", s.OutOfOrder, 2*iv)
	// A series held out of order at one scrape is sent on time at the next (workload):
	// at most half of the series not late.
	if s.Late.Percent+2*s.OutOfOrder.Percent > 100 {
		bad("outOfOrder.percent", "late.percent + 2 × outOfOrder.percent must be <= 100")
	}
	return append(errs, c.haProblems()...)
}
