package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestGoodConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("testdata/*.good.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no good configs: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := Load(f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// goWords are words of Go and of yaml's decoder that a config error must not say.
var goWords = regexp.MustCompile(`!!\w+|\bconfig\.[A-Z]\w*|time\.Duration|not found in type|cannot unmarshal`)

func TestBadConfigs(t *testing.T) {
	want := map[string][]string{
		"scheme.bad.yaml":              {"remoteStorages.prom.writeURL: scheme must be http or https"},
		"remoteread.bad.yaml":          {"remoteStorages.influxdb.remoteReadURL: scheme must be http or https", "remoteStorages.prom.remoteReadURL: host missing"},
		"unknown-key.bad.yaml":         {"line 1: unknown key targetCount: did you mean targetsCount?"},
		"unknown-storage-key.bad.yaml": {"line 2: unknown key remoteStorages.vm.readUrl: did you mean readURL?"},
		"duration.bad.yaml":            {"line 1: scrapeInterval: want a duration such as 30s or 5m"},
		"hostload.bad.yaml":            {"hostLoad: must be in (0, 1]"},
		"series-ha.bad.yaml": {
			"series.haOffset: must be >= 1ms and (haReplicas - 1) × haOffset below scrapeInterval (10s)",
			"series.haLabels.cluster: set both name and value, or neither",
			"series.haLabels.replica.values: want 3 values (one per replica), got 2",
			"series.haLabels.replica.values: each value must be set and differ from the others",
			"series.haLabels: cluster and replica must be different labels",
		},
		"series.bad.yaml": {
			"series.events.ramp: from and to must be >= 1 targets",
			"series.events.ramp.over: must be >= scrapeInterval (10s)",
			"series.events.spike.factor: must be > 1",
			"series.events.spike: for must be >= scrapeInterval (10s) and every longer than for",
			"series.events.doubleHalve.every: must be >= scrapeInterval (10s)",
			"series.events.podChurn.lifetime: must be >= scrapeInterval (10s)",
			"series.late.by: must be >= 10s",
			"series.outOfOrder.by: must be >= 20s",
			"series.outOfOrder.percent: late.percent + 2 × outOfOrder.percent must be <= 100",
		},
		"native.bad.yaml": {
			`nativeHistograms.send: "sometimes": use false, true or both`,
			"nativeHistograms.schema: 9: must be -4 to 8", "exemplars.percent: 120: must be 0 to 100",
		},
		"native-key.bad.yaml": {"line 1: unknown key nativeHistograms.fromSummary (the keys here: fromSummaries, schema, send)"},
		"metadata.bad.yaml":   {"sendMetadata: applies to sender: tsbench only"},
		"verify-interval.bad.yaml": {
			"verifyDelay: must be >= 0", "verifyInterval: must be >= 0 (0 verifies only at the end)",
		},
		"checkpoint.bad.yaml":   {"checkpointInterval: must be >= 0"},
		"rounds-start.bad.yaml": {"rounds: cannot be used with startTime: every round would start its schedule at 2026-01-02T03:04:05Z"},
		"many.bad.yaml": {
			"targetsCount: must be >= 1",
			"scrapeConfigUpdatePercent: must be between 0 and 100",
			"writeConcurrency: must be >= 1",
			"queryInterval: must be > 0",
			"drainTimeout: must be > 0",
			"remoteStorages.a.writeURL: neither writeURL nor readURL is set",
			"remoteStorages.b.writeURL: host missing",
			"remoteStorages.b.readURL: not an absolute http(s) URL",
		},
		"secrets.bad.yaml": {
			"remoteStorages.vm.writeBearerTokenFile: set either writeBearerToken or writeBearerTokenFile, not both",
			"remoteStorages.vm.basicAuth.username: must be set",
			"remoteStorages.vm.basicAuth.passwordFile: stat testdata/no-such-file: no such file or directory",
			"remoteStorages.vm.tls: certFile and keyFile must be set together",
		},
		"freshness.bad.yaml": {
			"freshness.writeInterval: 100ms is shorter than freshness.interval (1s)",
			"freshness.timeout: 50ms is shorter than freshness.writeInterval (100ms)",
			"remoteStorages.vm.otlpLabels: applies to protocol: otlp-http only, the storage is written in prometheus-rw1",
			`remoteStorages.prom.otlpLabels: must be prometheus (the default), attributes or underscore, not "jobinstance"`,
		},
		"disablewrite.bad.yaml": {"remoteStorages.ro.readURL: must be set when disableWrite is true"},
		"sender.bad.yaml":       {`sender: "telegraf" is not a sender: use one of tsbench, vmagent, prometheus-agent`},
		"scrape-keys.bad.yaml": {
			"senderURL: applies to scrape mode only: set sender: vmagent or sender: prometheus-agent",
			"exposeTimestamps: applies to scrape mode only",
		},
		"scrape-shard.bad.yaml": {"shard: scrape mode runs one tsbench (the agent scrapes its targets)"},
		"exporter.bad.yaml": {
			"exporterURL: scheme must be http or https",
			"exposeTimestamps: has no effect with exporterURL",
		},
		"no-url.bad.yaml": {
			"remoteStorages.forgotten.writeURL: neither writeURL nor readURL is set: set writeURL to write to the storage, readURL to query it, or both",
		},
		"write-path.bad.yaml": {
			`compression: must be fast or better, not "gzip"`,
			"generateWorkers: must be >= 1 (default: the cores tsbench may use",
		},
		"history.bad.yaml":          {"history: 10s is shorter than one scrapeInterval (30s): it holds no scrape; set 0, or at least 30s"},
		"history-negative.bad.yaml": {"history: must be >= 0 (0 starts the workload's clock now)"},
		"history-modes.bad.yaml": {
			"history: scrape mode serves its targets at the wall clock to an agent that scrapes them live: history needs sender: tsbench",
			"history: not with shards (shard 0/2): each shard would catch up on its own; run history in one tsbench",
		},
		"rangequery.bad.yaml": {
			"rangeQueries[0].expr: must be set",
			"rangeQueries[0].step: must be > 0",
			"rangeQueries[0].interval: must be > 0",
		},
		"decode-and-validate.bad.yaml": {
			"line 2: unknown key foo\n",
			"line 5: scrapeInterval: want a duration such as 30s or 5m, not a list",
			"line 11: remoteStorages.prom.writeURL: want a string, not a list",
			"targetsCount: must be >= 1",
			"writeConcurrency: must be >= 1 (0, as in the chart, takes the default, 4)",
			"remoteStorages.vm.writeURL: scheme must be http or https",
			"remoteStorages.vm.writeURLReplicas: must be >= 1",
		},
		"misspelt-keys.bad.yaml": {
			"line 2: unknown key targetCount: did you mean targetsCount?",
			"line 3: unknown key scrapeintervall: did you mean scrapeInterval?",
			"line 4: unknown key freshness.intervall: did you mean interval?",
			"line 5: unknown key foo\n",
			"line 8: unknown key remoteStorages.vm.writeUrl: did you mean writeURL?",
			"line 9: unknown key remoteStorages.vm.tls.certfile: did you mean certFile?",
			"line 10: unknown key remoteStorages.vm.basicAuth.user (the keys here: password, passwordFile, username)",
			"line 11: unknown key remoteStorages.prom.WriteURLReplicas: did you mean writeURLReplicas?",
		},
		"types.bad.yaml": {
			"line 2: seed: want a whole number, 0 or more (this one is out of range)",
			"line 3: writeConcurrency: want a whole number",
			"line 4: hostLoad: want a number",
			"line 5: scrapeInterval: want a duration such as 30s or 5m, not a number without a unit",
			"line 6: thresholds: want a list of strings, not a single value",
			"line 7: shard: want a shard i/n such as 0/3, not a list",
			"line 11: remoteStorages.vm.disableWrite: want true or false",
		},
		"twice.bad.yaml": {
			"line 6: unknown key remoteStorages.vm.readURl: did you mean readURL?",
			"line 10: seed: set twice (first on line 2)",
		},
		"shard.bad.yaml":      {"shard: 3/3: want 0 <= i < n (shards are numbered from 0)"},
		"lead-shard.bad.yaml": {"leadShard: must be between 0 and 1 (shard 0/2)"},
		"start-time.bad.yaml": {`line 1: startTime: "tomorrow" is not an RFC 3339 time (e.g. 2026-11-23T12:00:00Z)`},
		"protocol-headers.bad.yaml": {
			"remoteStorages.mimir.writeHeaders: Content-Encoding is set by the remote_write protocol and cannot be overridden",
			"remoteStorages.mimir.writeHeaders: X-Prometheus-Remote-Write-Version is set by the remote_write protocol",
			"remoteStorages.vm.writeHeaders: Content-Type is set by the remote_write protocol",
			"remoteStorages.vm.writeHeaders: User-Agent is set by the remote_write protocol",
		},
		"protocol.bad.yaml": {
			`remoteStorages.prom.protocol: must be prometheus-rw1 (the default), prometheus-rw2 or otlp-http, not "remote-write-2"`,
			`remoteStorages.otel.otlpCompression: must be gzip (the default) or none, not "zstd"`,
		},
		"header-syntax.bad.yaml": {
			"remoteStorages.vm.writeHeaders: a header name is not a token",
			"remoteStorages.vm.readHeaders: the value of X-Ok has a line break or NUL",
		},
		"secret-echo.bad.yaml": {
			"line 5: remoteStorages.vm.writeHeaders: header 1 of the '^^' list is not name:value",
			"line 6: remoteStorages.vm.readHeaders.X-Api-Key: want a string, not a list",
			"line 7: remoteStorages.vm.basicAuth: want a mapping of password, passwordFile, username, not a single value",
			"remoteStorages.prom.writeHeaders: a header name is not a token",
			"line 11: remoteStorages.prom.readBearerToken: want a string, not a mapping",
			"line 12: remoteStorages.prom.tls: want a mapping of caFile, certFile, insecureSkipVerify, keyFile, not a single value",
			"remoteStorages.url.writeURL: scheme must be http or https",
			"remoteStorages.url.readURL: not an absolute http(s) URL like http://host:port/: invalid port after host",
		},
	}
	// Messages that would repeat a decode error or refuse what is allowed.
	notWant := map[string][]string{
		"decode-and-validate.bad.yaml": {"remoteStorages.prom.writeURL: must be set", "scrapeConfigUpdateInterval"},
		"protocol-headers.bad.yaml":    {"X-Scope-OrgID", "readHeaders"},
		"no-url.bad.yaml":              {"remoteStorages.vm", "disableWrite"},
		"disablewrite.bad.yaml":        {"neither"},
		"misspelt-keys.bad.yaml":       {"foo: did you mean"},
		"types.bad.yaml":               {"writeConcurrency: must be", "hostLoad: must be"},
		"twice.bad.yaml":               {"vm2"},
	}
	files, _ := filepath.Glob("testdata/*.bad.yaml")
	if len(files) != len(want) {
		t.Errorf("%d bad configs in testdata, %d in the table: every bad file needs its messages", len(files), len(want))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := Load(f)
			if err == nil {
				t.Fatal("loaded without error")
			}
			msgs, ok := want[filepath.Base(f)]
			if !ok {
				t.Fatalf("no expected messages for %s; got: %v", f, err)
			}
			for _, m := range msgs {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error lacks %q:\n%v", m, err)
				}
			}
			for _, m := range notWant[filepath.Base(f)] {
				if strings.Contains(err.Error(), m) {
					t.Errorf("error has %q:\n%v", m, err)
				}
			}
			// No error quotes a value that may be a secret: the bad files mark theirs s3cr3t.
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error quotes a secret:\n%v", err)
			}
			// Errors speak YAML, not Go: no Go type, no YAML tag, no decoder's wording.
			if m := goWords.FindString(err.Error()); m != "" {
				t.Errorf("error says %q:\n%v", m, err)
			}
		})
	}
}

func TestShardKeys(t *testing.T) {
	c, err := Load("testdata/shard.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	if !c.StartTime.Equal(want) || c.Shard != (Shard{Index: 2, Count: 3}) || c.LeadShard != 1 || c.Lead() {
		t.Errorf("startTime %s shard %s leadShard %d lead %v; want %s, 2/3, 1, false", c.StartTime, c.Shard, c.LeadShard, c.Lead(), want)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"shard":"2/3"`) || !strings.Contains(string(b), `"startTime":"2026-11-23T12:00:00Z"`) {
		t.Errorf("JSON lacks shard or startTime as written: %s", b)
	}
	for _, bad := range []string{"", "1", "a/3", "1/0", "-1/2", "2/2"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) gave no error", bad)
		}
	}
}

func TestDefaultsFillOmittedKeys(t *testing.T) {
	c, err := Load("testdata/minimal.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := Default()
	d.RemoteStorages = map[string]Storage{"vm": {WriteURL: "http://127.0.0.1:8428/api/v1/write"}}
	if diff := cmp.Diff(d, *c, cmp.AllowUnexported(Config{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestChartValues loads a file shaped as the prometheus-benchmark chart's values.yaml: its
// load keys are taken, its Kubernetes keys are named in warnings.
func TestChartValues(t *testing.T) {
	c, err := Load("testdata/chart-values.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const ignored = ": key of the prometheus-benchmark chart ignored: tsbench generates the load itself"
	want := []string{
		"disableMonitoring" + ignored,
		"nodeSelector" + ignored,
		"remoteStorages.vm.vmagentExtraEnvs" + ignored,
		"remoteStorages.vm.vmagentExtraFlags" + ignored,
		"remoteStorages.vm.vmalertExtraEnvs" + ignored,
		"remoteStorages.vm.vmalertExtraFlags" + ignored,
		// The chart's 10m with tsbench's 3m duration: the case the warning is for.
		"scrapeConfigUpdateInterval: 10m is not shorter than duration (3m): no churn will happen in this run; set it below duration to see series churn",
		"tolerations" + ignored,
		"vmtag" + ignored,
		"writeConcurrency: 0 (the chart's automatic) uses tsbench's default, 4 connections per storage",
		"writeReplicaCPU" + ignored,
		"writeReplicaMem" + ignored,
	}
	if diff := cmp.Diff(want, c.Warnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if c.TargetsCount != 2000 || c.WriteConcurrency != 4 || c.ScrapeConfigUpdateInterval != 10*time.Minute {
		t.Errorf("chart values not taken: %+v", c)
	}
	if got := c.URLReplicas("vm"); got != 2 {
		t.Errorf("URLReplicas(vm) = %d, want the storage's 2", got)
	}
	vm := c.RemoteStorages["vm"]
	if diff := cmp.Diff(Headers{"X-Scope-OrgID": "bench", "X-Team": "perf"}, vm.WriteHeaders); diff != "" {
		t.Errorf("writeHeaders (-want +got):\n%s", diff)
	}
	if vm.ReadHeaders != nil {
		t.Errorf("readHeaders \"\" = %v, want none", vm.ReadHeaders)
	}
}

// TestChartReadOnlyStorage: a storage the chart's way with writeURL "" beside a readURL gets
// no writes (disableWrite) and keeps its reads, and a warning says so; the written one is as
// it was.
func TestChartReadOnlyStorage(t *testing.T) {
	c, err := Load("testdata/chart-readonly.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ro, rw := c.RemoteStorages["vmselect-replica"], c.RemoteStorages["vminsert"]
	if !ro.DisableWrite || len(ro.WriteURLs()) != 0 || ro.ReadURL != "http://127.0.0.1:8491/select/0/prometheus/" {
		t.Errorf("read-only storage: disableWrite %v, write URLs %q, readURL %q; want no writes and its readURL", ro.DisableWrite, ro.WriteURLs(), ro.ReadURL)
	}
	if diff := cmp.Diff(Headers{"X-Team": "perf"}, ro.ReadHeaders); diff != "" {
		t.Errorf("readHeaders (-want +got):\n%s", diff)
	}
	if rw.DisableWrite || len(rw.WriteURLs()) != 1 {
		t.Errorf("written storage: disableWrite %v, write URLs %q", rw.DisableWrite, rw.WriteURLs())
	}
	var got []string
	for _, w := range c.Warnings() {
		if strings.HasPrefix(w, "remoteStorages.vm") && !strings.Contains(w, "chart ignored") || strings.Contains(w, "churn") {
			got = append(got, w)
		}
	}
	want := []string{"remoteStorages.vmselect-replica.writeURL: empty: the storage is only queried, tsbench sends it no writes (as the chart does)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestReadOnlyStorageForms: every way to write a storage that is only queried loads the same.
func TestReadOnlyStorageForms(t *testing.T) {
	for name, doc := range map[string]string{
		"chart's empty writeURL": `{writeURL: "", readURL: "http://127.0.0.1:8481/"}`,
		"writeURL absent":        `{readURL: "http://127.0.0.1:8481/"}`,
		"only commas":            `{writeURL: " , ", readURL: "http://127.0.0.1:8481/"}`,
		"disableWrite":           `{disableWrite: true, readURL: "http://127.0.0.1:8481/"}`,
		"disableWrite with URL":  `{disableWrite: true, writeURL: "http://127.0.0.1:8480/w", readURL: "http://127.0.0.1:8481/"}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Parse([]byte("remoteStorages:\n  ro: " + doc + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !c.RemoteStorages["ro"].DisableWrite {
				t.Error("the storage gets writes")
			}
		})
	}
	// Built in code, without Parse's defaults: Validate still refuses an unwritable storage.
	c := Default()
	c.RemoteStorages = map[string]Storage{"ro": {ReadURL: "http://127.0.0.1:8481/"}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "remoteStorages.ro.writeURL: is empty: set it, or disableWrite: true") {
		t.Errorf("Validate = %v, want the empty writeURL named", err)
	}
}

// TestChurnWarnings: a churn setting that makes no churn in the run is named, with the figures.
func TestChurnWarnings(t *testing.T) {
	const url = "\nremoteStorages: {vm: {writeURL: http://127.0.0.1:8428/api/v1/write}}\n"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"the chart's 10m, tsbench's 3m", "scrapeConfigUpdateInterval: 10m", []string{
			"scrapeConfigUpdateInterval: 10m is not shorter than duration (3m): no churn will happen in this run; set it below duration to see series churn",
		}},
		{"equal to duration", "duration: 5m\nscrapeConfigUpdateInterval: 5m", []string{
			"scrapeConfigUpdateInterval: 5m is not shorter than duration (5m): no churn will happen in this run; set it below duration to see series churn",
		}},
		{"shorter", "duration: 5m\nscrapeConfigUpdateInterval: 4m59s", nil},
		{"run until interrupted", "duration: 0s\nscrapeConfigUpdateInterval: 1h", nil},
		{"churn off", "scrapeConfigUpdatePercent: 0\nscrapeConfigUpdateInterval: 1h", nil},
		{"rounds to 0 targets", "targetsCount: 40\nscrapeConfigUpdatePercent: 1", []string{
			"scrapeConfigUpdatePercent: 1% of 40 targets rounds to 0 targets: no churn will happen; one target is 2.5%",
		}},
		{"rounds up to 1 target", "targetsCount: 50\nscrapeConfigUpdatePercent: 1", nil},
		{"both", "targetsCount: 10\nscrapeConfigUpdatePercent: 0.5\nscrapeConfigUpdateInterval: 1h", []string{
			"scrapeConfigUpdateInterval: 1h is not shorter than duration (3m): no churn will happen in this run; set it below duration to see series churn",
			"scrapeConfigUpdatePercent: 0.5% of 10 targets rounds to 0 targets: no churn will happen; one target is 10%",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.doc + url))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.Warnings()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChartValuesExampleInStep keeps examples/chart-values.yaml the shape of the chart's
// values.yaml, as testdata/chart-values.good.yaml is.
func TestChartValuesExampleInStep(t *testing.T) {
	if diff := cmp.Diff(shape(t, "testdata/chart-values.good.yaml"), shape(t, "../../examples/chart-values.yaml")); diff != "" {
		t.Errorf("keys or value types differ (-testdata +example):\n%s", diff)
	}
}

// shape lists every key path of a YAML file with the kind or tag of its value.
func shape(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			walk(n.Content[0], path)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], path+"."+n.Content[i].Value)
			}
		case yaml.SequenceNode:
			out = append(out, path+" seq")
		default:
			out = append(out, path+" "+n.ShortTag())
		}
	}
	walk(&root, "")
	return out
}

// TestDecodeErrorKeyPaths: a value that does not decode is named by its own key path, also
// in block mappings and sequences, whose first key or item shares the line of its parent, and
// in flow mappings, whose keys share one line.
func TestDecodeErrorKeyPaths(t *testing.T) {
	_, err := Parse([]byte(`remoteStorages:
  prom:
    writeURL: [x]
rangeQueries:
  - name: [x]
    expr: up
  - {name: b, expr: up, range: 1h, step: 15, interval: 1m}
thresholds:
  - ok
  - [nested]
`))
	for _, want := range []string{
		"line 3: remoteStorages.prom.writeURL: want a string, not a list",
		"line 5: rangeQueries[0].name: want a string, not a list",
		"line 7: rangeQueries[1].step: want a duration such as 30s or 5m, not a number without a unit",
		"line 10: thresholds[1]: want a string, not a list",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestURLReplicasDefaultsToTopLevel(t *testing.T) {
	c, err := Parse([]byte(`
writeURLReplicas: 3
remoteStorages:
  a: {writeURL: http://127.0.0.1:1/w}
  b: {writeURL: http://127.0.0.1:2/w, writeURLReplicas: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := c.URLReplicas("a"), c.URLReplicas("b"); a != 3 || b != 1 {
		t.Errorf("URLReplicas a=%d b=%d, want 3 (top level) and 1 (its own)", a, b)
	}
}

// TestHeadersKeepStrictDecoding: Headers decodes itself, and unknown keys beside it, in either
// form, are still refused.
func TestHeadersKeepStrictDecoding(t *testing.T) {
	for name, doc := range map[string]string{
		"string": "remoteStorages:\n  vm:\n    writeHeaders: 'A:1^^B: 2'\n    readUrl: http://x/\n",
		"map":    "remoteStorages:\n  vm:\n    writeHeaders: {A: '1', B: '2'}\n    readUrl: http://x/\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(doc))
			if err == nil || !strings.Contains(err.Error(), "line 4: unknown key remoteStorages.vm.readUrl: did you mean readURL?") {
				t.Errorf("unknown key beside writeHeaders not refused: %v", err)
			}
			var c Config
			dec := yaml.NewDecoder(strings.NewReader(strings.Replace(doc, "readUrl: http://x/", "writeURL: http://x/", 1)))
			dec.KnownFields(true)
			if err := dec.Decode(&c); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Headers{"A": "1", "B": "2"}, c.RemoteStorages["vm"].WriteHeaders); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteConcurrency(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want int
	}{
		{"writeConcurrency: 0", 4},
		{"writeConcurrency: 7", 7},
		{"seed: 2", 4},
	} {
		c, err := Parse([]byte(tc.doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if c.WriteConcurrency != tc.want {
			t.Errorf("%s: writeConcurrency %d, want %d", tc.doc, c.WriteConcurrency, tc.want)
		}
		warned := slices.ContainsFunc(c.Warnings(), func(w string) bool { return strings.HasPrefix(w, "writeConcurrency: 0") })
		if warned != (tc.doc == "writeConcurrency: 0") {
			t.Errorf("%s: warnings %q", tc.doc, c.Warnings())
		}
	}
}

func TestWritePathKeys(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		workers int
		comp    Compression
	}{
		{"seed: 2", runtime.GOMAXPROCS(0), CompressionFast},
		{"generateWorkers: 3\ncompression: better", 3, CompressionBetter},
		{"compression: fast", runtime.GOMAXPROCS(0), CompressionFast},
	} {
		c, err := Parse([]byte(tc.doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if c.GenerateWorkers != tc.workers || c.Compression != tc.comp {
			t.Errorf("%q: generateWorkers %d compression %q, want %d %q", tc.doc, c.GenerateWorkers, c.Compression, tc.workers, tc.comp)
		}
	}
}

func TestWriteURLs(t *testing.T) {
	c, err := Load("testdata/full.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://127.0.0.1:8428/api/v1/write", "http://127.0.0.1:8429/api/v1/write"}
	if diff := cmp.Diff(want, c.RemoteStorages["vm"].WriteURLs()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mimir", "replica", "vm"}, c.StorageNames()); diff != "" {
		t.Errorf("storage order (-want +got):\n%s", diff)
	}
}

func TestRedactedHidesSecrets(t *testing.T) {
	_, err := Parse([]byte(`
remoteStorages:
  vm:
    writeURL: http://user:hunter2@127.0.0.1:8428/api/v1/write
    readURL: http://127.0.0.1:8428/
    writeBearerToken: tok-123
    readBearerToken: tok-456
    basicAuth: {username: bench, password: pw-789}
    writeHeaders: {X-Api-Key: key-abc}
`))
	if err == nil {
		t.Fatal("basic auth with a bearer token must be refused")
	}
	c, err := Parse([]byte(`
remoteStorages:
  vm:
    writeURL: http://user:hunter2@127.0.0.1:8428/api/v1/write
    readURL: http://127.0.0.1:8428/
    basicAuth: {username: bench, password: pw-789}
    writeHeaders: {X-Api-Key: key-abc}
  prom:
    writeURL: http://127.0.0.1:9090/api/v1/write
    writeBearerToken: tok-123
    readBearerToken: tok-456
`))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Redacted()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "tok-123", "tok-456", "pw-789", "key-abc"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("redacted config contains %q: %s", secret, b)
		}
	}
	if c.RemoteStorages["prom"].WriteBearerToken != "tok-123" {
		t.Error("Redacted changed the original config")
	}
}

// TestExamplesLoad keeps every config under examples/ valid.
func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := Load(f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRedactedSecretsFile: no secret of testdata/secrets.good.yaml (each contains s3cr3t) nor
// of the token file it names reaches the JSON of the redacted config; the rest stays.
func TestRedactedSecretsFile(t *testing.T) {
	c, err := Load("testdata/secrets.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	orig, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(orig), "s3cr3t"); n != 16 {
		t.Fatalf("unredacted config has %d secrets, want 16: %s", n, orig)
	}
	b, err := json.Marshal(c.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	token, err := os.ReadFile("testdata/token.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cr3t", strings.TrimSpace(string(token))} {
		if strings.Contains(string(b), secret) {
			t.Errorf("redacted config contains %q: %s", secret, b)
		}
	}
	for _, kept := range []string{"db=tsbench", "u=admin", "extra_label=a%3Db", "testdata/token.txt", `"username":"bench"`} {
		if !strings.Contains(string(b), kept) {
			t.Errorf("redacted config lacks %q: %s", kept, b)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8086/api/v1/prom/write?db=x&u=admin&p=hunter2": "http://127.0.0.1:8086/api/v1/prom/write?db=x&u=admin&p=<secret>",
		"http://u:pw@h/w?API_KEY=1&apiKey=2&Key=3&keys=4":                "http://u:xxxxx@h/w?API_KEY=<secret>&apiKey=<secret>&Key=<secret>&keys=4",
		"http://h/?access_token=a&secret=b&token=c&password=d&pass=e":    "http://h/?access_token=<secret>&secret=<secret>&token=<secret>&password=<secret>&pass=e",
		"http://h/?p%61ssword=a&p":                                       "http://h/?password=<secret>&p=<secret>",
		"http://h/?extra_label=url_replica%3D1":                          "http://h/?extra_label=url_replica%3D1",
	} {
		if got := RedactURL(raw); got != want {
			t.Errorf("RedactURL(%s) = %s, want %s", raw, got, want)
		}
	}
}

// TestHelmValuesLoadWithWarnings: a values file of tsbench's chart is a config; the chart's
// own keys are each named in a warning, the rest is the benchmark.
func TestHelmValuesLoadWithWarnings(t *testing.T) {
	c, err := Load("../../examples/helm-10m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.TargetsCount != 119_200 || c.MaxPendingSamples != 25_000_000 {
		t.Errorf("targetsCount %d maxPendingSamples %d: the config keys were not read", c.TargetsCount, c.MaxPendingSamples)
	}
	w := strings.Join(c.Warnings(), "\n")
	for _, key := range []string{"shards", "image", "startDelay", "samplesPerCore", "cpuHeadroom"} {
		if !strings.Contains(w, key+": "+helmWarning) {
			t.Errorf("no warning for %s in:\n%s", key, w)
		}
	}
}

// TestHistoryWarnings checks the catch-up estimate: 200 targets × 839 series / 10s = 16780
// samples/s live; catching up 6h at 200k samples/s takes 6h × 16780 / (200000 − 16780) ≈
// 32m58s, longer than 3m; 10m takes about 55s, shorter than 3m; a live load as large as the
// assumed catch-up rate never catches up.
func TestHistoryWarnings(t *testing.T) {
	tests := []struct {
		name    string
		history time.Duration
		targets int
		want    []string
	}{
		{"none", 0, 200, nil},
		{"short", 10 * time.Minute, 200, nil},
		{"long", 6 * time.Hour, 200, []string{"history: 6h at 16780 samples/s (targetsCount × 839 series / scrapeInterval) is 3.62e+08 samples per storage; " +
			"at 200000 samples/s a storage takes about 32m58s to catch up, longer than duration (3m); the run lasts about 35m58s"}},
		{"never", time.Hour, 2400, []string{"history: 1h at 201360 samples/s (targetsCount × 839 series / scrapeInterval) is 7.25e+08 samples per storage; " +
			"a storage ingesting 200000 samples/s never catches up with a live load this large: lower targetsCount or history"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.History, c.TargetsCount = tc.history, tc.targets
			if diff := cmp.Diff(tc.want, c.HistoryWarnings(839)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestZeroDuration: a plain 0 loads as a zero duration (yaml v3 takes durations only as
// strings), and a later error still names its own line.
func TestZeroDuration(t *testing.T) {
	c, err := Parse([]byte("duration: 0\nhistory: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Duration != 0 || c.History != 0 {
		t.Errorf("duration %s, history %s, want 0 and 0", c.Duration, c.History)
	}
	_, err = Parse([]byte("duration: 0\ntargetsCount: many\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2: targetsCount:") {
		t.Errorf("error %v, want one naming line 2: targetsCount", err)
	}
	// Nested durations take a plain 0 as the top-level ones do (issue 31: freshness:
	// {interval: 0} was refused), in flow and block style.
	for _, doc := range []string{"freshness: {interval: 0}\n", "freshness:\n  interval: 0\n"} {
		c, err := Parse([]byte(doc))
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		if c.Freshness.Interval != 0 {
			t.Errorf("%q: freshness.interval %s, want 0", doc, c.Freshness.Interval)
		}
	}
	// Two on one line, in a list: each rewritten at its own column; a plain 0 of another type
	// and a 0 inside a string stay as they are.
	in := "rangeQueries: [{name: a, expr: up, range: 0, step: 0, interval: 0}]\ntargetsCount: 0\nqueryRules: \"0\"\n"
	want := "rangeQueries: [{name: a, expr: up, range: 0s, step: 0s, interval: 0s}]\ntargetsCount: 0\nqueryRules: \"0\"\n"
	if got := string(zeroDurations([]byte(in))); got != want {
		t.Errorf("zeroDurations:\n%s\nwant\n%s", got, want)
	}
}
