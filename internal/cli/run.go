package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/bench"
	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/report"
	"github.com/tsbench/tsbench/internal/results"
)

// loadConfig reads and checks a config and everything it names; "" is the embedded default.
// Problems are usage errors: they exit with ExitUsage.
func loadConfig(path string) (*bench.Prepared, error) {
	cfg := config.Default()
	if path != "" {
		c, err := config.Load(path)
		if err != nil {
			return nil, errUsage{errors.New(joinLines(err))}
		}
		cfg = *c
	}
	p, err := bench.Prepare(tsbench.Assets, &cfg)
	if err != nil {
		where := path
		if where == "" {
			where = "embedded default config"
		}
		return nil, usageErrorf("%s: %s", where, joinLines(err))
	}
	return p, nil
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("validate")
	path := fs.String("config", "", "config file to check (or give it as the argument)")
	connect := fs.Bool("connect", false, "also reach every URL of every storage (writeURL, readURL, remoteReadURL, metricsURLs) and say which do not answer: exit 1 if one does not")
	if err := parseFlags(fs, args); err != nil {
		return ExitUsage, err
	}
	switch {
	case *path == "" && fs.NArg() == 1:
		*path = fs.Arg(0)
	case fs.NArg() > 0:
		return ExitUsage, usageError(fs, "unexpected argument %q: validate checks one config file", fs.Arg(fs.NArg()-1))
	case *path == "":
		return ExitUsage, usageError(fs, "a config FILE is required")
	}
	p, err := loadConfig(*path)
	if err != nil {
		return ExitUsage, err
	}
	for _, w := range p.Warnings() {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "%s: ok, %d storages, %d queries, %d thresholds\n",
		*path, len(p.Config.RemoteStorages), len(p.Plan.Queries), len(p.Thresholds))
	if *connect {
		return validateConnect(ctx, p.Config, stdout)
	}
	return ExitOK, nil
}

// validateConnect reaches every URL of every storage and prints what each answered; an
// error names the storages with a URL that did not answer.
func validateConnect(ctx context.Context, cfg *config.Config, stdout io.Writer) (int, error) {
	conns, err := bench.Connect(ctx, cfg)
	if err != nil {
		return ExitUsage, err
	}
	var silent []string
	for _, c := range conns {
		if c.Err != nil {
			fmt.Fprintf(stdout, "%s %s %s: no answer: %v\n", c.Storage, c.Key, c.URL, c.Err)
			if !slices.Contains(silent, c.Storage) {
				silent = append(silent, c.Storage)
			}
			continue
		}
		fmt.Fprintf(stdout, "%s %s %s: answers (HTTP %d)\n", c.Storage, c.Key, c.URL, c.Status)
	}
	if len(silent) > 0 {
		return ExitError, fmt.Errorf("storages not answering: %s", strings.Join(silent, ", "))
	}
	return ExitOK, nil
}

// runFlags are run's flags; everything else is in the config.
type runFlags struct {
	config, out, listen, logLevel, shard string
	duration, history, liveGrace         time.Duration
	rounds                               int
	durationSet, historySet, keep, hold  bool
	roundsSet                            bool
}

func parseRunFlags(args []string) (runFlags, error) {
	var f runFlags
	fs := newFlagSet("run")
	fs.StringVar(&f.config, "config", "", "benchmark config (YAML); without it, local VictoriaMetrics and Prometheus get the default load")
	fs.DurationVar(&f.duration, "duration", 0, "how long the load runs, overriding the config's duration (0 = until interrupted)")
	fs.DurationVar(&f.history, "history", 0, "start the workload's clock this far in the past, overriding the config's history: each storage catches up, then the load goes on live (e.g. 6h)")
	fs.IntVar(&f.rounds, "rounds", 1, "repeat the whole run this many times, overriding the config's rounds: each figure is then the median of the rounds with its interval, and a * marks only a difference that holds (the storages tsbench starts are fresh each round)")
	fs.StringVar(&f.out, "out", "out", "directory for results.json and report.html")
	fs.StringVar(&f.listen, "httpListenAddr", "127.0.0.1:8436", "address of tsbench's own /metrics and, while the run goes, its live report at / (\"\" for none)")
	fs.BoolVar(&f.keep, "keep", false, "leave the storages tsbench started running, and print their URLs")
	fs.StringVar(&f.logLevel, "logLevel", "info", "debug, info, warn or error")
	fs.DurationVar(&f.liveGrace, "liveGrace", 30*time.Second, "after a run that was not interrupted, keep answering at -httpListenAddr this long with the final report and its path, when the live report was loaded during the run (0: stop at once)")
	fs.BoolVar(&f.hold, "hold", false, "after the run, serve the -out directory (results.json, report.html) on -httpListenAddr until interrupted: for pods, whose results tsbench report merge fetches")
	fs.StringVar(&f.shard, "shard", "", "i/n: generate shard i of n of the workload, overriding the config's shard (e.g. 0/3)")
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, usageError(fs, "unexpected argument %q: run takes only flags", fs.Arg(0))
	}
	fs.Visit(func(fl *flag.Flag) {
		f.durationSet = f.durationSet || fl.Name == "duration"
		f.historySet = f.historySet || fl.Name == "history"
		f.roundsSet = f.roundsSet || fl.Name == "rounds"
	})
	return f, nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	f, err := parseRunFlags(args)
	if err != nil {
		return ExitUsage, err
	}
	logger, err := newLogger(stderr, f.logLevel)
	if err != nil {
		return ExitUsage, err
	}
	p, err := loadConfig(f.config)
	if err != nil {
		return ExitUsage, err
	}
	if f.durationSet {
		if f.duration < 0 {
			return ExitUsage, usageErrorf("-duration: must be >= 0")
		}
		p.Config.Duration = f.duration
	}
	if f.shard != "" {
		sh, err := config.ParseShard(f.shard)
		if err != nil {
			return ExitUsage, usageErrorf("-shard: %v", err)
		}
		p.Config.Shard = sh
		if err := p.Config.Validate(); err != nil {
			return ExitUsage, usageErrorf("-shard %s: %s", sh, joinLines(err))
		}
	}
	if p.Config.Shard.Of() > 1 && len(p.Config.RemoteStorages) == 0 {
		return ExitUsage, usageErrorf("shard %s: shards write to shared storages: name them in remoteStorages (each shard would start its own local ones)", p.Config.Shard)
	}
	if f.historySet {
		p.Config.History = f.history
		if err := p.Config.Validate(); err != nil {
			return ExitUsage, usageErrorf("-history %s: %s", f.history, joinLines(err))
		}
	}
	if f.roundsSet {
		p.Config.Rounds = f.rounds
		if err := p.Config.Validate(); err != nil {
			return ExitUsage, usageErrorf("-rounds %d: %s", f.rounds, joinLines(err))
		}
	}
	for _, w := range p.Warnings() {
		logger.Warn("config warning", "detail", w)
	}
	if f.liveGrace < 0 {
		return ExitUsage, usageErrorf("-liveGrace: must be >= 0")
	}
	if f.hold {
		f.liveGrace = 0 // hold serves the -out directory instead
	}
	return runPrepared(ctx, p, f, logger, stdout, stderr, nil)
}

// runPrepared runs p as f says, and writes its results, summary and report; judge, when not
// nil, adds to the results what is derived from them (a reproduction's table) before.
func runPrepared(ctx context.Context, p *bench.Prepared, f runFlags, logger *slog.Logger, stdout, stderr io.Writer, judge func(*results.Run)) (int, error) {
	// The results and the report are written while the live report still answers: it then
	// shows the final report, and where it is, for -liveGrace.
	code := ExitOK
	var err error
	_, runErr := bench.RunRounds(ctx, p, bench.Options{
		HTTPListenAddr: f.listen, Keep: f.keep, Progress: stderr, Logger: logger, Out: f.out,
		LiveReport: report.WriteLiveHTML, LiveGrace: f.liveGrace,
		Finish: func(res *results.Run) string {
			res.SetStatuses()
			res.Headline = report.Headline(res, p.Config.Confidence)
			if judge != nil {
				judge(res)
			}
			html, werr := writeRun(res, f.out, stdout)
			if werr != nil {
				code, err = ExitError, werr
				return ""
			}
			code, err = exitCode(res)
			return html
		},
	})
	if runErr != nil {
		if _, ok := errors.AsType[*bench.ConfigError](runErr); ok {
			return ExitUsage, errUsage{runErr}
		}
		return ExitError, runErr
	}
	if f.hold && f.listen != "" {
		if herr := hold(ctx, f.listen, f.out, logger); herr != nil {
			return ExitError, errors.Join(err, herr)
		}
	}
	return code, err
}

// finish writes results.json and report.html, prints the summary and picks the exit code.
func finish(res *results.Run, dir string, stdout io.Writer) (int, error) {
	if _, err := writeRun(res, dir, stdout); err != nil {
		return ExitError, err
	}
	return exitCode(res)
}

// writeRun writes results.json and report.html and prints the summary and their paths; it
// returns report.html's absolute path.
func writeRun(res *results.Run, dir string, stdout io.Writer) (string, error) {
	res.SetStatuses()
	if res.Headline == nil { // a merged or re-rendered run: judged at its config's confidence
		res.Headline = report.Headline(res, report.Confidence(res))
	}
	path, err := res.WriteFile(dir)
	if err != nil {
		return "", fmt.Errorf("write results: %w", err)
	}
	if err := report.WriteSummary(stdout, res); err != nil {
		return "", err
	}
	html := filepath.Join(dir, "report.html")
	if err := writeFile(html, func(w io.Writer) error { return report.WriteHTML(w, res) }); err != nil {
		return "", err
	}
	fmt.Fprintf(stdout, "\nresults: %s\nreport:  %s\n", path, html)
	return filepath.Abs(html)
}

// exitCode is the exit code of a run whose results were written: an error when its write
// accounting did not balance, ExitThreshold when a threshold failed.
func exitCode(res *results.Run) (int, error) {
	if len(res.AccountingErrors) > 0 {
		return ExitError, fmt.Errorf("the write accounting did not balance %d times: %s", len(res.AccountingErrors), res.AccountingErrors[0])
	}
	failed := 0
	for _, t := range res.Thresholds {
		if !t.OK {
			failed++
		}
	}
	var errs []error
	if failed > 0 {
		errs = append(errs, fmt.Errorf("%d of %d thresholds failed (marked ✗ above)", failed, len(res.Thresholds)))
	}
	if names := res.Failed(); len(names) > 0 {
		errs = append(errs, fmt.Errorf("storage %s failed (its status, first in the summary): it is ranked on nothing", strings.Join(names, ", ")))
	}
	if len(errs) > 0 {
		return ExitThreshold, errors.Join(errs...)
	}
	return ExitOK, nil
}

// hold serves dir over HTTP on addr until ctx ends: a pod keeps its results for `tsbench
// report merge` to fetch, and is not restarted into a second run.
func hold(ctx context.Context, addr, dir string, logger *slog.Logger) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("-hold: %w", err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	logger.Info("run done; serving its results until interrupted", "url", "http://"+ln.Addr().String()+"/results.json")
	<-ctx.Done()
	return srv.Close()
}
