package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// victoriaMetricsSettings is what tsbench knows of VictoriaMetrics' settings: the flags that
// change what it measures, read from its flag metrics (flag{name, value, is_set} on /metrics,
// every flag with its value) or else its /flags page (the flags set, the others at their
// defaults), on the host of its readURL (a cluster's vmselect).
func victoriaMetricsSettings() settingsFamily {
	return settingsFamily{kind: KindVictoriaMetrics, read: readVictoriaMetrics, warn: victoriaMetricsWarnings}
}

// vmSettingDefaults are the flags read and their defaults in 1.79 (victoria-metrics -help):
// search.latencyOffset hides the newest samples from queries, dedup.minScrapeInterval keeps
// one sample per interval, retentionPeriod drops older data (a number alone is months).
func vmSettingDefaults() map[string]string {
	return map[string]string{"search.latencyOffset": "30s", "dedup.minScrapeInterval": "0s", "retentionPeriod": "1"}
}

func readVictoriaMetrics(ctx context.Context, c *Client, readURL string) ([]Setting, error) {
	root, err := hostRoot(readURL)
	if err != nil {
		return nil, err
	}
	values, errMetrics := vmFlagMetrics(ctx, c, root+"metrics")
	if errMetrics != nil {
		var errFlags error
		if values, errFlags = vmFlagsPage(ctx, c, root+"flags"); errFlags != nil {
			return nil, errors.Join(errMetrics, errFlags)
		}
	}
	var out []Setting
	for _, name := range slices.Sorted(maps.Keys(vmSettingDefaults())) {
		if v, ok := values[name]; ok {
			out = append(out, Setting{Name: name, Value: v, Flag: "-" + name + "=" + v})
		}
	}
	return out, nil
}

// vmFlagMetrics reads the settings from the flag metrics of the /metrics page at u.
func vmFlagMetrics(ctx context.Context, c *Client, u string) (map[string]string, error) {
	b, err := getPage(ctx, c, u)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("GET %s: not the Prometheus text format: %w", u, err)
	}
	flags := families["flag"]
	if flags == nil {
		return nil, fmt.Errorf("GET %s: no flag metrics", u)
	}
	want, values := vmSettingDefaults(), map[string]string{}
	for _, m := range flags.GetMetric() {
		var name, value string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "name":
				name = l.GetValue()
			case "value":
				value = l.GetValue()
			}
		}
		if _, ok := want[name]; ok {
			values[name] = value
		}
	}
	return values, nil
}

// vmFlagsPage reads the settings from the /flags page at u: a line -name="value" per flag
// set; a flag not listed has its default.
func vmFlagsPage(ctx context.Context, c *Client, u string) (map[string]string, error) {
	b, err := getPage(ctx, c, u)
	if err != nil {
		return nil, err
	}
	values, seen := vmSettingDefaults(), false
	for line := range strings.Lines(string(b)) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || !strings.HasPrefix(name, "-") {
			continue
		}
		seen = true
		if _, want := values[name[1:]]; want {
			values[name[1:]] = strings.Trim(value, `"`)
		}
	}
	if !seen {
		return nil, fmt.Errorf("GET %s: no -flag=value lines", u)
	}
	return values, nil
}

func victoriaMetricsWarnings(v map[string]string, c Checks) []string {
	var w []string
	if d, err := time.ParseDuration(v["search.latencyOffset"]); err == nil && d > 0 {
		w = append(w, latencyOffsetWarnings(d, c)...)
	}
	if d, err := time.ParseDuration(v["dedup.minScrapeInterval"]); err == nil && c.Settle > 0 && d > c.ScrapeInterval {
		w = append(w, fmt.Sprintf("-dedup.minScrapeInterval=%s keeps one sample per series every %s, and the workload writes one every %s (scrapeInterval): the read-back counts the others missing; start VictoriaMetrics with -dedup.minScrapeInterval of at most %s",
			v["dedup.minScrapeInterval"], shortDuration(d), shortDuration(c.ScrapeInterval), shortDuration(c.ScrapeInterval)))
	}
	if d, ok := vmRetention(v["retentionPeriod"]); ok && c.Span > d {
		w = append(w, fmt.Sprintf("-retentionPeriod=%s keeps %s of data, and the run's oldest data will be %s old at its end (history + duration): VictoriaMetrics refuses or drops the older, which the read-back counts missing; start it with -retentionPeriod=%s",
			v["retentionPeriod"], shortDuration(d), shortDuration(c.Span), shortDuration((c.Span+24*time.Hour-1)/(24*time.Hour)*(24*time.Hour)+24*time.Hour)))
	}
	return w
}

// latencyOffsetWarnings are the checks an offset d hides data from: an instant or range query
// for a time less than d ago is answered as of d ago (VictoriaMetrics' -search.latencyOffset).
// The read-back's raw reads (selector[window]) are not: VictoriaMetrics answers them as an
// export, whatever the offset (1.79, TestStorageSettings), and so are the checks during the run.
func latencyOffsetWarnings(d time.Duration, c Checks) []string {
	flag := "-search.latencyOffset=" + shortDuration(d)
	var w []string
	if c.Settle > 0 && d > c.Settle {
		w = append(w, fmt.Sprintf("%s hides each series' newest %s from instant and range queries, longer than the %s the probes wait after the load: the probes of the newest data (instant query in the newest minute, time(), timestamps) are answered as of %s ago and differ; start VictoriaMetrics with -search.latencyOffset=0s",
			flag, shortDuration(d), shortDuration(c.Settle), shortDuration(d)))
	}
	switch {
	case c.FreshnessTimeout > 0 && d >= c.FreshnessTimeout:
		w = append(w, fmt.Sprintf("%s is at least freshness.timeout (%s): every canary sample counts as never visible", flag, shortDuration(c.FreshnessTimeout)))
	case c.FreshnessInterval > 0 && d > c.FreshnessInterval:
		w = append(w, fmt.Sprintf("%s: the freshness canary measures this offset, not ingestion: no sample is visible to an instant query sooner than %s after its ack", flag, shortDuration(d)))
	}
	return w
}

// vmRetention is a -retentionPeriod value as a duration: a number alone is months (31 days,
// as VictoriaMetrics counts them), else a number with h, d, w or y.
func vmRetention(s string) (time.Duration, bool) {
	day := 24 * time.Hour
	units := map[string]time.Duration{"h": time.Hour, "d": day, "w": 7 * day, "y": 365 * day}
	unit := 31 * day
	if u, ok := units[s[max(0, len(s)-1):]]; ok {
		s, unit = s[:len(s)-1], u
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return time.Duration(n * float64(unit)), true
}
