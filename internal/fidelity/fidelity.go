// Package fidelity is the measuring side of `make fidelity` (issue 14, docs/fidelity.md): it
// puts a real exporter behind a 1 s cache, so that vmagent can scrape it as many targets
// (node_exporter refuses more than 40 concurrent scrapes), and, after the run, merges and
// snapshots each pipeline's VictoriaMetrics and Prometheus and prints bytes per sample and the
// changed fraction of samples side by side.
//
//	fidelity cache -listen 127.0.0.1:0 -upstream http://127.0.0.1:9100/metrics
//	fidelity measure -targets 50 -pipeline real,http://vm,/vm/data,http://prom,/prom/data ...
//
// Invariant: every address it talks to or listens on is loopback (checked before use).
package fidelity

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Main runs the fidelity command with args (without the program name) and returns its exit
// code: 0, 1 on an error, 2 on bad usage.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "fidelity:", err)
		return 2
	}
	fmt.Fprintln(stderr, "fidelity:", err)
	return 1
}

var errUsage = errors.New("usage: fidelity cache|measure [flags]")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "cache":
		return cache(ctx, args[1:], stdout, stderr)
	case "measure":
		return measure(ctx, args[1:], stdout, stderr)
	}
	return fmt.Errorf("%w: unknown subcommand %q", errUsage, args[0])
}
