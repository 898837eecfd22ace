package config

import (
	"fmt"
	"strings"
)

// Senders: who writes to the storages. tsbench writes directly (the default); an agent
// scrapes tsbench's targets over HTTP and remote-writes what it scraped (scrape mode).
const (
	SenderTsbench         = "tsbench"
	SenderVMAgent         = "vmagent"
	SenderPrometheusAgent = "prometheus-agent"
)

// ScrapeMode holds the keys of scrape mode (issue 15): the seeds' own pipeline, a real agent
// scraping tsbench (or a real exporter behind tsbench's cache) and writing to every storage.
type ScrapeMode struct {
	// Sender is tsbench (direct remote write, the default), vmagent or prometheus-agent.
	Sender string `yaml:"sender" json:"sender"`
	// SenderURL is the HTTP root of an agent the user runs: tsbench then serves the targets
	// and their http_sd only, prints the scrape config to give that agent, and reads the
	// agent's counters from SenderURL/metrics.
	SenderURL string `yaml:"senderURL" json:"senderURL,omitempty"`
	// ExporterURL serves a real exporter's /metrics as every target's page, behind a 1 s
	// cache, instead of the profile: the prometheus-benchmark chart's node_exporter + nginx.
	ExporterURL string `yaml:"exporterURL" json:"exporterURL,omitempty"`
	// ExposeTimestamps writes each sample's timestamp into the exposition, so the agent
	// stores the time tsbench computed the value for (honor_timestamps); without it the
	// agent stores its own scrape time, and the read-back reports the shift.
	ExposeTimestamps bool `yaml:"exposeTimestamps" json:"exposeTimestamps,omitempty"`
}

// ScrapeModeOn reports whether an agent, not tsbench, writes to the storages.
func (m ScrapeMode) ScrapeModeOn() bool { return m.Sender != SenderTsbench }

func (m ScrapeMode) problems() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	senders := []string{SenderTsbench, SenderVMAgent, SenderPrometheusAgent}
	known := false
	for _, s := range senders {
		known = known || m.Sender == s
	}
	if !known {
		bad("sender", "%q is not a sender: use one of %s", m.Sender, strings.Join(senders, ", "))
		return errs
	}
	if !m.ScrapeModeOn() {
		set := []struct {
			key string
			on  bool
		}{{"senderURL", m.SenderURL != ""}, {"exporterURL", m.ExporterURL != ""}, {"exposeTimestamps", m.ExposeTimestamps}}
		for _, k := range set {
			if k.on {
				bad(k.key, "applies to scrape mode only: set sender: vmagent or sender: prometheus-agent, or remove it")
			}
		}
		return errs
	}
	if m.SenderURL != "" {
		if err := checkURL(m.SenderURL); err != nil {
			bad("senderURL", "%v", err)
		}
	}
	if m.ExporterURL != "" {
		if err := checkURL(m.ExporterURL); err != nil {
			bad("exporterURL", "%v", err)
		}
		if m.ExposeTimestamps {
			bad("exposeTimestamps", "has no effect with exporterURL: the exporter's page is served as it is")
		}
	}
	return errs
}

// scrapeProblems are the scrape-mode keys' problems, and scrape mode with shards: the agent
// scrapes one tsbench.
func (c *Config) scrapeProblems() []error {
	errs := c.ScrapeMode.problems()
	if c.ScrapeModeOn() && c.Shard.Of() > 1 {
		errs = append(errs, fmt.Errorf("shard: scrape mode runs one tsbench (the agent scrapes its targets): remove shard, or use sender: %s", SenderTsbench))
	}
	return errs
}
