package storage

import (
	"os"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/config"
)

// TestInfluxDBLocal: a local InfluxDB 1.x is written, read and found ready at its own
// Prometheus endpoints for the database tsbench creates, with its dirs under the data dir
// and its backup service on a port of its own.
func TestInfluxDBLocal(t *testing.T) {
	l := Kind(KindInfluxDB).Family().Local
	dir := t.TempDir()
	args, err := l.Args(Place{Addr: "127.0.0.1:8086", DataDir: dir + "/data", WorkDir: dir, FreePort: func() (int, error) { return 18088, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 3 || args[0] != "run" || args[1] != "-config" {
		t.Fatalf("args %q, want run -config FILE", args)
	}
	conf, err := os.ReadFile(args[2])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`bind-address = "127.0.0.1:18088"`, `bind-address = "127.0.0.1:8086"`, `dir = "` + dir + `/data/meta"`, "auth-enabled = false"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config lacks %s:\n%s", want, conf)
		}
	}
	var st config.Storage
	l.URLs("http://127.0.0.1:8086/", &st)
	if st.WriteURL != "http://127.0.0.1:8086/api/v1/prom/write?db=tsbench" || st.RemoteReadURL != "http://127.0.0.1:8086/api/v1/prom/read?db=tsbench" ||
		st.ReadURL != "http://127.0.0.1:8086/" || st.MetricsURLs != nil {
		t.Errorf("URLs %+v", st)
	}
	if l.ReadyPath != "/ping" || l.Setup == nil {
		t.Errorf("ready at %s, setup %v: want /ping and a database created", l.ReadyPath, l.Setup != nil)
	}
}
