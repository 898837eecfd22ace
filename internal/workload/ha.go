package workload

import (
	"slices"
	"strconv"
	"time"
)

// HA pairs (issue 22): every target is scraped by Replicas scrapers, as two Prometheus
// replicas scrape one exporter. Replica r's copy of target t is target t + r × the targets
// of one replica (hosts × writeReplicas): its scrapes are the original's, Offset × r later,
// its values those of the original's series at its own timestamp (what a second scraper of
// the same exporter reads a moment later), and its series carry the cluster and replica
// labels when they are named.
type HA struct {
	Replicas     int           // 0 or 1: off
	Offset       time.Duration // between one replica's scrape and the next one's
	ClusterName  string        // "": no cluster label
	ClusterValue string
	ReplicaName  string   // "": no replica label: every replica writes the very same series
	ReplicaValue []string // by replica
}

// haReplicas is how many copies of each target are written: 1 without HA pairs.
func (o Options) haReplicas() int { return max(1, o.HA.Replicas) }

// copyOf is the original target of target and which HA replica's copy it is (0: the first).
func (g *Generator) copyOf(target int) (orig, replica int) {
	n := g.hosts * g.opts.Replicas
	return target % n, target / n
}

// haSeriesCopies is how many distinct copies of each series the HA replicas write: one per
// replica with a replica label, else one.
func (g *Generator) haSeriesCopies() int {
	if g.opts.HA.ReplicaName == "" {
		return 1
	}
	return g.opts.haReplicas()
}

// HAReplicaOf is which HA replica writes target: 0 without HA pairs.
func (g *Generator) HAReplicaOf(target int) int {
	_, r := g.copyOf(target)
	return r
}

// HAReplicas is how many HA replicas write each target: 1 without HA pairs.
func (g *Generator) HAReplicas() int { return g.opts.haReplicas() }

// HAOriginal is the target replica 0 writes of target's series, and target's replica.
func (g *Generator) HAOriginal(target int) (orig, replica int) { return g.copyOf(target) }

// HAOffset is the time between one HA replica's scrape of a target and the next one's.
func (g *Generator) HAOffset() time.Duration { return g.opts.HA.Offset }

// haLabelSlots adds the HA labels to a template's target slots.
func (g *Generator) haLabelSlots(slots map[string]slot) {
	if g.opts.haReplicas() < 2 {
		return
	}
	if n := g.opts.HA.ClusterName; n != "" {
		slots[n] = slotHACluster
	}
	if n := g.opts.HA.ReplicaName; n != "" {
		slots[n] = slotHAReplica
	}
}

// targetLabels lists the target labels by name with their slots: instance, job, replica
// (writeReplicas > 1), revision and the HA labels.
func (g *Generator) targetLabels() (names []string, slots []slot) {
	m := map[string]slot{labelInstance: slotInstance, labelJob: slotJob, labelRevision: slotRevision}
	if g.opts.Replicas > 1 {
		m[labelReplica] = slotReplica
	}
	g.haLabelSlots(m)
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		slots = append(slots, m[n])
	}
	return names, slots
}

// HAReplicaOf is part target j's HA replica.
func (p *Part) HAReplicaOf(j int) int { return p.g.HAReplicaOf(p.targets[j]) }

// HAReplicas is the generator's HAReplicas.
func (p *Part) HAReplicas() int { return p.g.HAReplicas() }

// HALabels are series s of target's labels as every HA replica writes them: without the
// revision and the HA replica label, the instance as the target's first pod.
func (g *Generator) HALabels(target, s int) []Label {
	ls := g.Labels(target, s, 0)
	out := ls[:0]
	for _, l := range ls {
		if l.Name != labelRevision && (l.Name != g.opts.HA.ReplicaName || g.opts.HA.ReplicaName == "") {
			out = append(out, l)
		}
	}
	return out
}

// HAReplicaName is replica r's name in results: its replica label value, else its index.
func (g *Generator) HAReplicaName(r int) string {
	if g.opts.HA.ReplicaName != "" {
		return g.opts.HA.ReplicaValue[r]
	}
	return strconv.Itoa(r)
}

// HALabels is part target j's HALabels.
func (p *Part) HALabels(j, s int) []Label { return p.g.HALabels(p.targets[j], s) }

// HAReplicaName is the generator's HAReplicaName.
func (p *Part) HAReplicaName(r int) string { return p.g.HAReplicaName(r) }

// HAOffset is the generator's HAOffset.
func (p *Part) HAOffset() time.Duration { return p.g.HAOffset() }

// HASeries lists up to n series of the profile to read an HA pair back by: sent as floats
// and never NaN (VictoriaMetrics drops NaN samples, which would look like a gap).
func (g *Generator) HASeries(n int) []int {
	var out []int
	for s := range g.templates {
		if len(out) == n {
			break
		}
		if g.templates[s].shape.kind != kindNaN && (g.skip == nil || !g.skip[s]) {
			out = append(out, s)
		}
	}
	return out
}

// HASeries is the generator's HASeries.
func (p *Part) HASeries(n int) []int { return p.g.HASeries(n) }
