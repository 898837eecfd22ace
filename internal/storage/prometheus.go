package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// KindPrometheus is Prometheus, as a remote-write receiver.
const KindPrometheus = "prometheus"

// Prometheus is what tsbench knows of Prometheus (2.x and 3.x) and of its TSDB, which
// Thanos receive embeds: a Thanos receive exposes the same metric names (per tenant, as far
// as we know: not confirmed) and answers with the same messages. Its settings are its
// retention from /api/v1/status/flags and its out-of-order window, a config file key, from
// /api/v1/status/config, both under its readURL.
func (families) Prometheus() Family {
	return Family{
		Kind: KindPrometheus, Order: 20, MetricPrefix: "prometheus_tsdb_", Default: true, RetentionDays: 15,
		Local:   promLocal(),
		Version: []VersionLabel{{Metric: "prometheus_build_info", Label: "version"}, {Metric: "thanos_build_info", Label: "version"}},
		// The WAL and head-chunk gauges came in Prometheus 2.43 (prometheus/prometheus#12013):
		// 2.42 exposes only the blocks, 0 until the first compaction, while its WAL grows. The
		// out-of-order WBL exists only when enabled.
		Disk: DiskGroup{
			Required: []string{"prometheus_tsdb_storage_blocks_bytes", "prometheus_tsdb_wal_storage_size_bytes", "prometheus_tsdb_head_chunks_storage_size_bytes"},
			Optional: []string{"prometheus_tsdb_out_of_order_wbl_storage_size_bytes"},
			Missing: "not exposed (Prometheus before 2.43 gives only its blocks' size): its WAL and head chunks are not counted; " +
				"set dataDir to the storage's data directory, or run Prometheus 2.43 or newer",
		}.Read,
		Ingested:      []Selector{{Name: "prometheus_tsdb_head_samples_appended_total"}}, // every type (float, histogram) and tenant
		Series:        &Selector{Name: "prometheus_tsdb_head_series"},
		SeriesCreated: "prometheus_tsdb_head_series_created_total",
		// Needs --web.enable-admin-api; it has no API to delete a snapshot: its dir goes.
		Snapshot: &Snapshot{Create: promSnapshot, Delete: func(_ context.Context, _ Call, _, dir string) error {
			return os.RemoveAll(dir)
		}},
		ExactFloats:  true, // XOR chunks keep a float's bits
		Limits:       promLimits(),
		readSettings: readPrometheus, warnSettings: prometheusWarnings,
	}
}

// promSampleTypes: Prometheus takes native histograms only with
// --enable-feature=native-histograms (2.40 to 3.7; later versions ignore the flag) and keeps
// exemplars only with --enable-feature=exemplar-storage.
func promSampleTypes(native, exemplars bool) []string {
	var features []string
	if native {
		features = append(features, "native-histograms")
	}
	if exemplars {
		features = append(features, "exemplar-storage")
	}
	if len(features) == 0 {
		return nil
	}
	return []string{"--enable-feature=" + strings.Join(features, ",")}
}

func promSnapshot(ctx context.Context, call Call) (string, error) {
	var body struct {
		Status string
		Error  string
		Data   struct{ Name string }
	}
	err := call(ctx, http.MethodPost, "api/v1/admin/tsdb/snapshot", &body)
	if err == nil && body.Status != "success" {
		err = fmt.Errorf("admin/tsdb/snapshot: status %q %s (is --web.enable-admin-api set?)", body.Status, body.Error)
	}
	return body.Data.Name, err
}

// promLimits are Prometheus' TSDB's (storage.ErrOutOfOrderSample, ErrOutOfBounds,
// ErrTooOldSample), as Prometheus' receiver, Thanos receive and Cortex' ingesters answer it.
func promLimits() []Limit {
	const ooo = "Prometheus: storage.tsdb.out_of_order_time_window in its config file; " +
		"Thanos receive: --tsdb.out-of-order.time-window; Cortex: -ingester.out-of-order-time-window"
	return []Limit{
		{Name: "out-of-order samples", Family: "Prometheus TSDB", Match: `out of order sample`, Raise: ooo},
		{
			Name: "samples older than the head", Family: "Prometheus TSDB", Match: `out of bounds|too old sample`,
			Raise: ooo + "; or start the storage empty",
		},
	}
}

// promDefaultRetention is what Prometheus keeps when neither a retention time nor a size is
// set: --storage.tsdb.retention.time=0s means 15d then.
const promDefaultRetention = "15d"

func readPrometheus(ctx context.Context, c *Client, readURL string) ([]Setting, error) {
	u := readURL + "api/v1/status/flags"
	b, err := getPage(ctx, c, u)
	if err != nil {
		return nil, err
	}
	var flags struct {
		Status string            `json:"status"`
		Data   map[string]string `json:"data"`
	}
	if err := json.Unmarshal(b, &flags); err != nil || flags.Status != "success" {
		return nil, fmt.Errorf("GET %s: not the Prometheus API's flags", u)
	}
	retention, ok := flags.Data["storage.tsdb.retention.time"]
	if !ok {
		return nil, fmt.Errorf("GET %s: no storage.tsdb.retention.time", u)
	}
	if (retention == "0s" || retention == "") && flags.Data["storage.tsdb.retention.size"] == "0B" {
		retention = promDefaultRetention
	}
	out := []Setting{{Name: "storage.tsdb.retention.time", Value: retention, Flag: "--storage.tsdb.retention.time=" + retention}}
	if w, ok := promOutOfOrderWindow(ctx, c, readURL); ok {
		out = append(out, Setting{Name: "out_of_order_time_window", Value: w, Flag: "storage.tsdb.out_of_order_time_window: " + w})
	}
	return out, nil
}

// promOutOfOrderWindow is storage.tsdb.out_of_order_time_window of the config Prometheus
// loaded, "0s" when it has none (2.39 and later); false when its config cannot be read.
func promOutOfOrderWindow(ctx context.Context, c *Client, readURL string) (string, bool) {
	b, err := getPage(ctx, c, readURL+"api/v1/status/config")
	if err != nil {
		return "", false
	}
	var answer struct {
		Data struct {
			YAML string `json:"yaml"`
		} `json:"data"`
	}
	var conf struct {
		Storage struct {
			TSDB struct {
				Window string `yaml:"out_of_order_time_window"`
			} `yaml:"tsdb"`
		} `yaml:"storage"`
	}
	if json.Unmarshal(b, &answer) != nil || yaml.Unmarshal([]byte(answer.Data.YAML), &conf) != nil {
		return "", false
	}
	if conf.Storage.TSDB.Window == "" {
		return "0s", true
	}
	return conf.Storage.TSDB.Window, true
}

func prometheusWarnings(v map[string]string, c Checks) []string {
	var w []string
	if d, ok := promDuration(v["storage.tsdb.retention.time"]); ok && d > 0 && c.Span > d {
		w = append(w, fmt.Sprintf("--storage.tsdb.retention.time=%s keeps %s of data, and the run's oldest data will be %s old at its end (history + duration): Prometheus drops the older, which the read-back counts missing",
			v["storage.tsdb.retention.time"], shortDuration(d), shortDuration(c.Span)))
	}
	if window, ok := v["out_of_order_time_window"]; ok && c.HeldBy > 0 {
		if d, ok := promDuration(window); ok && d < c.HeldBy {
			w = append(w, fmt.Sprintf("storage.tsdb.out_of_order_time_window: %s is shorter than series.outOfOrder.by (%s): Prometheus refuses the samples held back (HTTP 400); set it to at least %s in its config file",
				window, shortDuration(c.HeldBy), shortDuration(c.HeldBy)))
		}
	}
	return w
}

// promDuration parses Prometheus' durations (15d, 1w, 2h30m), as model.ParseDuration does.
func promDuration(s string) (time.Duration, bool) {
	d, err := model.ParseDuration(s)
	return time.Duration(d), err == nil
}

// promLocal starts prometheus as a remote-write receiver, with its admin API for snapshots.
func promLocal() *Local {
	return &Local{
		Binary: "prometheus", Package: "prometheus", ReadyPath: "/-/ready",
		Args: func(p Place) ([]string, error) {
			cfg := filepath.Join(p.WorkDir, "prometheus.yml")
			// No scrape configs: every sample comes over remote write. No out-of-order
			// window either (storage.tsdb.out_of_order_time_window, a config file key
			// only): history comes in time order within a bound well inside the hour its
			// head accepts (remotewrite's catchUpSkew), and a window would put the
			// samples through the out-of-order head and its log, not what a default
			// Prometheus does with the live load.
			if err := os.WriteFile(cfg, []byte("global: {}\n"), 0o644); err != nil {
				return nil, err
			}
			return []string{"--config.file=" + cfg, "--storage.tsdb.path=" + p.DataDir, "--web.listen-address=" + p.Addr}, nil
		},
		Flags:         []string{"--web.enable-remote-write-receiver", "--web.enable-admin-api"},
		RetentionFlag: "--storage.tsdb.retention.time=",
		SampleTypes:   promSampleTypes,
	}
}
