package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tsbench/tsbench/internal/bench"
	"github.com/tsbench/tsbench/internal/conformance"
	"github.com/tsbench/tsbench/internal/results"
)

// cmdConformance runs Prometheus' PromQL test files against the config's storages (or fresh
// local ones) and writes results.json, the summary and report.html as a run does. When -out
// already holds a run's results.json with the same storages, the conformance figures are
// added to it, so the summary shows them beside that run's probes.
func cmdConformance(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("conformance")
	cfgPath := fs.String("config", "", "benchmark config (YAML): its remoteStorages are tested; without it, a local VictoriaMetrics and Prometheus are started fresh")
	out := fs.String("out", "out", "directory for results.json and report.html")
	keep := fs.Bool("keep", false, "leave the storages tsbench started running, and print their URLs")
	logLevel := fs.String("logLevel", "info", "debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return ExitUsage, err
	}
	if fs.NArg() > 0 {
		return ExitUsage, usageError(fs, "unexpected argument %q: conformance takes only flags", fs.Arg(0))
	}
	logger, err := newLogger(stderr, *logLevel)
	if err != nil {
		return ExitUsage, err
	}
	p, err := loadConfig(*cfgPath)
	if err != nil {
		return ExitUsage, err
	}
	conformance.EnableParserFeatures() // once, before anything parses PromQL
	res, err := bench.Conformance(ctx, p, bench.Options{Keep: *keep, Progress: stderr, Logger: logger})
	if err != nil {
		return ExitError, err
	}
	res = addToRun(res, filepath.Join(*out, "results.json"), logger.Warn)
	code, err := finish(res, *out, stdout)
	if err != nil {
		return code, err
	}
	var untested []string
	for _, s := range res.Storages {
		if s.Conformance == nil {
			untested = append(untested, s.Name)
		}
	}
	if len(untested) > 0 {
		return ExitError, fmt.Errorf("not tested: %s (see its problems above)", strings.Join(untested, ", "))
	}
	return ExitOK, nil
}

// addToRun puts the conformance figures into the run's results at path when it has the same
// storages; otherwise it returns res as it is.
func addToRun(res *results.Run, path string, warn func(string, ...any)) *results.Run {
	run, err := results.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return res
	}
	if err != nil {
		warn("results.json in -out not read; writing the conformance results alone", "err", err)
		return res
	}
	if len(run.Storages) != len(res.Storages) {
		warn("results.json in -out has other storages; writing the conformance results alone", "path", path)
		return res
	}
	for i := range run.Storages {
		if run.Storages[i].Name != res.Storages[i].Name {
			warn("results.json in -out has other storages; writing the conformance results alone", "path", path)
			return res
		}
	}
	for i := range run.Storages {
		run.Storages[i].Conformance = res.Storages[i].Conformance
		run.Storages[i].Problems = append(run.Storages[i].Problems, res.Storages[i].Problems...)
	}
	return run
}
