package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/storage"
)

// TestMergeSettings: the settings read from a storage tsbench started follow the flags it was
// given, each name once (the given flag is what it was started with).
func TestMergeSettings(t *testing.T) {
	given := []string{"-search.latencyOffset=0s", "-search.maxSeries=10000000", "-retentionPeriod=31d"}
	read := []storage.Setting{
		{Name: "dedup.minScrapeInterval", Value: "0s", Flag: "-dedup.minScrapeInterval=0s"},
		{Name: "retentionPeriod", Value: "31d", Flag: "-retentionPeriod=31d"},
		{Name: "search.latencyOffset", Value: "0s", Flag: "-search.latencyOffset=0s"},
	}
	want := []string{"-search.latencyOffset=0s", "-search.maxSeries=10000000", "-retentionPeriod=31d", "-dedup.minScrapeInterval=0s"}
	if diff := cmp.Diff(want, mergeSettings(given, read)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"-search.latencyOffset=0s", "-search.maxSeries=10000000", "-retentionPeriod=31d"}, given); diff != "" {
		t.Errorf("the given flags changed (-want +got):\n%s", diff)
	}
	prom := []storage.Setting{{Name: "storage.tsdb.retention.time", Value: "15d", Flag: "--storage.tsdb.retention.time=15d"}}
	if diff := cmp.Diff([]string{"--storage.tsdb.retention.time=15d"}, mergeSettings([]string{"--storage.tsdb.retention.time=15d"}, prom)); diff != "" {
		t.Errorf("Prometheus (-want +got):\n%s", diff)
	}
}
