// The adapter that makes tsbench a sender of prometheus/compliance's remote-write sender
// suite (remotewrite/sender), for `make sender-compliance` (scripts/sender-compliance.sh).
// It is not part of tsbench's module: the directory's leading underscore keeps it out of
// `go build ./...`, and the script adds it to the suite's package with `go test -overlay`,
// so the checkout is never changed. It uses only what the suite's package main declares
// (registeredTargets, targets.Target, targets.TargetOptions).
//
// The suite starts a sender with a scrape target and a receiver URL, for a time, and judges
// what the receiver got. tsbench does not scrape: it sends its own workload (the default
// node_exporter profile, one target) to the receiver, in remote write 2.0 (tsbench-rw2) or
// 1.0 (tsbench-rw1), on one connection, as a run of opts.Timeout.

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/prometheus/compliance/remotewrite/sender/targets"
)

// init registers tsbench beside the suite's own targets; PROMETHEUS_RW2_COMPLIANCE_SENDERS
// picks one. A test file's init is the one place the suite lets a target in without editing it.
func init() {
	registeredTargets["tsbench-rw2"] = tsbenchTarget("prometheus-rw2")
	registeredTargets["tsbench-rw1"] = tsbenchTarget("prometheus-rw1")
}

// tsbenchConfig is a write-only run: no query API, so no reads, read-back or canary.
// Exemplars on a tenth of the counters and native histograms (from the profile's summaries)
// put every kind of data the protocols carry in front of the suite's checks.
//
// One connection and a scrape every 5 s, as Prometheus sends the suite's small scrapes (its
// batch_send_deadline): the retry cases count every request the receiver got, so a sender
// must send at most 2 batches in their 8 s to show it did not retry, and the backoff cases
// time every request, so only one batch may be retried at a time. No metadata requests
// (sendMetadata) for the same reason: they would be timed and counted beside the batch's.
const tsbenchConfig = `duration: %s
targetsCount: 1
scrapeInterval: 5s
writeConcurrency: 1
checkpointInterval: 0s
verifySamples: 0
verifyInterval: 0s
indexLookupInterval: 0s
freshness: {interval: 0s}
exemplars: {percent: 10}
nativeHistograms: {send: both, fromSummaries: true}
remoteStorages:
  receiver:
    writeURL: %q
    protocol: %s
`

// tsbenchTarget runs TSBENCH_BIN as a sender in protocol for opts.Timeout. A run that ends
// with exit 0 or 3 (a threshold; none is set) is a sender that did its work, whatever the
// receiver answered; any other exit is an error, with the end of tsbench's log.
func tsbenchTarget(protocol string) targets.Target {
	return func(opts targets.TargetOptions) error {
		bin := os.Getenv("TSBENCH_BIN")
		if bin == "" {
			return errors.New("TSBENCH_BIN is not set: the tsbench binary to run")
		}
		dir, err := os.MkdirTemp("", "tsbench-sender-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg := fmt.Sprintf(tsbenchConfig, opts.Timeout, opts.ReceiveEndpoint, protocol)
		cfgFile := filepath.Join(dir, "bench.yaml")
		if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
			return err
		}
		var log bytes.Buffer
		cmd := exec.Command(bin, "run", "-config", cfgFile, "-out", filepath.Join(dir, "out"), "-httpListenAddr", "")
		cmd.Stdout, cmd.Stderr = &log, &log
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			return err
		}
		// The run ends by its duration and drains for at most 30 s (a receiver that refuses
		// everything); past that it is killed and the kill is the error.
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(opts.Timeout + time.Minute):
			_ = cmd.Process.Kill()
			err = fmt.Errorf("still running %v after its %v duration: killed: %w", time.Minute, opts.Timeout, <-done)
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("tsbench run: %w\n%s", err, tail(log.Bytes(), 2000))
		}
		return nil
	}
}

func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }
