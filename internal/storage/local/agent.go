package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"

	"github.com/tsbench/tsbench/internal/config"
)

// Kinds of agent tsbench starts in scrape mode: the names of their sender values.
const (
	KindVMAgent         = config.SenderVMAgent
	KindPrometheusAgent = config.SenderPrometheusAgent
)

// AgentSetup writes an agent's configuration into workDir and returns its flags beyond the
// listen address and the data dir (the agent's queue).
type AgentSetup func(workDir string) ([]string, error)

func agentSpec(kind string, setup AgentSetup) (spec, error) {
	switch kind {
	case KindVMAgent:
		return spec{
			kind: kind, binary: "vmagent", pkg: "victoria-metrics", readyPath: "/health",
			args: func(addr, dataDir, workDir string) ([]string, error) { // an agent keeps no data: no retention
				flags, err := setup(workDir)
				return append([]string{"-httpListenAddr=" + addr, "-remoteWrite.tmpDataPath=" + dataDir}, flags...), err
			},
		}, nil
	case KindPrometheusAgent:
		return spec{
			kind: kind, binary: "prometheus", pkg: "prometheus", readyPath: "/-/ready",
			args: func(addr, dataDir, workDir string) ([]string, error) { // an agent keeps no data: no retention
				flags, err := setup(workDir)
				return append([]string{"--enable-feature=agent", "--web.listen-address=" + addr, "--storage.agent.path=" + dataDir}, flags...), err
			},
		}, nil
	}
	return spec{}, fmt.Errorf("agent kind %q: tsbench starts only %s and %s", kind, KindVMAgent, KindPrometheusAgent)
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
	bin, err := exec.LookPath(sp.binary)
	if err != nil {
		return nil, &ErrMissingBinary{Binary: sp.binary, Package: sp.pkg}
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
