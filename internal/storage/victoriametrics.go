package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// KindVictoriaMetrics is VictoriaMetrics, single node or cluster.
const KindVictoriaMetrics = "victoriametrics"

// VictoriaMetrics is what tsbench knows of VictoriaMetrics (1.79 and newer). Its settings
// are the flags that change what it measures, read from its flag metrics (flag{name, value,
// is_set} on /metrics, every flag with its value) or else its /flags page (the flags set,
// the others at their defaults), on the host of its readURL (a cluster's vmselect).
// vmBuildTag finds the release in a VictoriaMetrics build tag such as
// victoria-metrics-20220802-123456-tags-v1.79.5-0-gabcdef.
var vmBuildTag = regexp.MustCompile(`v\d+\.\d+\.\d+(-enterprise)?(-cluster)?`)

func (families) VictoriaMetrics() Family {
	return Family{
		Kind: KindVictoriaMetrics, Order: 10, MetricPrefix: "vm_", Default: true, RetentionDays: 31,
		Local: vmLocal(),
		// short_version from 1.80 on; before, version is its whole build tag
		// (victoria-metrics-20220802-112130-tags-v1.79.5-0-g...). Debian's 1.79 says none.
		Version: []VersionLabel{{Metric: "vm_app_version", Label: "short_version"}, {Metric: "vm_app_version", Label: "version", Release: vmBuildTag}},
		Disk:    vmDisk,
		// Single node and vminsert: see Selector's Fallback.
		Ingested:      []Selector{{Name: "vm_rows_inserted_total", Label: "type", Value: "promremotewrite", Fallback: true}},
		Series:        &Selector{Name: "vm_cache_entries", Label: "type", Value: "storage/hour_metric_ids"}, // got samples this hour
		SeriesCreated: "vm_new_timeseries_created_total",
		Snapshot:      &Snapshot{Create: vmSnapshot, Delete: vmDeleteSnapshot},
		Export:        true, ExtraLabel: true,
		Limits:       vmLimits(),
		readSettings: readVictoriaMetrics, settingsAtRoot: true, warnSettings: victoriaMetricsWarnings,
	}
}

// vmDisk is vm_data_size_bytes without the types ending in /inmemory (indexdb/inmemory,
// storage/inmemory in newer versions): those parts are in RAM, not on disk. VictoriaMetrics
// has no WAL: what it has not flushed yet (a second's worth) is in RAM. The types on disk are
// each under its name in 1.79 or newer versions (indexdb/file since the in-memory parts got
// their own types).
func vmDisk(p Page) (v float64, why string, exposed bool) {
	mf, ok := p["vm_data_size_bytes"]
	if !ok {
		return 0, "", false
	}
	total, seen := 0.0, map[string]bool{}
	for _, m := range mf.GetMetric() {
		t := LabelValue(m, "type")
		seen[t] = true
		if !strings.HasSuffix(t, "/inmemory") {
			total += Value(m)
		}
	}
	var absent []string
	for _, names := range [][]string{{"indexdb", "indexdb/file"}, {"storage/small"}, {"storage/big"}} {
		if !slices.ContainsFunc(names, func(n string) bool { return seen[n] }) {
			absent = append(absent, `type="`+names[len(names)-1]+`"`)
		}
	}
	if len(absent) > 0 {
		return 0, "vm_data_size_bytes has no " + strings.Join(absent, ", ") + ": that part of the disk is not counted; set dataDir to the storage's data directory", true
	}
	return total, "", true
}

func vmSnapshot(ctx context.Context, call Call) (string, error) {
	var body struct{ Status, Snapshot, Msg string }
	err := call(ctx, http.MethodGet, "snapshot/create", &body)
	if err == nil && body.Status != "ok" {
		err = fmt.Errorf("snapshot/create: status %q %s", body.Status, body.Msg)
	}
	return body.Snapshot, err
}

func vmDeleteSnapshot(ctx context.Context, call Call, name, _ string) error {
	return call(ctx, http.MethodGet, "snapshot/delete?snapshot="+url.QueryEscape(name), nil)
}

// vmLimits: lib/writeconcurrencylimiter answers 503 after -insert.maxQueueDuration ("cannot
// handle more than N concurrent inserts during D", as 1.79.5 answers; newer releases say
// "because N concurrent insert requests are executed"); and a request too big.
func vmLimits() []Limit {
	return []Limit{
		{
			Name: "concurrent inserts", Family: "VictoriaMetrics", Match: `(?s)(\d+) concurrent insert.*maxConcurrentInserts`,
			Raise: "-maxConcurrentInserts (its default grows with the CPU cores; on vminsert in a cluster) or -insert.maxQueueDuration (default 1m), or a lower writeConcurrency",
		},
		{
			Name: "request size", Family: "VictoriaMetrics", Match: `maxInsertRequestSize=(\d+)`,
			Raise: "-maxInsertRequestSize, or a lower maxSamplesPerRequest",
		},
	}
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

// vmLocal starts victoria-metrics single node.
func vmLocal() *Local {
	return &Local{
		Binary: "victoria-metrics", Package: "victoria-metrics", ReadyPath: "/health",
		Args: func(p Place) ([]string, error) {
			return []string{"-httpListenAddr=" + p.Addr, "-storageDataPath=" + p.DataDir}, nil
		},
		Flags: []string{
			// Answer queries with the newest samples too: by default VictoriaMetrics hides
			// the last 30s from instant and range queries, which the "newest minute" probe
			// and the freshness canary would see late (raw reads are not hidden).
			"-search.latencyOffset=0s",
			// /api/v1/series refuses more than 30000 series by default, fewer than the
			// default workload writes (200 targets × 839 series).
			"-search.maxSeries=10000000",
		},
		RetentionFlag: "-retentionPeriod=",
	}
}
