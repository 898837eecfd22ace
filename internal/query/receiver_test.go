package query

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
)

// TestIndexLookupsInTheReceiver runs the query load's index lookups (indexLookups: series,
// label names, label values) once against Prometheus' in-process receiver holding a node
// exporter's series of each kind they select: each answers, with the series or names its
// matchers pick out of what was written. Before the receiver served its index every one was
// answered 404.
func TestIndexLookupsInTheReceiver(t *testing.T) {
	r := storagetest.StartT(t, storagetest.Options{})
	now := time.Now()
	var wr prompb.WriteRequest
	add := func(name, instance string, kv ...string) {
		ls := []prompb.Label{{Name: "__name__", Value: name}, {Name: "instance", Value: instance}, {Name: "job", Value: "node_exporter"}}
		for i := 0; i < len(kv); i += 2 {
			ls = append(ls, prompb.Label{Name: kv[i], Value: kv[i+1]})
		}
		wr.Timeseries = append(wr.Timeseries, prompb.TimeSeries{Labels: ls, Samples: []prompb.Sample{{Value: 1, Timestamp: now.Add(-time.Minute).UnixMilli()}}})
	}
	const h1, h2 = "host-000001:9100", "host-000002:9100"
	add("node_load1", h1)
	add("node_cpu_seconds_total", h1, "cpu", "0", "mode", "idle")
	add("node_cpu_seconds_total", h1, "cpu", "1", "mode", "idle")
	add("node_cpu_seconds_total", h1, "cpu", "1", "mode", "user")
	add("node_cpu_seconds_total", h1, "cpu", "10", "mode", "user")
	add("node_filesystem_avail_bytes", h1, "fstype", "ext4")
	add("node_filesystem_avail_bytes", h1, "fstype", "tmpfs")
	add("node_network_up", h1, "device", "eth0")
	add("node_disk_io_time_seconds_total", h1, "device", "sda")
	add("node_disk_io_time_seconds_total", h1, "device", "zram0")
	add("node_uname_info", h1, "nodename", "a")
	add("node_uname_info", h2, "nodename", "b")
	add("node_network_receive_bytes_total", h1, "device", "eth0")
	add("node_network_receive_bytes_total", h1, "device", "lo")
	add("node_network_receive_bytes_total", h2, "device", "eth1")
	add("node_filesystem_size_bytes", h1, "fstype", "ext4", "mountpoint", "/")
	add("node_filesystem_size_bytes", h1, "fstype", "tmpfs", "mountpoint", "/run")
	b, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, r.URL+storagetest.WritePath, bytes.NewReader(snappy.Encode(nil, b)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("write: %s", resp.Status)
	}

	client, err := storage.NewClient("receiver", config.Storage{ReadURL: r.URL + "/"}, storage.Read, 3)
	if err != nil {
		t.Fatal(err)
	}
	api := NewAPI(client, r.URL+"/")
	got := map[string]string{}
	for _, q := range indexLookups(time.Second) {
		out := (&Runner{}).send(t.Context(), api, &q, now)
		got[q.Name] = fmt.Sprint(out.series, " found")
		if out.err != nil {
			got[q.Name] = "error: " + strings.SplitN(out.err.Error(), "\n", 2)[0]
		}
	}
	want := map[string]string{
		"series_exact":              "1 found", // node_load1
		"series_exact_instance":     "2 found", // cpu 0 and 1, idle
		"series_negative":           "1 found", // ext4
		"series_regex_any":          "1 found", // eth0
		"series_regex_prefix":       "1 found", // cpu 10, not 1
		"series_regex_negative":     "1 found", // sda
		"labels_all":                "9 found", // __name__ cpu device fstype instance job mode mountpoint nodename
		"labels_of_metric":          "4 found", // __name__ instance job nodename
		"label_values_metric_names": "8 found",
		"label_values_instance":     "2 found",
		"label_values_device":       "2 found", // eth0 and lo on host 1
		"label_values_mountpoint":   "1 found", // /
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lookups (-want +got):\n%s", diff)
	}
}
