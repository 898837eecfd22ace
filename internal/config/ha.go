package config

import (
	"fmt"
	"strings"
	"time"
)

// HALabels name the labels that tell an HA pair's copies apart (series.haLabels): the
// Cortex/Mimir HA tracker wants both (cluster and __replica__ by default there);
// VictoriaMetrics' -dedup.minScrapeInterval deduplicates series that are identical, so
// without a replica label (or with one the storage drops by relabelling).
type HALabels struct {
	Cluster HACluster `yaml:"cluster" json:"cluster,omitzero"`
	Replica HAReplica `yaml:"replica" json:"replica,omitzero"`
}

// HACluster is the cluster label every replica writes: Name="" for none.
type HACluster struct {
	Name  string `yaml:"name" json:"name,omitempty"`
	Value string `yaml:"value" json:"value,omitempty"`
}

// HAReplica is the replica label: Name="" for none, else Values[r] for replica r.
type HAReplica struct {
	Name   string   `yaml:"name" json:"name,omitempty"`
	Values []string `yaml:"values" json:"values,omitempty"`
}

// HAOn reports whether HA pairs are set.
func (s Series) HAOn() bool { return s.HAReplicas > 1 }

// HAOffsetOf is the offset between one HA replica's scrapes and the next one's: haOffset,
// or when it is 0 (Default), a third of scrapeInterval, as two scrapers started apart.
func (c *Config) HAOffsetOf() time.Duration {
	if c.Series.HAOffset > 0 {
		return c.Series.HAOffset
	}
	return c.ScrapeInterval / 3
}

func (c *Config) haProblems() []error {
	s := c.Series
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("series.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if s.HAReplicas < 0 {
		bad("haReplicas", "must be >= 0 (2 for an HA pair; 0 or 1: off)")
	}
	if !s.HAOn() {
		if s.HALabels.Cluster.Name != "" || s.HALabels.Replica.Name != "" || s.HAOffset != 0 {
			bad("haReplicas", "haLabels and haOffset need haReplicas >= 2")
		}
		return errs
	}
	if off := c.HAOffsetOf(); off < time.Millisecond || time.Duration(s.HAReplicas-1)*off >= c.ScrapeInterval {
		bad("haOffset", "must be >= 1ms and (haReplicas - 1) × haOffset below scrapeInterval (%s): every replica scrapes once per interval", ShortDuration(c.ScrapeInterval))
	}
	l := s.HALabels
	if (l.Cluster.Name == "") != (l.Cluster.Value == "") {
		bad("haLabels.cluster", "set both name and value, or neither")
	}
	if r := l.Replica; r.Name != "" && len(r.Values) != s.HAReplicas {
		bad("haLabels.replica.values", "want %d values (one per replica), got %d", s.HAReplicas, len(r.Values))
	} else if r.Name == "" && len(r.Values) > 0 {
		bad("haLabels.replica.name", "empty but values are set")
	}
	seen := map[string]bool{}
	for _, v := range l.Replica.Values {
		if v == "" || seen[v] {
			bad("haLabels.replica.values", "each value must be set and differ from the others")
			break
		}
		seen[v] = true
	}
	for key, n := range map[string]string{"haLabels.cluster.name": l.Cluster.Name, "haLabels.replica.name": l.Replica.Name} {
		if n == "__name__" || strings.ContainsAny(n, " ={},\"") {
			bad(key, "%q is not a label name tsbench can add", n)
		}
	}
	if l.Cluster.Name != "" && l.Cluster.Name == l.Replica.Name {
		bad("haLabels", "cluster and replica must be different labels")
	}
	return errs
}
