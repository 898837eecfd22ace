// Package cli is the tsbench command line: subcommands, flags and exit codes.
//
// Invariant: Main is the whole program; only it (and cmd/tsbench) touches args, env, stdout,
// stderr and exit codes, so tests run it in-process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// Exit codes, as Prometheus (2 for bad usage) and k6 (a distinct code for failed thresholds).
const (
	ExitOK        = 0
	ExitError     = 1   // the run could not be done, or its accounting did not balance
	ExitUsage     = 2   // bad flags or config
	ExitThreshold = 3   // the run was done but a threshold failed, or a storage's status is failed
	ExitAborted   = 130 // second interrupt
)

// usage is the top-level help. Each command's entry (its usage line, with its positional
// arguments, and the indented lines under it) is also the head of its own -h (commandUsage).
const usage = `tsbench benchmarks Prometheus-compatible time-series storages.

Usage:
  tsbench run [-config FILE] [-duration D] [-history D] [-rounds N] [-out DIR] [-httpListenAddr ADDR] [-liveGrace D] [-keep] [-logLevel L] [-shard I/N] [-hold]
      Write a production-shaped load to every storage over remote_write, query it as a ruler
      and a dashboard would, observe each storage's resources, verify what it stored, and
      write DIR/results.json and DIR/report.html. Without -config: starts a local
      VictoriaMetrics and Prometheus and benchmarks both for 3 minutes. -history D first
      catches each storage up on D of data. -shard I/N generates only shard I of N of the
      workload, to be merged with the others' results; -hold serves them until interrupted.
      -rounds N repeats the run N times: medians, intervals, a * only where a difference holds.
  tsbench validate [-config] FILE [-connect]
      Check a config file; print every problem with its line and key. -connect also reaches
      every storage URL and names those that do not answer.
  tsbench profile capture -url URL -out FILE [-duration D | -scrapes N] [-interval D] [-expand prefix:label=count,...]
      Scrape an exporter several times and record its series and value shapes.
  tsbench profile metadata -url URL -profile FILE
      Fill a profile's help and units in place from the exporter's /metrics.
  tsbench report RESULTS.json [-out DIR]
      Print the summary of a results file and render its report.html again.
  tsbench report compare OLD.json|DIR... NEW.json [-out DIR] [-fail-on RULES] [-map OLD=NEW]
      Compare a run with one old run or several (their median, their spread as the noise) per
      storage and figure; flag changes beyond the noise. -fail-on 'query.p99>+20%,p50>+5%~noise'
      (and NEW's compareThresholds) exits 3 when a change passes its limit (with ~noise: and the
      noise) or the figure is unknown on either side (unless the rule ends in ?ok); -map pairs
      storages whose names differ. Print the table and write DIR/compare.html (default DIR:
      NEW.json's directory).
  tsbench report merge -out DIR|- SHARD.json|URL...
      Add up the results of every shard of one run (tsbench run -shard I/N) into one.
  tsbench reproduce NAME [-scale S] [-config OVERRIDES] [-results FILE] [-out DIR] [-httpListenAddr ADDR] [-keep] [-logLevel L]
      Run a published comparison's setup (node-exporter-24h, precision-and-semantics,
      cluster-24h, 100m-samples) at scale S and set each published figure beside the
      measured one with a verdict: holds, does not hold, or not comparable here and why.
  tsbench conformance [-config FILE] [-out DIR] [-keep] [-logLevel L]
      Run Prometheus' own PromQL test files against every storage over the wire and write
      DIR/results.json and DIR/report.html; without -config, against a fresh local
      VictoriaMetrics and Prometheus.
  tsbench version
      Print the version; tsbench --version does the same.

Exit codes: 0 ok; 1 error (the write accounting not balancing included); 2 bad usage or
config; 3 a threshold failed or a storage failed (its status), for report compare a compare
threshold; 130 aborted by a second interrupt.
'tsbench <command> -h' (or 'tsbench help <command>') shows a command's usage and flags.
`

// errUsage marks errors caused by bad flags or config: they exit with ExitUsage.
type errUsage struct{ err error }

func (e errUsage) Error() string { return e.err.Error() }
func (e errUsage) Unwrap() error { return e.err }

// usageErrorf returns an error that exits with ExitUsage.
func usageErrorf(format string, args ...any) error {
	return errUsage{fmt.Errorf(format, args...)}
}

// Main runs tsbench with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	mu := &sync.Mutex{}
	stdout, stderr = syncWriter{mu, stdout}, syncWriter{mu, stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 { // help COMMAND...: the command's -h
			return Main(ctx, slices.Concat(args[1:], []string{"-h"}), stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return ExitOK
	case "-version", "--version":
		name = "version"
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(stderr, "tsbench: unknown command %q\n\n%s", name, usage)
		return ExitUsage
	}
	code, err := cmd(ctx, args[1:], stdout, stderr)
	if h, ok := errors.AsType[errHelp](err); ok {
		writeHelp(stdout, h)
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "tsbench %s: %v\n", name, err)
		if _, ok := errors.AsType[errUsage](err); ok {
			return ExitUsage
		}
		if code == ExitOK {
			code = ExitError
		}
	}
	return code
}

// commands are tsbench's commands by name; each parses its args itself.
func commands() map[string]func(context.Context, []string, io.Writer, io.Writer) (int, error) {
	return map[string]func(context.Context, []string, io.Writer, io.Writer) (int, error){
		"run":         cmdRun,
		"validate":    cmdValidate,
		"conformance": cmdConformance,
		"profile":     cmdProfile,
		"report":      cmdReport,
		"reproduce":   cmdReproduce,
		"version":     cmdVersion,
	}
}

// syncWriter serializes writes to w: a run's log, its progress line and its summary are
// written from several goroutines, and a caller's writer (a test's buffer) need not be safe for
// that as os.Stderr is. stdout and stderr share one mutex, so one writer passed as both is safe too.
type syncWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (s syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// newFlagSet makes a subcommand's flag set. It prints nothing and never exits: a parse error
// is returned, with the command's usage lines, for Main to print once, and -h is returned as
// errHelp, for Main to print the command's help on stdout.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("tsbench "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args, turning -h into errHelp and flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp{fs: fs}
		}
		return usageError(fs, "%v", err)
	}
	return nil
}

// parseInterspersed parses flags that may come after positional arguments
// ("report OLD NEW -out DIR") and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// newLogger builds the logger every part narrows with its component and storage.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErrorf("-logLevel: %q is not one of debug, info, warn, error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func cmdVersion(_ context.Context, args []string, stdout, _ io.Writer) (int, error) {
	fs := newFlagSet("version")
	if err := parseFlags(fs, args); err != nil {
		return ExitUsage, err
	}
	if fs.NArg() > 0 {
		return ExitUsage, usageError(fs, "unexpected argument %q: version takes none", fs.Arg(0))
	}
	fmt.Fprintf(stdout, "tsbench %s\n", version())
	return ExitOK, nil
}

// version is the module version, or the VCS revision of a development build.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return "devel-" + s.Value[:min(12, len(s.Value))]
		}
	}
	return "devel"
}

// joinLines prints a multi-error one problem per line.
func joinLines(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "\n  ")
}
