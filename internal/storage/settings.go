package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// Setting is one of a storage's own settings that changes what tsbench measures, as the
// storage names and prints it (issue 39).
type Setting struct {
	Name  string // search.latencyOffset, storage.tsdb.retention.time
	Value string // 30s, 15d
	// Flag is how it is written on the storage's command line (or, for a config-file key,
	// its path in the file): -search.latencyOffset=30s.
	Flag string
}

// settingsFamilies are the families whose settings tsbench reads, in the order they are
// asked when the kind is not known: those read under the readURL first (Family's
// settingsAtRoot).
func settingsFamilies() []Family {
	var fs []Family
	for _, f := range Families() {
		if f.readSettings != nil {
			fs = append(fs, f)
		}
	}
	slices.SortStableFunc(fs, func(a, b Family) int {
		return cmp.Compare(btoi(a.settingsAtRoot), btoi(b.settingsAtRoot))
	})
	return fs
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ReadSettings reads the settings that change what tsbench measures from the storage whose
// query API is at readURL, through c (its read side's auth). kind names the family when known
// (a storage tsbench started); "" asks each family in turn, and the first that answers is the
// kind returned. A storage that answers as no family does gets an error naming each attempt.
func ReadSettings(ctx context.Context, c *Client, readURL string, kind Kind) (Kind, []Setting, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var errs []error
	for _, f := range settingsFamilies() {
		if kind != "" && f.Kind != kind {
			continue
		}
		s, err := f.readSettings(ctx, c, readURL)
		if err == nil {
			return f.Kind, s, nil
		}
		errs = append(errs, fmt.Errorf("as %s: %w", f.Kind, err))
	}
	if len(errs) == 0 {
		return "", nil, fmt.Errorf("storage kind %q: tsbench reads the settings of %s only", kind, KindsWhere(func(f Family) bool { return f.readSettings != nil }))
	}
	return "", nil, errors.Join(errs...)
}

// Checks are the margins of tsbench's checks that a storage's settings may undercut.
type Checks struct {
	// Settle is how long after the load the read-back and the probes of the newest data run
	// (verify's Settle): that data is that old. 0: no read-back (verifySamples 0).
	Settle time.Duration
	// FreshnessInterval and FreshnessTimeout are the canary's first look and its give-up
	// after an ack; 0 with the canary off.
	FreshnessInterval, FreshnessTimeout time.Duration
	// ScrapeInterval is the workload's: a series' samples are this far apart.
	ScrapeInterval time.Duration
	// Span is how old the oldest data read back is at the end: history + duration (history
	// alone for an endless run).
	Span time.Duration
	// HeldBy is how late series.outOfOrder sends the samples it holds back; 0 without.
	HeldBy time.Duration
}

// ChecksOf are cfg's checks, the read-back reading settle after the data it reads.
func ChecksOf(cfg *config.Config, settle time.Duration) Checks {
	c := Checks{ScrapeInterval: cfg.ScrapeInterval, Span: cfg.History + cfg.Duration}
	if cfg.VerifySamples > 0 {
		c.Settle = settle
	}
	if cfg.Freshness.On() {
		c.FreshnessInterval, c.FreshnessTimeout = cfg.Freshness.Interval, cfg.Freshness.Timeout
	}
	if cfg.Series.OutOfOrder.Percent > 0 {
		c.HeldBy = cfg.Series.OutOfOrder.By
	}
	return c
}

// SettingsWarnings says which of settings, read from a storage of kind, hide data from the
// checks c, each in one sentence that names the setting and what to change.
func SettingsWarnings(kind Kind, settings []Setting, c Checks) []string {
	values := map[string]string{}
	for _, s := range settings {
		values[s.Name] = s.Value
	}
	for _, f := range settingsFamilies() {
		if f.Kind == kind {
			return f.warnSettings(values, c)
		}
	}
	return nil
}

// getPage GETs u through c and returns its body (at most 8 MiB): an error unless it answers 200.
func getPage(ctx context.Context, c *Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: invalid URL", config.RedactURL(u))
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", config.RedactURL(u), StripURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", config.RedactURL(u), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", config.RedactURL(u), resp.StatusCode)
	}
	return b, nil
}

// hostRoot is u's scheme and host with the path "/": where a storage serves its own pages
// (/metrics, /flags) whatever the path of its query API.
func hostRoot(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", errors.New("invalid URL")
	}
	return (&url.URL{Scheme: p.Scheme, User: p.User, Host: p.Host, Path: "/"}).String(), nil
}

// shortDuration prints d as a config does: 30s, 1m30s, 15d, 40d20s.
func shortDuration(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day {
		if d%day == 0 {
			return fmt.Sprintf("%dd", d/day)
		}
		return fmt.Sprintf("%dd%s", d/day, shortDuration(d%day))
	}
	return config.ShortDuration(d)
}
