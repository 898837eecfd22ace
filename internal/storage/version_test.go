package storage

import (
	"context"
	"testing"

	"github.com/tsbench/tsbench/internal/config"
)

// TestReadVersion reads each family's version from fakes of its /metrics page, through the
// read side's auth, whatever the path of the query API.
func TestReadVersion(t *testing.T) {
	tests := []struct{ name, page, want string }{
		{"VictoriaMetrics 1.150", `vm_app_version{version="victoria-metrics-20261128-060000-tags-v1.150.0-0-gmodule", short_version="v1.150.0"} 1` + "\n", "v1.150.0"},
		{"VictoriaMetrics, a build tag only", `vm_app_version{version="victoria-metrics-20220802-112130-tags-v1.79.5-cluster-0-g5d2ac1b"} 1` + "\n", "v1.79.5-cluster"},
		{"Debian's VictoriaMetrics 1.79: none", vmMetrics + `vm_log_messages_total{app_version="", level="info"} 1` + "\n", ""},
		{"Prometheus", `prometheus_build_info{branch="HEAD",goversion="go1.19.8",revision="",version="2.42.0"} 1` + "\n", "2.42.0"},
		{"Cortex", `cortex_build_info{version="1.18.1"} 1` + "\n", "1.18.1"},
		{"Thanos receive", `thanos_build_info{version="0.42.5"} 1` + "\n", "0.42.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := fakeStorage(t, map[string]string{"/metrics": tt.page}) + "/select/0/prometheus/"
			c, err := NewClient("s", config.Storage{ReadURL: url, ReadBearerToken: "tok", WriteBearerToken: "wrong"}, Read, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got, err := ReadVersion(context.Background(), c, url)
			if err != nil || got != tt.want {
				t.Errorf("ReadVersion = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	t.Run("no page", func(t *testing.T) {
		url := fakeStorage(t, map[string]string{}) + "/"
		c, err := NewClient("s", config.Storage{ReadURL: url, ReadBearerToken: "tok"}, Read, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if v, err := ReadVersion(context.Background(), c, url); err == nil {
			t.Errorf("ReadVersion of a storage without /metrics = %q, want an error", v)
		}
	})
}
