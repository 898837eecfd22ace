package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tsbench/tsbench/internal/config"
)

func cmdValidate(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("validate", stderr)
	path := fs.String("config", "", "config file to check")
	if err := parseFlags(fs, args); err != nil {
		return ExitUsage, err
	}
	if *path == "" && fs.NArg() == 1 {
		*path = fs.Arg(0)
	}
	if *path == "" {
		return ExitUsage, usageErrorf("-config FILE is required")
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return ExitUsage, errUsage{errors.New(joinLines(err))}
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "%s: ok, %d storages\n", *path, len(cfg.RemoteStorages))
	return ExitOK, nil
}

func cmdRun(_ context.Context, _ []string, _, _ io.Writer) (int, error) {
	return ExitError, errors.New("run: not wired yet")
}
