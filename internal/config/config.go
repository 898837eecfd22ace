// Package config is the one YAML schema of a benchmark: Default, Load, Validate.
//
// Invariant: a *Config returned by Load or Default has every default filled and has passed
// Validate; keys are those of the prometheus-benchmark Helm chart where one exists, so its
// users bring their values file as it is.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config describes one benchmark run.
type Config struct {
	// Seed makes the workload reproducible: seed + config + start time give every sample.
	Seed uint64 `yaml:"seed" json:"seed"`
	// Duration of the load; 0 runs until interrupted. With History, it counts from the moment
	// a storage has caught up with the wall clock.
	Duration time.Duration `yaml:"duration" json:"duration"`
	// StartTime anchors the scrape schedule and churn; zero means the moment the run starts.
	// Shards given the same startTime (and duration) write exactly the same workload however
	// far apart they start; a shard started before it waits for it.
	StartTime StartTime `yaml:"startTime" json:"startTime,omitzero"`
	// Shard is this process's part of the targets (and replicas): shard i of n generates every
	// n-th target from i on; the n parts add up to the one-process workload.
	Shard Shard `yaml:"shard" json:"shard"`
	// LeadShard is the shard that runs, once per storage across the shards, the query load,
	// the storages' observation and snapshot, and the read-back's rule comparison.
	LeadShard int `yaml:"leadShard" json:"leadShard"`
	// Rounds repeats the whole run this many times, the storages tsbench starts fresh for
	// each; every figure is then the median of the rounds with its interval (issue 35).
	Rounds int `yaml:"rounds" json:"rounds"`
	// Confidence is the headline's family-wise level: a "*" marks a row's best only where
	// the difference holds at it over every row tested, so an A/A run shows no "*" on any
	// row with at least this probability.
	Confidence float64 `yaml:"confidence" json:"confidence"`
	// History starts the workload's clock this far in the past: each storage first receives
	// [start − history, start) as fast as it accepts it, then the load goes on live (issue 12).
	History time.Duration `yaml:"history" json:"history,omitempty"`
	// Profile is the path of a profile captured by `tsbench profile capture`; empty means the
	// embedded node_exporter profile.
	Profile string `yaml:"profile" json:"profile,omitempty"`
	// HostLoad says how busy the simulated hosts are, in (0, 1]: 1 moves values as the profile's
	// host did when captured (the default profile's: a loaded machine); a lower load makes
	// fewer scrapes change values and counters other than CPU idle count slower (issue 14).
	HostLoad float64 `yaml:"hostLoad" json:"hostLoad,omitempty"`

	TargetsCount               int           `yaml:"targetsCount" json:"targetsCount"`
	ScrapeInterval             time.Duration `yaml:"scrapeInterval" json:"scrapeInterval"`
	ScrapeConfigUpdatePercent  float64       `yaml:"scrapeConfigUpdatePercent" json:"scrapeConfigUpdatePercent"`
	ScrapeConfigUpdateInterval time.Duration `yaml:"scrapeConfigUpdateInterval" json:"scrapeConfigUpdateInterval"`
	WriteConcurrency           int           `yaml:"writeConcurrency" json:"writeConcurrency"`
	// GenerateWorkers is how many goroutines generate and encode the workload, apart from
	// writeConcurrency, the connections per storage.
	GenerateWorkers int `yaml:"generateWorkers" json:"generateWorkers"`
	// Compression is the snappy encoder of request bodies: fast or better.
	Compression          Compression   `yaml:"compression" json:"compression"`
	WriteReplicas        int           `yaml:"writeReplicas" json:"writeReplicas"`
	WriteURLReplicas     int           `yaml:"writeURLReplicas" json:"writeURLReplicas"`
	MaxSamplesPerRequest int           `yaml:"maxSamplesPerRequest" json:"maxSamplesPerRequest"`
	MaxPendingSamples    int64         `yaml:"maxPendingSamples" json:"maxPendingSamples"`
	MaxRetryDuration     time.Duration `yaml:"maxRetryDuration" json:"maxRetryDuration"`
	// DrainTimeout is how long the samples still pending when the load stops are sent; what
	// is left after it is counted pending, and not read back.
	DrainTimeout time.Duration `yaml:"drainTimeout" json:"drainTimeout"`

	QueryInterval       time.Duration `yaml:"queryInterval" json:"queryInterval"`
	QueryConcurrency    int           `yaml:"queryConcurrency" json:"queryConcurrency"`
	QueryTimeout        time.Duration `yaml:"queryTimeout" json:"queryTimeout"`
	QueryRules          string        `yaml:"queryRules" json:"queryRules,omitempty"`
	RangeQueries        []RangeQuery  `yaml:"rangeQueries" json:"rangeQueries,omitempty"`
	IndexLookupInterval time.Duration `yaml:"indexLookupInterval" json:"indexLookupInterval"`

	ObserveInterval time.Duration `yaml:"observeInterval" json:"observeInterval"`

	VerifySamples int           `yaml:"verifySamples" json:"verifySamples"`
	VerifyDelay   time.Duration `yaml:"verifyDelay" json:"verifyDelay"`
	// VerifyInterval is how often the read-back runs while the load does (verify.go).
	VerifyInterval time.Duration `yaml:"verifyInterval" json:"verifyInterval"`

	Freshness Freshness `yaml:"freshness" json:"freshness"` // the canary series (freshness.go)

	Thresholds []string `yaml:"thresholds" json:"thresholds,omitempty"`
	// CompareThresholds limit how much a figure may change against an older run, checked by
	// `tsbench report compare OLD NEW` with this run as NEW ("query.p99>+20%").
	CompareThresholds []string `yaml:"compareThresholds" json:"compareThresholds,omitempty"`

	RemoteStorages map[string]Storage `yaml:"remoteStorages" json:"remoteStorages"`

	// Series schedules cardinality events and late or out-of-order samples (series.go).
	Series Series `yaml:"series" json:"series,omitzero"`

	ScrapeMode  `yaml:",inline"` // sender, senderURL, exporterURL, exposeTimestamps (sender.go)
	LongRun     `yaml:",inline"` // checkpointInterval (longrun.go)
	SampleTypes `yaml:",inline"` // nativeHistograms, exemplars (samples.go)

	ChartOnly `yaml:",inline" json:"-"` // keys of the prometheus-benchmark chart that do not apply here
	HelmOnly  `yaml:",inline" json:"-"` // keys of tsbench's own Helm chart

	parseWarnings []string // values Parse took differently from the chart
}

// Compression names a snappy block encoder; every receiver decodes both.
type Compression string

const (
	// CompressionFast is s2's snappy-compatible encoder (s2.EncodeSnappy).
	CompressionFast Compression = "fast"
	// CompressionBetter is s2.EncodeSnappyBetter: smaller bodies for more CPU.
	CompressionBetter Compression = "better"
)

// RangeQuery is one dashboard panel, run as a range query every Interval.
type RangeQuery struct {
	Name     string        `yaml:"name" json:"name"`
	Expr     string        `yaml:"expr" json:"expr"`
	Range    time.Duration `yaml:"range" json:"range"`
	Step     time.Duration `yaml:"step" json:"step"`
	Interval time.Duration `yaml:"interval" json:"interval"`
}

// ChartOnly holds the prometheus-benchmark chart's keys that configure its Kubernetes parts
// (vmagent, vmalert, node_exporter pods). They are accepted so a values file loads as it is,
// and each one set is named in a warning.
type ChartOnly struct {
	VMTag             any `yaml:"vmtag" json:"-"`
	DisableMonitoring any `yaml:"disableMonitoring" json:"-"`
	VMAgent           any `yaml:"vmagent" json:"-"`
	VMAlert           any `yaml:"vmalert" json:"-"`
	NodeExporter      any `yaml:"nodeExporter" json:"-"`
	Nginx             any `yaml:"nginx" json:"-"`
	Grafana           any `yaml:"grafana" json:"-"`
	NodeSelector      any `yaml:"nodeSelector" json:"-"`
	Tolerations       any `yaml:"tolerations" json:"-"`
	WriteReplicaMem   any `yaml:"writeReplicaMem" json:"-"`
	WriteReplicaCPU   any `yaml:"writeReplicaCPU" json:"-"`
}

// setKeys names the keys of a struct of chart-only keys (ChartOnly, StorageChartOnly) that
// the file set: the yaml names of its fields that are not nil. The struct's tags are the one
// list of those keys, so the decoder still refuses any other key.
func setKeys(chartOnly any) []string {
	v := reflect.ValueOf(chartOnly)
	var keys []string
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
			keys = append(keys, name)
		}
	}
	return keys
}

// Default returns the embedded default benchmark, without storages: bench adds the local
// VictoriaMetrics and Prometheus when the config names none.
func Default() Config {
	return Config{
		Seed:  1,
		Shard: Shard{Index: 0, Count: 1},
		// One round: the within-run noise ranks the figures that have per-interval values;
		// -rounds 3 ranks every figure with Student's t over the rounds.
		Rounds: 1,
		// An A/A run shows a best on some row in at most 5 % of runs.
		Confidence: 0.95,
		// Long enough for two churn rounds and several query evaluations, short enough to try.
		Duration: 3 * time.Minute,
		// 200 targets × 839 series / 10s ≈ 17k samples/s to each storage: both local storages
		// and the generator fit on a 2-core machine with room to measure them.
		// As captured: the default profile's host was the loaded benchmark machine.
		HostLoad:       1,
		TargetsCount:   200,
		ScrapeInterval: 10 * time.Second,
		// 1% of 200 targets = 2 targets get a new revision every minute ≈ 1.7k new series/min.
		// The chart's default interval is 10m; 1m shows churn within a short run.
		ScrapeConfigUpdatePercent:  1,
		ScrapeConfigUpdateInterval: time.Minute,
		WriteConcurrency:           4,
		// One generator per core tsbench may use: generation is CPU-bound, and more workers
		// than cores only add batches in the making.
		GenerateWorkers: runtime.GOMAXPROCS(0),
		// s2's snappy-compatible encoder: 2.6× the speed of better for ~2% more bytes (docs/benchmarks.md).
		Compression:      CompressionFast,
		WriteReplicas:    1,
		WriteURLReplicas: 1,
		// 5k samples ≈ 5 node_exporter scrapes per request, ~40 KiB compressed.
		MaxSamplesPerRequest: 5000,
		// 10M samples ≈ 220 s of the default load buffered per storage before drops.
		MaxPendingSamples: 10_000_000,
		MaxRetryDuration:  time.Minute,
		DrainTimeout:      30 * time.Second,

		QueryInterval: 10 * time.Second,
		// As the chart's vmalert: 4 rules evaluated at once per storage.
		QueryConcurrency:    4,
		QueryTimeout:        30 * time.Second,
		IndexLookupInterval: 30 * time.Second,

		ObserveInterval: 10 * time.Second,

		VerifySamples: 10_000,
		// 6 checks an hour, ~10k samples and ~20 queries each (docs/long-runs.md): 144 a day.
		VerifyInterval: 10 * time.Minute,

		Freshness: Freshness{
			// Each probe (instant, range, series) asks for each sample 8 times, 100ms to one
			// write interval after its ack, the later samples' polls dense where the earlier
			// showed: figures to a tenth of the delay or 0.2 s, and the same queries per sample
			// on every storage.
			Interval: 100 * time.Millisecond,
			// 0: a sample as seldom as keeps 3 × 8 queries per sample at a tenth of the read
			// load: at the default rules' 6.2 queries/s, one every 38.7 s (0.62 queries/s).
			WriteInterval: 0,
			// VictoriaMetrics' default -search.latencyOffset (30s) shows with room to spare.
			Timeout: 2 * time.Minute,
		},

		// series.haOffset 0: a third of scrapeInterval (HAOffsetOf), which is known only once loaded.
		ScrapeMode: ScrapeMode{Sender: SenderTsbench},
		// Floats only, as captured; the profile's families go classic.
		// No exemplars: exemplar storage is an opt-in feature of Prometheus.
		SampleTypes: SampleTypes{NativeHistograms: NativeHistograms{Send: NativeOff}, Exemplars: Exemplars{Percent: 0}, SendMetadata: false},
		// A killed run loses at most 5 minutes of figures. A checkpoint of the default
		// workload into the two local storages took 0.17–0.68 s (fsync included, on a busy
		// 2-core machine) and writes results.json: 0.2 MB in the first minutes, ~2 MB by
		// 24 h (make soak's fit), so at most 0.23% of the time and ~24 MB an hour.
		LongRun: LongRun{CheckpointInterval: 5 * time.Minute},
	}
}

// Load reads path strictly (an unknown key is an error), fills defaults and validates.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes a YAML document strictly, fills defaults and validates. Every problem is
// reported at once: a key or value that does not decode is an error, named in the words of
// the file (checkKeys), and the rest of the document, which yaml v3 still decodes, is
// validated too.
func Parse(b []byte) (*Config, error) {
	c := Default() // nested structs keep their defaults for keys the document leaves out
	b = zeroDurations(b)
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("parse: %w", sanitize(b, err)) // a syntax error: nothing can be decoded
	}
	decodeErrs, undecoded := checkKeys(&doc)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(&c)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	_, typeErr := errors.AsType[*yaml.TypeError](err)
	switch {
	case err != nil && len(decodeErrs) == 0:
		// The decoder refused what checkKeys let pass: its own words, with key paths.
		return nil, fmt.Errorf("parse: %w", sanitize(b, err))
	case err != nil && !typeErr:
		// The decoder stopped at a value: what follows it was not decoded, nor can be validated.
		return nil, fmt.Errorf("parse: %w", errors.Join(decodeErrs...))
	}
	if c.WriteConcurrency == 0 {
		// The chart's default, 0, leaves the number of connections to vmagent.
		c.WriteConcurrency = Default().WriteConcurrency
		c.parseWarnings = append(c.parseWarnings, fmt.Sprintf("writeConcurrency: 0 (the chart's automatic) uses tsbench's default, %d connections per storage", c.WriteConcurrency))
	}
	for name, st := range c.RemoteStorages {
		if !st.DisableWrite && len(st.WriteURLs()) == 0 && st.ReadURL != "" {
			c.parseWarnings = append(c.parseWarnings, fmt.Sprintf("remoteStorages.%s.writeURL: empty: the storage is only queried, tsbench sends it no writes (as the chart does)", name))
		}
		st.setDefaults() // map values are made by the decoder: default them here
		c.RemoteStorages[name] = st
	}
	problems := c.problems()
	if len(decodeErrs) > 0 {
		// A value that did not decode kept its default: its check would only repeat the error.
		problems = slices.DeleteFunc(problems, func(p error) bool { return underAny(p.Error(), undecoded) })
		parseErr := fmt.Errorf("parse: %w", errors.Join(decodeErrs...))
		if len(problems) == 0 {
			return nil, parseErr
		}
		return nil, errors.Join(parseErr, fmt.Errorf("invalid: %w", errors.Join(problems...)))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("invalid: %w", errors.Join(problems...))
	}
	return &c, nil
}

// Warnings names the keys that were accepted but have no effect here, and the values that
// the chart means differently.
func (c *Config) Warnings() []string {
	const ignored = "key of the prometheus-benchmark chart ignored: tsbench generates the load itself"
	var w []string
	for _, key := range setKeys(c.ChartOnly) {
		w = append(w, fmt.Sprintf("%s: %s", key, ignored))
	}
	for _, key := range setKeys(c.HelmOnly) {
		w = append(w, fmt.Sprintf("%s: %s", key, helmWarning))
	}
	for name, st := range c.RemoteStorages {
		for _, key := range setKeys(st.StorageChartOnly) {
			w = append(w, fmt.Sprintf("remoteStorages.%s.%s: %s", name, key, ignored))
		}
	}
	w = append(w, c.parseWarnings...)
	w = append(w, c.churnWarnings()...)
	slices.Sort(w)
	return w
}

// churnWarnings names a churn setting that makes no churn in this run: an update interval not
// shorter than the run (the chart's 10m with the default 3m duration; the first update is one
// interval after the start), or a percent of targetsCount that rounds to no target (the
// workload churns round(targetsCount × percent / 100) targets of each replica).
func (c *Config) churnWarnings() []string {
	if c.ScrapeConfigUpdatePercent <= 0 {
		return nil
	}
	var w []string
	if c.Duration > 0 && c.ScrapeConfigUpdateInterval >= c.Duration {
		w = append(w, fmt.Sprintf("scrapeConfigUpdateInterval: %s is not shorter than duration (%s): no churn will happen in this run; set it below duration to see series churn",
			ShortDuration(c.ScrapeConfigUpdateInterval), ShortDuration(c.Duration)))
	}
	if math.Round(float64(c.TargetsCount)*c.ScrapeConfigUpdatePercent/100) == 0 && c.TargetsCount > 0 {
		w = append(w, fmt.Sprintf("scrapeConfigUpdatePercent: %g%% of %d targets rounds to 0 targets: no churn will happen; one target is %.3g%%",
			c.ScrapeConfigUpdatePercent, c.TargetsCount, 100/float64(c.TargetsCount)))
	}
	return w
}

// CatchUpSamplesPerSecond is the ingestion rate the history warning assumes of a storage
// catching up: about what the local VictoriaMetrics and Prometheus each take on a 2-core
// machine while tsbench generates for both (docs/history.md).
const CatchUpSamplesPerSecond = 200_000

// HistoryWarnings warns of a history whose catch-up would take longer than duration, for a
// profile of seriesPerTarget series. While a storage catches up at R samples/s, the live load
// (r samples/s) goes on, so catching up history H takes T = H·r / (R − r).
func (c *Config) HistoryWarnings(seriesPerTarget int) []string {
	if c.History <= 0 || c.ScrapeInterval <= 0 {
		return nil
	}
	rate := float64(c.TargetsCount*max(1, c.WriteReplicas)*seriesPerTarget) / c.ScrapeInterval.Seconds()
	samples := rate * c.History.Seconds()
	if rate >= CatchUpSamplesPerSecond {
		return []string{fmt.Sprintf("history: %s at %.0f samples/s (targetsCount × %d series / scrapeInterval) is %.3g samples per storage; "+
			"a storage ingesting %d samples/s never catches up with a live load this large: lower targetsCount or history",
			ShortDuration(c.History), rate, seriesPerTarget, samples, CatchUpSamplesPerSecond)}
	}
	est := time.Duration(c.History.Seconds() * rate / (CatchUpSamplesPerSecond - rate) * float64(time.Second)).Round(time.Second)
	if c.Duration == 0 || est <= c.Duration {
		return nil
	}
	return []string{fmt.Sprintf("history: %s at %.0f samples/s (targetsCount × %d series / scrapeInterval) is %.3g samples per storage; "+
		"at %d samples/s a storage takes about %s to catch up, longer than duration (%s); the run lasts about %s",
		ShortDuration(c.History), rate, seriesPerTarget, samples, CatchUpSamplesPerSecond, est, ShortDuration(c.Duration), est+c.Duration)}
}

// URLReplicas is the number of copies sent to each write URL of the storage name: its own
// writeURLReplicas where set, else the top-level one.
func (c *Config) URLReplicas(name string) int {
	if n := c.RemoteStorages[name].WriteURLReplicas; n > 0 {
		return n
	}
	return c.WriteURLReplicas
}

// StorageNames returns the storages' names in the order they are reported: by name.
func (c *Config) StorageNames() []string {
	return slices.Sorted(maps.Keys(c.RemoteStorages))
}

// Validate reports every problem at once, each with its key path.
func (c *Config) Validate() error {
	return errors.Join(c.problems()...)
}

func (c *Config) problems() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	errs = append(errs, c.runProblems()...)
	if c.TargetsCount < 1 {
		bad("targetsCount", "must be >= 1")
	}
	if c.ScrapeInterval < time.Millisecond {
		bad("scrapeInterval", "must be >= 1ms")
	}
	if c.ScrapeConfigUpdatePercent < 0 || c.ScrapeConfigUpdatePercent > 100 {
		bad("scrapeConfigUpdatePercent", "must be between 0 and 100")
	}
	if c.ScrapeConfigUpdatePercent > 0 && c.ScrapeConfigUpdateInterval < c.ScrapeInterval {
		bad("scrapeConfigUpdateInterval", "must be >= scrapeInterval (%s) when scrapeConfigUpdatePercent > 0", c.ScrapeInterval)
	}
	if c.GenerateWorkers < 1 {
		bad("generateWorkers", "must be >= 1 (default: the cores tsbench may use, %d)", runtime.GOMAXPROCS(0))
	}
	if c.Compression != CompressionFast && c.Compression != CompressionBetter {
		bad("compression", "must be %s or %s, not %q", CompressionFast, CompressionBetter, c.Compression)
	}
	if c.WriteConcurrency < 1 {
		bad("writeConcurrency", "must be >= 1 (0, as in the chart, takes the default, %d)", Default().WriteConcurrency)
	}
	positive := map[string]int{
		"writeReplicas": c.WriteReplicas, "writeURLReplicas": c.WriteURLReplicas,
		"maxSamplesPerRequest": c.MaxSamplesPerRequest, "queryConcurrency": c.QueryConcurrency,
	}
	for _, key := range slices.Sorted(maps.Keys(positive)) {
		if positive[key] < 1 {
			bad(key, "must be >= 1")
		}
	}
	if c.MaxPendingSamples < int64(c.MaxSamplesPerRequest) {
		bad("maxPendingSamples", "must be >= maxSamplesPerRequest (%d)", c.MaxSamplesPerRequest)
	}
	durations := map[string]time.Duration{
		"maxRetryDuration": c.MaxRetryDuration, "drainTimeout": c.DrainTimeout, "queryInterval": c.QueryInterval,
		"queryTimeout": c.QueryTimeout, "observeInterval": c.ObserveInterval,
	}
	for _, key := range slices.Sorted(maps.Keys(durations)) {
		if durations[key] <= 0 {
			bad(key, "must be > 0")
		}
	}
	if c.IndexLookupInterval < 0 {
		bad("indexLookupInterval", "must be >= 0 (0 turns index lookups off)")
	}
	if !(c.HostLoad > 0 && c.HostLoad <= 1) {
		bad("hostLoad", "must be in (0, 1]: 1 is the captured host's load, 0.2 a mostly idle host")
	}
	if c.VerifySamples < 0 {
		bad("verifySamples", "must be >= 0 (0 turns the read-back check off)")
	}
	errs = append(errs, c.verifyProblems()...)
	errs = append(errs, c.scrapeProblems()...)
	errs = append(errs, c.Freshness.problems()...)
	errs = append(errs, c.seriesProblems()...)
	errs = append(errs, c.sampleTypeProblems()...)
	errs = append(errs, c.LongRun.problems()...)
	for i, rq := range c.RangeQueries {
		errs = append(errs, rq.validate(fmt.Sprintf("rangeQueries[%d]", i))...)
	}
	for _, name := range c.StorageNames() {
		st := c.RemoteStorages[name]
		errs = append(errs, st.validate("remoteStorages."+name)...)
	}
	return errs
}

// runProblems are the problems of the run's shape: its duration and rounds, its shards and
// its history.
func (c *Config) runProblems() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.Duration < 0 {
		bad("duration", "must be >= 0 (0 runs until interrupted)")
	}
	if c.Rounds < 1 {
		bad("rounds", "must be >= 1")
	} else if c.Rounds > 1 && c.Duration == 0 {
		bad("rounds", "needs a duration: a round that runs until interrupted has no next round")
	} else if c.Rounds > 1 && !c.StartTime.IsZero() {
		bad("rounds", "cannot be used with startTime: every round would start its schedule at %s, so the second would begin after its own end; drop startTime, or run one round per config",
			c.StartTime.UTC().Format(time.RFC3339))
	}
	if !(c.Confidence > 0 && c.Confidence < 1) {
		bad("confidence", "must be between 0 and 1 (exclusive), e.g. 0.95")
	}
	if err := c.Shard.validate(); err != nil {
		bad("shard", "%v", err)
	} else if c.LeadShard < 0 || c.LeadShard >= c.Shard.Count {
		bad("leadShard", "must be between 0 and %d (shard %s)", c.Shard.Count-1, c.Shard)
	}
	if c.History < 0 {
		bad("history", "must be >= 0 (0 starts the workload's clock now)")
	} else if c.History > 0 && c.History < c.ScrapeInterval {
		bad("history", "%s is shorter than one scrapeInterval (%s): it holds no scrape; set 0, or at least %s",
			ShortDuration(c.History), ShortDuration(c.ScrapeInterval), ShortDuration(c.ScrapeInterval))
	}
	if c.History > 0 && c.ScrapeModeOn() {
		bad("history", "scrape mode serves its targets at the wall clock to an agent that scrapes them live: history needs sender: %s", SenderTsbench)
	}
	if c.History > 0 && c.Shard.Of() > 1 {
		// Each shard would catch up on its own, while the lead shard's query load and rule
		// comparison need every shard's history written.
		bad("history", "not with shards (shard %s): each shard would catch up on its own; run history in one tsbench", c.Shard)
	}
	return errs
}

func (rq RangeQuery) validate(key string) []error {
	var errs []error
	if rq.Name == "" {
		errs = append(errs, fmt.Errorf("%s.name: must be set", key))
	}
	if rq.Expr == "" {
		errs = append(errs, fmt.Errorf("%s.expr: must be set", key))
	}
	if rq.Range <= 0 {
		errs = append(errs, fmt.Errorf("%s.range: must be > 0", key))
	}
	if rq.Step <= 0 {
		errs = append(errs, fmt.Errorf("%s.step: must be > 0", key))
	}
	if rq.Interval <= 0 {
		errs = append(errs, fmt.Errorf("%s.interval: must be > 0", key))
	}
	return errs
}

// ShortDuration writes a duration as a config does: 10m, not 10m0s. A storage's flags and the
// report's time axis are written with it too.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") { // 1m0s → 1m, 1h0m0s → 1h0m
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") { // 1h0m → 1h
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
