package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tsbench "github.com/tsbench/tsbench"
	"github.com/tsbench/tsbench/internal/bench"
	"github.com/tsbench/tsbench/internal/reproduce"
	"github.com/tsbench/tsbench/internal/results"
)

// reproduceFlags are reproduce's flags: the scenario is its argument, everything else in its
// config and the overrides.
type reproduceFlags struct {
	run       runFlags
	scale     float64
	overrides string
	from      string
}

func parseReproduceFlags(args []string) (string, reproduceFlags, error) {
	var f reproduceFlags
	fs := newFlagSet("reproduce")
	fs.Float64Var(&f.scale, "scale", 1, "multiply the scenario's targets (and so its series and samples) by this")
	fs.StringVar(&f.overrides, "config", "", "YAML laid over the scenario's config, key by key (remoteStorages are added to or replaced by name)")
	fs.StringVar(&f.from, "results", "", "judge this results.json of an earlier run of the scenario instead of running it (its scale is read from its targets)")
	fs.StringVar(&f.run.out, "out", "out", "directory for results.json and report.html")
	fs.StringVar(&f.run.listen, "httpListenAddr", "127.0.0.1:8436", "address of tsbench's own /metrics and its live report (\"\" for none)")
	fs.BoolVar(&f.run.keep, "keep", false, "leave the storages tsbench started running, and print their URLs")
	fs.StringVar(&f.run.logLevel, "logLevel", "info", "debug, info, warn or error")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return "", f, err
	}
	names, _ := reproduce.Names(tsbench.Assets)
	if len(pos) != 1 {
		return "", f, usageError(fs, "reproduce takes one scenario: %s", strings.Join(names, ", "))
	}
	return pos[0], f, nil
}

func cmdReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	name, f, err := parseReproduceFlags(args)
	if err != nil {
		return ExitUsage, err
	}
	var overrides []byte
	if f.overrides != "" {
		if overrides, err = os.ReadFile(f.overrides); err != nil {
			return ExitUsage, usageErrorf("-config: %v", err)
		}
	}
	cfg, pub, err := reproduce.Load(tsbench.Assets, name, overrides, f.scale)
	if err != nil {
		return ExitUsage, errUsage{err}
	}
	if f.from != "" {
		return judgeResults(f.from, cfg.TargetsCount, f, pub, stdout)
	}
	logger, err := newLogger(stderr, f.run.logLevel)
	if err != nil {
		return ExitUsage, err
	}
	p, err := bench.Prepare(tsbench.Assets, cfg)
	if err != nil {
		return ExitUsage, usageErrorf("scenario %s: %s", name, joinLines(err))
	}
	for _, w := range p.Warnings() {
		logger.Warn("config warning", "detail", w)
	}
	logger.Info("reproducing", "scenario", name, "article", pub.Article, "scale", f.scale, "targets", cfg.TargetsCount,
		"history", cfg.History.String(), "duration", cfg.Duration.String())
	f.run.liveGrace = 30 * time.Second
	return runPrepared(ctx, p, f.run, logger, stdout, stderr, func(res *results.Run) {
		res.Reproduction = reproduce.Judge(res, pub, f.scale)
	})
}

// judgeResults sets the published figures beside an earlier run's results, at the scale of
// its targets, and writes them again with the table.
func judgeResults(path string, targets int, f reproduceFlags, pub *reproduce.Published, stdout io.Writer) (int, error) {
	res, err := results.ReadFile(path)
	if err != nil {
		return ExitError, err
	}
	scale := f.scale * float64(res.Workload.Targets) / float64(targets)
	res.Reproduction = reproduce.Judge(res, pub, scale)
	fmt.Fprintf(stdout, "judged %s at scale %.3g (%d targets)\n\n", path, scale, res.Workload.Targets)
	return finish(res, f.run.out, stdout)
}
