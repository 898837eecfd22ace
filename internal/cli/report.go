package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tsbench/tsbench/internal/report"
	"github.com/tsbench/tsbench/internal/results"
)

// cmdReport re-renders a results file, or compares two.
func cmdReport(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) > 0 && args[0] == "compare" {
		return cmdCompare(args[1:], stdout, stderr)
	}
	fs := newFlagSet("report", stderr)
	out := fs.String("out", "", "directory for report.html (default: the results file's directory)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return ExitUsage, err
	}
	if len(pos) != 1 {
		return ExitUsage, usageErrorf("usage: tsbench report RESULTS.json [-out DIR] | tsbench report compare OLD.json NEW.json [-out DIR]")
	}
	res, err := results.ReadFile(pos[0])
	if err != nil {
		return ExitError, err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Dir(pos[0])
	}
	if err := report.WriteSummary(stdout, res); err != nil {
		return ExitError, err
	}
	path := filepath.Join(dir, "report.html")
	if err := writeFile(path, func(w io.Writer) error { return report.WriteHTML(w, res) }); err != nil {
		return ExitError, err
	}
	fmt.Fprintf(stdout, "\nreport: %s\n", path)
	return ExitOK, nil
}

func cmdCompare(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("report compare", stderr)
	out := fs.String("out", "", "directory for compare.html (default: the new results file's directory)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return ExitUsage, err
	}
	if len(pos) != 2 {
		return ExitUsage, usageErrorf("usage: tsbench report compare OLD.json NEW.json [-out DIR]")
	}
	old, err := results.ReadFile(pos[0])
	if err != nil {
		return ExitError, err
	}
	cur, err := results.ReadFile(pos[1])
	if err != nil {
		return ExitError, err
	}
	c := report.Compare(old, cur)
	if err := c.WriteText(stdout); err != nil {
		return ExitError, err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Dir(pos[1])
	}
	path := filepath.Join(dir, "compare.html")
	if err := writeFile(path, c.WriteHTML); err != nil {
		return ExitError, err
	}
	fmt.Fprintf(stdout, "\ncompare: %s\n", path)
	return ExitOK, nil
}

// writeFile creates path and writes it with render, reporting a failed close.
func writeFile(path string, render func(io.Writer) error) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return render(f)
}
