// Command tsbench benchmarks Prometheus-compatible time-series storages.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tsbench/tsbench/internal/cli"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cancel() // first signal: stop the load, drain, write the report
		<-sig
		// Second signal: give up now. Local storages die with us (parent-death signal, see
		// local.Start); their temporary dirs stay behind.
		os.Exit(cli.ExitAborted)
	}()
	os.Exit(cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
