// Command fidelity is the measuring side of `make fidelity`: see internal/fidelity.
// scripts/fidelity.sh runs it; every address is loopback.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tsbench/tsbench/internal/fidelity"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := fidelity.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
