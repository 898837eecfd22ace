package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/tsbench/tsbench/internal/workload"
)

// cmdProfile runs `tsbench profile capture` and `tsbench profile metadata`.
func cmdProfile(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
	fs := newFlagSet("profile")
	if err := parseFlags(fs, args); err != nil {
		return ExitUsage, err
	}
	switch fs.Arg(0) {
	case "capture":
		return cmdCapture(ctx, fs.Args()[1:], stdout)
	case "metadata":
		return cmdProfileMetadata(ctx, fs.Args()[1:], stdout)
	case "":
		return ExitUsage, usageError(fs, "missing command: capture or metadata")
	}
	return ExitUsage, usageError(fs, "unknown command %q: capture or metadata", fs.Arg(0))
}

// cmdCapture runs `tsbench profile capture`.
func cmdCapture(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	fs := newFlagSet("profile capture")
	url := fs.String("url", "", "the exporter's /metrics URL, e.g. http://127.0.0.1:9100/metrics")
	out := fs.String("out", "", "profile file to write (JSON)")
	scrapes := fs.Int("scrapes", workload.MinTickScrapes, fmt.Sprintf("scrapes to fit the shapes from (at least 2; fewer than %d record only rates and ranges); -duration sets it instead", workload.MinTickScrapes))
	interval := fs.Duration("interval", 3*time.Second, "time between scrapes: the scrape interval the profile is made for")
	duration := fs.Duration("duration", 0, fmt.Sprintf("how long to watch, e.g. 5m: duration/interval + 1 scrapes; %d scrapes or more record how often each value changes, its steps and digits", workload.MinTickScrapes))
	expand := fs.String("expand", "", "label families to expand to a typical host's size, e.g. node_cpu_:cpu=16,node_disk_:device=4")
	if err := parseFlags(fs, args); err != nil {
		return ExitUsage, err
	}
	if *url == "" || *out == "" {
		return ExitUsage, usageError(fs, "-url and -out are required")
	}
	if *duration > 0 {
		if *interval <= 0 {
			return ExitUsage, usageErrorf("-interval must be > 0")
		}
		*scrapes = int(*duration / *interval) + 1
	}
	if *scrapes < 2 {
		return ExitUsage, usageErrorf("-scrapes must be >= 2: shapes are fitted from differences")
	}
	exp, err := workload.ParseExpansions(*expand)
	if err != nil {
		return ExitUsage, usageErrorf("-expand: %v", err)
	}
	p, err := workload.Capture(ctx, &http.Client{Timeout: 30 * time.Second}, workload.CaptureOptions{
		URL: *url, Scrapes: *scrapes, Interval: *interval, Expand: exp,
	})
	if err != nil {
		return ExitError, err
	}
	if err := writeProfile(*out, p); err != nil {
		return ExitError, err
	}
	fmt.Fprintf(stdout, "%s: %d series per target; shapes: %v\n", *out, len(p.Series), p.Kinds())
	return ExitOK, nil
}

// cmdProfileMetadata runs `tsbench profile metadata`: it fills a profile's help and units
// from one scrape of its exporter, leaving every value it generates as it was.
func cmdProfileMetadata(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	fs := newFlagSet("profile metadata")
	url := fs.String("url", "", "the exporter's /metrics URL, e.g. http://127.0.0.1:9100/metrics")
	file := fs.String("profile", "", "profile file to fill in place (JSON)")
	if err := parseFlags(fs, args); err != nil {
		return ExitUsage, err
	}
	if *url == "" || *file == "" {
		return ExitUsage, usageError(fs, "-url and -profile are required")
	}
	p, err := workload.LoadProfileFile(*file)
	if err != nil {
		return ExitError, err
	}
	n, err := workload.FillMetadata(ctx, &http.Client{Timeout: 30 * time.Second}, *url, p)
	if err != nil {
		return ExitError, err
	}
	if err := writeProfile(*file, p); err != nil {
		return ExitError, err
	}
	fmt.Fprintf(stdout, "%s: help text for %d of %d series\n", *file, n, len(p.Series))
	return ExitOK, nil
}

func writeProfile(path string, p *workload.Profile) error {
	b, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
