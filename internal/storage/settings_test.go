package storage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
)

// fakeStorage serves pages by path, each answer a status and a body; every other path is a
// 404, as VictoriaMetrics answers an API it lacks with a 400.
func fakeStorage(t *testing.T, pages map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no auth", http.StatusUnauthorized)
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.Error(w, "unsupported path requested: "+r.URL.Path, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// vmMetrics is a VictoriaMetrics 1.79 /metrics page's flag metrics, as -dedup.minScrapeInterval=10s
// sets them.
const vmMetrics = `vm_rows{type="storage/big"} 0
flag{name="dedup.minScrapeInterval", value="10s", is_set="true"} 1
flag{name="httpListenAddr", value=":8428", is_set="false"} 1
flag{name="retentionPeriod", value="1", is_set="false"} 1
flag{name="search.latencyOffset", value="30s", is_set="false"} 1
`

// TestReadSettings reads each family's settings from fakes of their pages, the kind found
// by asking each family in turn, through the read side's auth.
func TestReadSettings(t *testing.T) {
	promFlags := `{"status":"success","data":{"storage.tsdb.retention.time":"0s","storage.tsdb.retention.size":"0B","web.enable-admin-api":"false"}}`
	tests := []struct {
		name     string
		pages    map[string]string
		path     string // of readURL
		kind     Kind   // given
		wantKind Kind
		want     []Setting
		wantErr  []string
	}{
		{
			name: "VictoriaMetrics' flag metrics", pages: map[string]string{"/metrics": vmMetrics}, path: "/",
			wantKind: KindVictoriaMetrics, want: []Setting{
				{"dedup.minScrapeInterval", "10s", "-dedup.minScrapeInterval=10s"},
				{"retentionPeriod", "1", "-retentionPeriod=1"},
				{"search.latencyOffset", "30s", "-search.latencyOffset=30s"},
			},
		},
		{
			name: "a vmselect's flag metrics at its host's root", pages: map[string]string{"/metrics": vmMetrics}, path: "/select/0/prometheus/",
			kind: KindVictoriaMetrics, wantKind: KindVictoriaMetrics, want: []Setting{
				{"dedup.minScrapeInterval", "10s", "-dedup.minScrapeInterval=10s"},
				{"retentionPeriod", "1", "-retentionPeriod=1"},
				{"search.latencyOffset", "30s", "-search.latencyOffset=30s"},
			},
		},
		{
			name: "VictoriaMetrics' /flags: the flags set, the others at their defaults", path: "/",
			pages:    map[string]string{"/flags": "-httpListenAddr=\"127.0.0.1:8428\"\n-retentionPeriod=\"2w\"\n"},
			wantKind: KindVictoriaMetrics, want: []Setting{
				{"dedup.minScrapeInterval", "0s", "-dedup.minScrapeInterval=0s"},
				{"retentionPeriod", "2w", "-retentionPeriod=2w"},
				{"search.latencyOffset", "30s", "-search.latencyOffset=30s"},
			},
		},
		{
			name: "Prometheus: retention 0s is its default 15d; the window from its config", path: "/",
			pages: map[string]string{
				"/api/v1/status/flags":  promFlags,
				"/api/v1/status/config": `{"status":"success","data":{"yaml":"global:\n  scrape_interval: 1m\nstorage:\n  tsdb:\n    out_of_order_time_window: 10m\n"}}`,
			},
			wantKind: KindPrometheus, want: []Setting{
				{"storage.tsdb.retention.time", "15d", "--storage.tsdb.retention.time=15d"},
				{"out_of_order_time_window", "10m", "storage.tsdb.out_of_order_time_window: 10m"},
			},
		},
		{
			name: "Prometheus without a window in its config, and its /flags page is its web UI", path: "/",
			pages: map[string]string{
				"/api/v1/status/flags":  `{"status":"success","data":{"storage.tsdb.retention.time":"90d","storage.tsdb.retention.size":"0B"}}`,
				"/api/v1/status/config": `{"status":"success","data":{"yaml":"global:\n  scrape_interval: 1m\n"}}`,
				"/flags":                "<!doctype html><html></html>",
			},
			wantKind: KindPrometheus, want: []Setting{
				{"storage.tsdb.retention.time", "90d", "--storage.tsdb.retention.time=90d"},
				{"out_of_order_time_window", "0s", "storage.tsdb.out_of_order_time_window: 0s"},
			},
		},
		{
			name: "neither: each attempt named", path: "/", pages: map[string]string{"/flags": "<!doctype html>"},
			wantErr: []string{"as prometheus: GET http://", "/api/v1/status/flags: HTTP 400", "as victoriametrics: GET", "/metrics: HTTP 400", "/flags: no -flag=value lines"},
		},
		{
			name: "a kind tsbench does not read", path: "/", kind: KindInfluxDB, pages: map[string]string{"/metrics": vmMetrics},
			wantErr: []string{`storage kind "influxdb": tsbench reads the settings of victoriametrics and prometheus only`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readURL := fakeStorage(t, tt.pages) + tt.path
			c, err := NewClient("s", config.Storage{ReadURL: readURL, ReadBearerToken: "tok", WriteBearerToken: "wrong"}, Read, 1)
			if err != nil {
				t.Fatal(err)
			}
			kind, got, err := ReadSettings(context.Background(), c, readURL, tt.kind)
			for _, want := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want it to say %q", err, want)
				}
			}
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatal(err)
			}
			if kind != tt.wantKind {
				t.Errorf("kind %q, want %q", kind, tt.wantKind)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSettingsWarnings: a setting warns only when it hides data from a check the config
// runs, naming the setting, the margin it passes and what to change.
func TestSettingsWarnings(t *testing.T) {
	def := config.Default() // read-back and probes 3 s after the load, the canary on
	def.Duration = 20 * time.Second
	noChecks := def
	noChecks.VerifySamples, noChecks.Freshness.Interval = 0, 0
	long := def
	long.History = 40 * 24 * time.Hour
	canaryOnly := noChecks
	canaryOnly.Freshness = def.Freshness // its timeout 2m
	ooo := def
	ooo.Series.OutOfOrder = config.Held{Percent: 1, By: 30 * time.Second}
	vm := func(offset, dedup, retention string) []Setting {
		return []Setting{{Name: "search.latencyOffset", Value: offset}, {Name: "dedup.minScrapeInterval", Value: dedup}, {Name: "retentionPeriod", Value: retention}}
	}
	prom := func(retention, window string) []Setting {
		return []Setting{{Name: "storage.tsdb.retention.time", Value: retention}, {Name: "out_of_order_time_window", Value: window}}
	}
	tests := []struct {
		name     string
		kind     Kind
		settings []Setting
		cfg      config.Config
		want     []string // each a substring of one warning, in order
	}{
		{"VictoriaMetrics as tsbench starts it", KindVictoriaMetrics, vm("0s", "0s", "31d"), def, nil},
		{"VictoriaMetrics' default offset", KindVictoriaMetrics, vm("30s", "0s", "1"), def, []string{
			"-search.latencyOffset=30s hides each series' newest 30s from instant and range queries, longer than the 3s the probes wait after the load: the probes of the newest data (instant query in the newest minute, time(), timestamps) are answered as of 30s ago and differ; start VictoriaMetrics with -search.latencyOffset=0s",
			"-search.latencyOffset=30s: the freshness canary measures this offset, not ingestion: no sample is visible to an instant query sooner than 30s after its ack",
		}},
		{"an offset no check runs into", KindVictoriaMetrics, vm("30s", "0s", "1"), noChecks, nil},
		{"an offset past the canary's timeout", KindVictoriaMetrics, vm("5m", "0s", "1"), canaryOnly, []string{
			"-search.latencyOffset=5m is at least freshness.timeout (2m): every canary sample counts as never visible",
		}},
		{"dedup wider than the scrape interval, retention shorter than the run", KindVictoriaMetrics, vm("0s", "20s", "1"), long, []string{
			"-dedup.minScrapeInterval=20s keeps one sample per series every 20s, and the workload writes one every 10s (scrapeInterval): the read-back counts the others missing",
			"-retentionPeriod=1 keeps 31d of data, and the run's oldest data will be 40d20s old at its end (history + duration): VictoriaMetrics refuses or drops the older, which the read-back counts missing; start it with -retentionPeriod=42d",
		}},
		{"Prometheus' default retention, no window, no out-of-order samples", KindPrometheus, prom("15d", "0s"), def, nil},
		{"Prometheus: retention shorter than the history, no window for out-of-order samples", KindPrometheus, prom("15d", "10s"), func() config.Config { c := ooo; c.History = long.History; return c }(), []string{
			"--storage.tsdb.retention.time=15d keeps 15d of data, and the run's oldest data will be 40d20s old at its end",
			"storage.tsdb.out_of_order_time_window: 10s is shorter than series.outOfOrder.by (30s): Prometheus refuses the samples held back (HTTP 400); set it to at least 30s in its config file",
		}},
		{"a kind without settings knowledge", KindInfluxDB, nil, def, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SettingsWarnings(tt.kind, tt.settings, ChecksOf(&tt.cfg, 3*time.Second))
			if len(got) != len(tt.want) {
				t.Fatalf("%d warnings, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, want := range tt.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("warning %d:\n%s\nwant it to say:\n%s", i, got[i], want)
				}
			}
		})
	}
}
