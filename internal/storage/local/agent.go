package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
)

// Kinds of agent tsbench starts in scrape mode: the names of their sender values.
const (
	KindVMAgent         = config.SenderVMAgent
	KindPrometheusAgent = config.SenderPrometheusAgent
)

// AgentSetup writes an agent's configuration into workDir and returns its flags beyond the
// listen address and the data dir (the agent's queue).
type AgentSetup func(workDir string) ([]string, error)

func agentSpec(kind string, setup AgentSetup) (*storage.Local, error) {
	switch kind {
	case KindVMAgent:
		return &storage.Local{
			Binary: "vmagent", Package: "victoria-metrics", ReadyPath: "/health",
			Args: func(p storage.Place) ([]string, error) { // an agent keeps no data: no retention
				flags, err := setup(p.WorkDir)
				return append([]string{"-httpListenAddr=" + p.Addr, "-remoteWrite.tmpDataPath=" + p.DataDir}, flags...), err
			},
		}, nil
	case KindPrometheusAgent:
		return &storage.Local{
			Binary: "prometheus", Package: "prometheus", ReadyPath: "/-/ready",
			Args: func(p storage.Place) ([]string, error) { // an agent keeps no data: no retention
				flags, err := setup(p.WorkDir)
				return append([]string{"--enable-feature=agent", "--web.listen-address=" + p.Addr, "--storage.agent.path=" + p.DataDir}, flags...), err
			},
		}, nil
	}
	return nil, fmt.Errorf("agent kind %q: tsbench starts only %s and %s", kind, KindVMAgent, KindPrometheusAgent)
}

// StartAgent starts an agent of kind (vmagent, or Prometheus in agent mode) on a free
// loopback port with a temporary dir for its queue, configured by setup, and waits until it
// is ready. It is stopped as a storage is: Stop, or with tsbench unless keep is set. Its
// Storage holds its /metrics URL, pid and queue dir, for observe.
func StartAgent(ctx context.Context, kind, name string, setup AgentSetup, keep bool, logger *slog.Logger) (*Process, error) {
	sp, err := agentSpec(kind, setup)
	if err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(sp.Binary)
	if err != nil {
		return nil, &ErrMissingBinary{Binary: sp.Binary, Package: sp.Package}
	}
	for attempt := 1; ; attempt++ {
		l, err := startOnce(ctx, sp, bin, kind, name, keep, 0, nil, logger)
		if errors.Is(err, errPortTaken) && attempt < 3 {
			logger.Warn("agent port taken before it could bind; trying another", "agent", name, "attempt", attempt)
			continue
		}
		if err != nil {
			return nil, err
		}
		// An agent takes no writes and answers no queries: only what observe reads.
		l.Storage = config.Storage{MetricsURLs: l.Storage.MetricsURLs, PID: l.Storage.PID, DataDir: l.Storage.DataDir}
		return l, nil
	}
}
