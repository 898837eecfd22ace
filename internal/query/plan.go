// Package query is the read path: it loads alerting rules and dashboard panels, runs them and
// index lookups against one storage's Prometheus query API on an open-model schedule, and keeps
// their latency in HDR histograms. Its API client (api.go) is tsbench's one client of that
// API: verify reads back through it too.
//
// Invariant: every evaluation has a scheduled time fixed at the start of the run; latency is
// measured from it (so a slow storage cannot hide its slowness by slowing the load), and an
// evaluation that cannot be sent is counted as missed, never delayed into the next interval.
// For every query, executed = ok + sum(errors), and warnings ⊆ ok.
package query

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/tsbench/tsbench/internal/config"
)

// Default files in the embedded assets.
const (
	DefaultRulesPath     = "rules/node_exporter.rules.yml"
	DefaultDashboardPath = "rules/dashboard.yml"
)

// Kinds of query, as reported in perQuery.kind and the kind label of the metrics.
const (
	KindInstant     = "instant"
	KindRange       = "range"
	KindSeries      = "series"
	KindLabels      = "labels"
	KindLabelValues = "labelValues"
)

// indexWindow is how far back index lookups look: the last hour, a dashboard's usual range.
const indexWindow = time.Hour

// NamedExpr is one rule's name and PromQL expression.
type NamedExpr struct {
	Name string
	Expr string
}

// Query is one query of the plan: a rule (instant), a panel (range) or an index lookup.
type Query struct {
	Name string
	Kind string
	// Expr is the PromQL of instant and range queries; for index lookups, the match[]
	// selector (empty: none) and, for labelValues, the label name in Label.
	Expr     string
	Label    string
	Interval time.Duration
	Range    time.Duration // range queries: the span ending at the scheduled time
	Step     time.Duration // range queries
	Window   time.Duration // index lookups: the span ending at the scheduled time
	Group    string        // rules: the rule group
	// GroupConcurrency caps the queries in flight of the rule group, per storage (vmalert's
	// group concurrency); 0: only queryConcurrency does.
	GroupConcurrency int
	// Params and Header are the rule group's URL parameters and HTTP headers (vmalert's params
	// and headers), sent with each of its queries; nil when it has none. The group's queries
	// share them: read only. Header values may be secrets: never log or report them.
	Params url.Values
	Header http.Header
	// TimeOffset is how far before its scheduled time a rule's query time is (the group's
	// query_offset or eval_delay); latency still runs from the scheduled time.
	TimeOffset time.Duration
	// ParseError is set when Expr is not valid PromQL for Prometheus' parser: the query is
	// still sent (another storage's dialect may accept it) and its errors are counted.
	ParseError string
}

// Plan is the whole read load run against every storage.
type Plan struct {
	Queries  []Query
	warnings []string
}

// Warnings names every rule whose expression does not parse, by group and rule.
func (p *Plan) Warnings() []string { return p.warnings }

// RuleExprs returns the name and expression of every rule, in file order.
func (p *Plan) RuleExprs() []NamedExpr {
	var out []NamedExpr
	for _, q := range p.Queries {
		if q.Kind == KindInstant {
			out = append(out, NamedExpr{Name: q.Name, Expr: q.Expr})
		}
	}
	return out
}

// LoadPlan loads the rules (cfg.QueryRules from disk, or the default rule file from fsys), the
// range queries (cfg.RangeQueries; when the key is absent, the default dashboard from fsys; an
// explicit empty list runs none) and the index lookups (none when indexLookupInterval is 0).
// Each error names the config key it comes from.
func LoadPlan(fsys fs.FS, cfg *config.Config) (*Plan, error) {
	var (
		b   []byte
		err error
	)
	src := DefaultRulesPath
	if cfg.QueryRules != "" {
		src = cfg.QueryRules
		b, err = os.ReadFile(cfg.QueryRules)
	} else {
		b, err = fs.ReadFile(fsys, DefaultRulesPath)
	}
	if err != nil {
		return nil, fmt.Errorf("queryRules: %w", err)
	}
	p := &Plan{}
	rules, warnings, err := parseRules(b, cfg.QueryInterval)
	if err != nil {
		return nil, fmt.Errorf("queryRules %s: %w", src, err)
	}
	if err := storageHeaders(rules, cfg.RemoteStorages); err != nil {
		return nil, fmt.Errorf("queryRules %s: %w", src, err)
	}
	p.Queries = append(p.Queries, rules...)
	for _, w := range warnings {
		p.warnings = append(p.warnings, fmt.Sprintf("queryRules %s: %s", src, w))
	}

	panels := cfg.RangeQueries
	if panels == nil { // the key is absent; `rangeQueries: []` decodes to an empty, non-nil list
		b, err := fs.ReadFile(fsys, DefaultDashboardPath)
		if err == nil {
			panels, err = parseDashboard(b)
		}
		if err != nil {
			return nil, fmt.Errorf("rangeQueries: default dashboard %s: %w", DefaultDashboardPath, err)
		}
	}
	for _, rq := range panels {
		q := Query{Name: rq.Name, Kind: KindRange, Expr: rq.Expr, Interval: rq.Interval, Range: rq.Range, Step: rq.Step}
		if _, err := parser.ParseExpr(rq.Expr); err != nil {
			q.ParseError = err.Error()
			p.warnings = append(p.warnings, fmt.Sprintf("rangeQueries %q: expression does not parse: %v", rq.Name, err))
		}
		p.Queries = append(p.Queries, q)
	}
	if cfg.NativeHistograms.On() {
		p.Queries = append(p.Queries, nativeTwins(p.Queries)...)
	}
	if cfg.IndexLookupInterval > 0 {
		p.Queries = append(p.Queries, indexLookups(cfg.IndexLookupInterval)...)
	}
	uniqueNames(p.Queries)
	return p, nil
}

// storageHeaders refuses a group header that a storage's readHeaders set as well: the
// storage's would win unsaid (its client sets its headers last), and they may be its auth.
func storageHeaders(rules []Query, storages map[string]config.Storage) error {
	var errs []error
	seen := map[string]bool{}
	for _, q := range rules {
		if len(q.Header) == 0 || seen[q.Group] {
			continue
		}
		seen[q.Group] = true
		for _, name := range slices.Sorted(maps.Keys(storages)) {
			for _, h := range slices.Sorted(maps.Keys(storages[name].ReadHeaders)) {
				if canon := http.CanonicalHeaderKey(h); len(q.Header.Values(canon)) > 0 {
					errs = append(errs, fmt.Errorf("group %q: headers: %s is set for storage %s by remoteStorages.%s.readHeaders; a group cannot replace it", q.Group, canon, name, name))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// parseDashboard reads the dashboard file: `panels:` with the keys of rangeQueries.
func parseDashboard(b []byte) ([]config.RangeQuery, error) {
	var f struct {
		Panels []config.RangeQuery `yaml:"panels"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	var errs []error
	for i, rq := range f.Panels {
		key := fmt.Sprintf("panels[%d] %q", i, rq.Name)
		if rq.Name == "" || rq.Expr == "" {
			errs = append(errs, fmt.Errorf("%s: name and expr must be set", key))
		}
		for _, f := range []struct {
			key string
			d   time.Duration
		}{{"range", rq.Range}, {"step", rq.Step}, {"interval", rq.Interval}} {
			if f.d <= 0 {
				errs = append(errs, fmt.Errorf("%s: %s: must be > 0", key, f.key))
			}
		}
	}
	if len(f.Panels) == 0 {
		errs = append(errs, errors.New("no panels"))
	}
	return f.Panels, errors.Join(errs...)
}

// indexLookups are the series, label-name and label-value lookups of a dashboard's variables and
// metric browser, with the kinds of matcher of seed 002's table: exact (n="1"), several exact,
// negative (j!="foo"), whole-label regex (i=~".+"), prefix regex (i=~"1.+"), negative regex.
func indexLookups(interval time.Duration) []Query {
	lookup := func(kind, name, match, label string) Query {
		return Query{Name: name, Kind: kind, Expr: match, Label: label, Interval: interval, Window: indexWindow}
	}
	return []Query{
		lookup(KindSeries, "series_exact", `{__name__="node_load1",job="node_exporter"}`, ""),
		lookup(KindSeries, "series_exact_instance", `{__name__="node_cpu_seconds_total",instance="host-000001:9100",mode="idle"}`, ""),
		lookup(KindSeries, "series_negative", `{__name__="node_filesystem_avail_bytes",fstype!="tmpfs"}`, ""),
		lookup(KindSeries, "series_regex_any", `{__name__="node_network_up",device=~".+"}`, ""),
		lookup(KindSeries, "series_regex_prefix", `{__name__="node_cpu_seconds_total",cpu=~"1.+",mode="user"}`, ""),
		lookup(KindSeries, "series_regex_negative", `{__name__="node_disk_io_time_seconds_total",device=~".+",device!~"zram.*"}`, ""),
		lookup(KindLabels, "labels_all", "", ""),
		lookup(KindLabels, "labels_of_metric", `{__name__="node_uname_info"}`, ""),
		lookup(KindLabelValues, "label_values_metric_names", "", "__name__"),
		lookup(KindLabelValues, "label_values_instance", `{__name__="node_uname_info",job="node_exporter"}`, "instance"),
		lookup(KindLabelValues, "label_values_device", `{__name__="node_network_receive_bytes_total",instance="host-000001:9100"}`, "device"),
		lookup(KindLabelValues, "label_values_mountpoint", `{__name__="node_filesystem_size_bytes",fstype!~"tmpfs|ramfs"}`, "mountpoint"),
	}
}

// uniqueNames suffixes a name seen before with its rule group (or its kind), then a number.
func uniqueNames(qs []Query) {
	seen := map[string]bool{}
	for i := range qs {
		q := &qs[i]
		group := q.Group
		if group == "" {
			group = q.Kind
		}
		name := q.Name
		if seen[name] {
			name = q.Name + ":" + group
			for n := 2; seen[name]; n++ {
				name = fmt.Sprintf("%s:%s:%d", q.Name, group, n)
			}
		}
		seen[name] = true
		q.Name = name
	}
}
