package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// prometheusSettings is what tsbench knows of Prometheus' settings: its retention from
// /api/v1/status/flags and its out-of-order window, a config file key, from
// /api/v1/status/config, both under its readURL.
func prometheusSettings() Family {
	return Family{Kind: KindPrometheus, readSettings: readPrometheus, warnSettings: prometheusWarnings}
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
