package workload

import (
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// OptionsFrom is the workload part of cfg, its clock starting at start (the load's start
// minus the history).
func OptionsFrom(cfg *config.Config, start time.Time) Options {
	events, late, ooo := seriesOptions(cfg.Series)
	return Options{
		Seed: cfg.Seed, Start: start, Hosts: cfg.TargetsCount, Replicas: cfg.WriteReplicas,
		ScrapeInterval: cfg.ScrapeInterval, ChurnPercent: cfg.ScrapeConfigUpdatePercent,
		ChurnInterval: cfg.ScrapeConfigUpdateInterval, HostLoad: cfg.HostLoad,
		Events: events, Late: late, OutOfOrder: ooo,
		Native: nativeOptions(cfg.NativeHistograms), ExemplarPct: cfg.Exemplars.Percent,
		HA: haOptions(cfg),
	}
}

// seriesOptions are the workload options of the config's series section (issue 22).
func seriesOptions(s config.Series) (ev Events, late, ooo Held) {
	e := s.Events
	if e.Ramp != nil {
		ev.Ramp = &Ramp{From: e.Ramp.From, To: e.Ramp.To, Over: e.Ramp.Over}
	}
	if e.Spike != nil {
		ev.Spike = &Spike{For: e.Spike.For, Every: e.Spike.Every, Factor: e.Spike.Factor}
	}
	if e.DoubleHalve != nil {
		ev.DoubleHalve = e.DoubleHalve.Every
	}
	if e.PodChurn != nil {
		ev.PodLifetime = e.PodChurn.Lifetime
	}
	return ev, Held(s.Late), Held(s.OutOfOrder)
}

// nativeOptions is nativeHistograms for the workload.
func nativeOptions(n config.NativeHistograms) NativeOptions {
	o := NativeOptions{FromSummaries: n.FromSummaries, Schema: n.Schema}
	switch n.Send {
	case config.NativeOn:
		o.Mode = NativeOnly
	case config.NativeBoth:
		o.Mode = NativeBoth
	}
	return o
}

// haOptions are the workload options of the series section's HA pairs.
func haOptions(cfg *config.Config) HA {
	s := cfg.Series
	if !s.HAOn() {
		return HA{}
	}
	l := s.HALabels
	return HA{
		Replicas: s.HAReplicas, Offset: cfg.HAOffsetOf(),
		ClusterName: l.Cluster.Name, ClusterValue: l.Cluster.Value,
		ReplicaName: l.Replica.Name, ReplicaValue: l.Replica.Values,
	}
}
