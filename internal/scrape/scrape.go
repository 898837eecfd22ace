// Package scrape is scrape mode's stage: tsbench serves the workload's targets over HTTP
// (their pages and an http_sd list with churn), an agent (vmagent or Prometheus in agent
// mode, started here, or the user's at senderURL) scrapes them and writes to the storages,
// and the agent's own counters give each storage's account.
//
// Invariant: the load ends by emptying the target list, so the agent drops the targets,
// writes their staleness markers and drains; Run returns once the agent's counters say
// nothing is pending and stay so for a second, or at the drain deadline, which is recorded as
// a problem of the sender, never hidden.
package scrape

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/observe"
	"github.com/tsbench/tsbench/internal/storage/local"
	"github.com/tsbench/tsbench/internal/targets"
	"github.com/tsbench/tsbench/internal/workload"
)

// Options are the stage's settings that are not part of the benchmark's config.
type Options struct {
	// Mux is tsbench's own HTTP server's (-httpListenAddr), at Addr, when it serves one: the
	// targets are served on it, so that a user's agent (senderURL) is given a list address
	// that stays the same from run to run. nil: on a port of their own.
	Mux  *http.ServeMux
	Addr string
	// Keep leaves the agent tsbench started running after the run.
	Keep bool
	// Progress receives a progress line every ProgressEvery, and the agent's config when the
	// user runs the agent; nil prints none.
	Progress      io.Writer
	ProgressEvery time.Duration
	// DrainTimeout is how long the agent may take to send what is pending after it dropped
	// the targets.
	DrainTimeout time.Duration
	// Start is the load's start, of the progress lines' elapsed time.
	Start  time.Time
	Logger *slog.Logger
}

// Stage is scrape mode's parts: the targets' server, the agent and its account.
type Stage struct {
	cfg        *config.Config
	opts       Options
	log        *slog.Logger
	srv        *targets.Server
	http       *http.Server // nil when the targets are served on Options.Mux
	sdURL      string
	remotes    []targets.Remote
	agent      *local.Process // nil when the user runs the agent (senderURL)
	metricsURL string
	obs        *observe.Observer // the agent's resources
	client     *http.Client
	acked      acked
	closed     atomic.Bool // the agent's exit from here on is expected

	mu       sync.Mutex // guards problems, counters
	problems []string
	counters *targets.Counters // the last read after the load; nil when none could be read
}

// New makes the stage of cfg's scrape mode serving gen's targets; Start serves them and starts
// the agent. cfg is the agent's config as much as the stage's: its storages, scrape interval
// and churn are written into the agent's files. An error is the config's.
func New(cfg *config.Config, gen *workload.Generator, opts Options) (*Stage, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Stage{cfg: cfg, opts: opts, log: opts.Logger, client: &http.Client{Timeout: 10 * time.Second}}
	var err error
	if s.remotes, err = targets.Remotes(cfg); err != nil {
		return nil, err
	}
	s.srv = targets.New(targets.Options{
		Gen: gen, ExposeTimestamps: cfg.ExposeTimestamps, ExporterURL: cfg.ExporterURL, Logger: s.log,
	})
	return s, nil
}

// Acked is what the agent acked to storage name at its newest counters read: the observer's
// divisor of bytes per sample in scrape mode.
func (s *Stage) Acked(name string) int64 { return s.acked.get(name) }

// SDURL is the http_sd list's address.
func (s *Stage) SDURL() string { return s.sdURL }

// Observer observes the agent's resources; its owner runs it beside the storages' observer.
func (s *Stage) Observer() *observe.Observer { return s.obs }

// ReadBack is what the read-back checks the storages against in scrape mode.
type ReadBack struct {
	Workload *targets.ServedWorkload // the workload as served
	Last     time.Time               // the last scrape served; zero: none
	// IgnoreNames are the series the agent adds to every target (up, scrape_*).
	IgnoreNames []string
}

// ReadBack is, once Run returned, what the storages should hold.
func (s *Stage) ReadBack() ReadBack {
	rb := ReadBack{Workload: s.srv.Workload(), IgnoreNames: targets.AgentSeries}
	if last := s.srv.LastServed(); last != 0 {
		rb.Last = time.UnixMilli(last)
	}
	return rb
}

func (s *Stage) problem(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, msg)
}

// Start serves the targets, writes the agent's config and starts the agent (or prints the
// config for the user's agent). Close undoes it, also when it fails.
func (s *Stage) Start(ctx context.Context) error {
	if s.opts.Mux != nil {
		h := s.srv.Handler()
		s.opts.Mux.Handle(targets.SDPath, h)
		s.opts.Mux.Handle("/targets/", h)
		s.sdURL = "http://" + s.opts.Addr + targets.SDPath
	} else {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("serve the targets: %w", err)
		}
		s.http = &http.Server{Handler: s.srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = s.http.Serve(ln) }()
		s.sdURL = "http://" + ln.Addr().String() + targets.SDPath
	}
	if err := s.startAgent(ctx); err != nil {
		return err
	}
	t := observe.Target{Name: s.cfg.Sender, MetricsURLs: []string{s.metricsURL}}
	if s.agent != nil {
		t.PID, t.DataDir = s.agent.Storage.PID, s.agent.DataDir
	}
	s.obs = observe.New(observe.Options{Interval: s.cfg.ObserveInterval, Logger: s.log}, []observe.Target{t})
	return nil
}

// startAgent starts the agent, or prints its config when the user runs it (senderURL).
func (s *Stage) startAgent(ctx context.Context) error {
	if s.cfg.SenderURL != "" {
		s.metricsURL = strings.TrimSuffix(s.cfg.SenderURL, "/") + "/metrics"
		return s.printConfig()
	}
	var err error
	s.agent, err = local.StartAgent(ctx, s.cfg.Sender, s.cfg.Sender, s.agentSetup(), s.opts.Keep, s.log)
	if err != nil {
		return fmt.Errorf("start %s: %w", s.cfg.Sender, err)
	}
	s.metricsURL = s.agent.URL + "metrics"
	go func() {
		<-s.agent.Exited()
		if !s.closed.Load() {
			s.log.Error("agent exited", "sender", s.cfg.Sender, "log", s.agent.LogPath)
			s.problem(fmt.Sprintf("the %s process exited during the run; see %s", s.cfg.Sender, s.agent.LogPath))
		}
	}()
	return nil
}

// agentSetup writes the agent's config files (secrets in files only it reads) and names them
// in its flags.
func (s *Stage) agentSetup() local.AgentSetup {
	return func(workDir string) ([]string, error) {
		switch s.cfg.Sender {
		case config.SenderPrometheusAgent:
			b, err := targets.PrometheusConfig(s.cfg, s.sdURL, s.remotes, false)
			if err != nil {
				return nil, err
			}
			path := filepath.Join(workDir, "prometheus.yml")
			return []string{"--config.file=" + path}, os.WriteFile(path, b, 0o600)
		default:
			b, err := targets.VMAgentScrapeConfig(s.cfg, s.sdURL)
			if err != nil {
				return nil, err
			}
			path := filepath.Join(workDir, "scrape.yml")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				return nil, err
			}
			flags, err := targets.VMAgentFlags(s.cfg, s.remotes, false, func(name, secret string) (string, error) {
				p := filepath.Join(workDir, name)
				return p, os.WriteFile(p, []byte(secret), 0o600)
			})
			return append([]string{"-promscrape.config=" + path}, flags...), err
		}
	}
}

// printConfig tells the user what to give the agent they run: the config (secrets as
// <secret>) and, for vmagent, its flags.
func (s *Stage) printConfig() error {
	w := s.opts.Progress
	if w == nil {
		return nil
	}
	switch s.cfg.Sender {
	case config.SenderPrometheusAgent:
		b, err := targets.PrometheusConfig(s.cfg, s.sdURL, s.remotes, true)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "scrape mode: tsbench serves the targets at %s; give Prometheus (--enable-feature=agent) this config (fill in each <secret>):\n%s\n", s.sdURL, b)
	default:
		b, err := targets.VMAgentScrapeConfig(s.cfg, s.sdURL)
		if err != nil {
			return err
		}
		flags, err := targets.VMAgentFlags(s.cfg, s.remotes, true, nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "scrape mode: tsbench serves the targets at %s; give vmagent -promscrape.config with:\n%s\nand the flags (fill in each <secret>):\n  %s\n", s.sdURL, b, strings.Join(flags, " \\\n  "))
	}
	return nil
}

// Close stops serving the targets and stops the agent tsbench started (unless Keep).
func (s *Stage) Close() {
	if s.http != nil {
		_ = s.http.Close()
	}
	if s.agent == nil {
		return
	}
	s.closed.Store(true)
	if s.opts.Keep {
		s.log.Info("agent left running (-keep)", "sender", s.agent.Name, "url", s.agent.URL, "pid", s.agent.Storage.PID)
		return
	}
	if err := s.agent.Stop(); err != nil {
		s.log.Warn("stop agent", "sender", s.agent.Name, "err", err)
	}
}

// Run prints a progress line every ProgressEvery until ctx ends; then it empties the target
// list, so the agent drops the targets and drains, and waits for the drain (drain). It
// returns nil.
func (s *Stage) Run(ctx context.Context) error {
	var tick <-chan time.Time // nil without progress lines: never
	if s.opts.Progress != nil {
		t := time.NewTicker(s.opts.ProgressEvery)
		defer t.Stop()
		tick = t.C
	}
	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case now := <-tick:
			s.progress(ctx, now)
		}
	}
	s.srv.Stop()
	s.log.Info("load stopped; the agent drops the targets and drains", "deadline", s.drainDeadline())
	c := s.drain(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.counters = c
	s.mu.Unlock()
	return nil
}

// progress prints what was served and what the agent says.
func (s *Stage) progress(ctx context.Context, now time.Time) {
	served := s.srv.Served()
	var b strings.Builder
	fmt.Fprintf(&b, "[%6s] served %d scrapes, %d samples", now.Sub(s.opts.Start).Round(time.Second), served.Scrapes, served.Samples)
	if c, err := targets.ReadCounters(ctx, s.client, s.metricsURL, s.cfg.Sender, s.remotes); err == nil {
		s.acked.update(c)
		for _, name := range s.cfg.StorageNames() {
			if a := c.Storages[name]; a != nil {
				fmt.Fprintf(&b, " %s: acked %d pending %d", name, a.Acked, a.Pending)
			}
		}
	}
	fmt.Fprintln(s.opts.Progress, b.String())
}
