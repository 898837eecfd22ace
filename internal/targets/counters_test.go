package targets

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
)

func readCounters(t *testing.T, sender, page string, remotes []Remote) *Counters {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, page) }))
	defer srv.Close()
	c, err := ReadCounters(context.Background(), srv.Client(), srv.URL+"/metrics", sender, remotes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPrometheusAgentCounters: samples_total counts every attempt, so acked is it less the
// retried and failed; the samples read from the WAL but not yet queued are unexplained until
// the agent drains.
func TestPrometheusAgentCounters(t *testing.T) {
	page := `# TYPE prometheus_remote_storage_samples_in_total counter
prometheus_remote_storage_samples_in_total 6000
prometheus_remote_storage_samples_total{remote_name="a",url="u"} 5600
prometheus_remote_storage_samples_retried_total{remote_name="a",url="u"} 100
prometheus_remote_storage_samples_failed_total{remote_name="a",url="u"} 50
prometheus_remote_storage_samples_dropped_total{remote_name="a",url="u"} 0
prometheus_remote_storage_samples_pending{remote_name="a",url="u"} 500
prometheus_remote_storage_samples_total{remote_name="b_0",url="u"} 5800
prometheus_remote_storage_samples_pending{remote_name="b_0",url="u"} 100
prometheus_remote_storage_samples_total{remote_name="b_1",url="u"} 6000
`
	c := readCounters(t, config.SenderPrometheusAgent, page, []Remote{{Storage: "a", Name: "a"}, {Storage: "b", Name: "b_0"}, {Storage: "b", Name: "b_1"}})
	want := &Counters{Appended: 6000, Storages: map[string]*Account{
		"a": {In: 6000, Acked: 5450, Dropped: map[string]int64{"failed": 50}, Pending: 500, Retried: 100, Known: true},
		"b": {In: 12000, Acked: 11800, Dropped: map[string]int64{}, Pending: 100, Known: true},
	}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
	if got := c.Storages["a"].Unexplained(); got != 0 {
		t.Errorf("a: unexplained %d, want 0", got)
	}
	if got := c.Storages["b"].Unexplained(); got != 100 {
		t.Errorf("b: unexplained %d, want the 100 samples not yet read from the WAL", got)
	}
}

// TestVMAgentCounters: vmagent names remotes by position; its account is known in samples
// only when nothing is pending, buffered or dropped as packets.
func TestVMAgentCounters(t *testing.T) {
	page := `vm_promscrape_scraped_samples_sum 3042
vm_promscrape_scraped_samples_count 6
vmagent_remotewrite_global_rows_pushed_before_relabel_total 3078
vmagent_remotewrite_rows_pushed_after_relabel_total{path="p1", url="1:secret-url"} 3078
vmagent_remotewrite_rows_pushed_after_relabel_total{path="p2", url="2:secret-url"} 3078
vmagent_remotewrite_pending_data_bytes{path="p2", url="2:secret-url"} 512
vmagent_remotewrite_block_size_rows_sum 6156
vmagent_remotewrite_block_size_rows_count 12
vmagent_remotewrite_retries_count_total{url="2:secret-url"} 3
`
	c := readCounters(t, config.SenderVMAgent, page, []Remote{{Storage: "vm", Name: "vm"}, {Storage: "prom", Name: "prom"}})
	scraped, timedOut := int64(3042), int64(0)
	want := &Counters{Scraped: &scraped, ScrapesTimedOut: &timedOut, Appended: 3078, Storages: map[string]*Account{
		"vm": {In: 3078, Acked: 3078, Dropped: map[string]int64{}, Known: true},
		"prom": {
			In: 3078, Acked: 3078, Dropped: map[string]int64{}, Retried: 3, PendingBytes: 512,
			Why: "512 bytes and 0 blocks pending (vmagent counts pending data in bytes, not samples)",
		},
	}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
	// Rows not yet put in blocks: no account is known.
	page2 := `vmagent_remotewrite_rows_pushed_after_relabel_total{url="1:secret-url"} 100
vmagent_remotewrite_block_size_rows_sum 90
`
	c = readCounters(t, config.SenderVMAgent, page2, []Remote{{Storage: "vm", Name: "vm"}})
	if a := c.Storages["vm"]; a.Known || a.Why != "10 samples in vmagent's buffers, not yet in blocks" {
		t.Errorf("buffered rows: known %t, why %q", a.Known, a.Why)
	}
}
