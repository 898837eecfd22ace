package workload

import "time"

// CreatedAppender takes a target's created timestamp (issue 23): when its simulated exporter
// process started, the start of every counter, histogram and summary it exposes. Scrape
// gives it once per target scrape, before the target's samples.
type CreatedAppender interface {
	SetCreated(ms int64)
}

// maxUptime bounds a simulated process's age at the run's start: 1 h plus up to a week.
const maxUptime = 7 * 24 * time.Hour

// ProcessStart is when target's simulated process started, in ms: an age of 1 h to 1 week
// and 1 h before the run's start, in whole seconds, drawn from the seed. A churned target
// keeps it: a new revision is a new config, not a restart.
func (g *Generator) ProcessStart(target int) int64 {
	age := time.Hour + time.Duration(unit(hash(g.opts.Seed, 13, uint64(target%g.hosts)))*float64(maxUptime))
	return g.startMs - age.Truncate(time.Second).Milliseconds()
}

// startCreated gives app the target's process start, when it takes it.
func (g *Generator) startCreated(app Appender, target int) {
	if ca, ok := app.(CreatedAppender); ok {
		ca.SetCreated(g.ProcessStart(target))
	}
}

// ProcessStart is the generator's for the part's target j.
func (p *Part) ProcessStart(j int) int64 { return p.g.ProcessStart(p.targets[j]) }
