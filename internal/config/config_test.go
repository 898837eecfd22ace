package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

func TestBadConfigs(t *testing.T) {
	want := map[string][]string{
		"scheme.bad.yaml":              {"remoteStorages.prom.writeURL: scheme must be http or https"},
		"unknown-key.bad.yaml":         {"field targetCount not found"},
		"unknown-storage-key.bad.yaml": {"field readUrl not found"},
		"duration.bad.yaml":            {"line 1 (scrapeInterval): cannot unmarshal"},
		"many.bad.yaml": {
			"targetsCount: must be >= 1",
			"scrapeConfigUpdatePercent: must be between 0 and 100",
			"writeConcurrency: must be >= 1",
			"queryInterval: must be > 0",
			"remoteStorages.a.writeURL: must be set (or disableWrite: true)",
			"remoteStorages.b.writeURL: host missing",
			"remoteStorages.b.readURL: not an absolute http(s) URL",
		},
		"secrets.bad.yaml": {
			"remoteStorages.vm.writeBearerTokenFile: set either writeBearerToken or writeBearerTokenFile, not both",
			"remoteStorages.vm.basicAuth.username: must be set",
			"remoteStorages.vm.basicAuth.passwordFile: stat testdata/no-such-file: no such file or directory",
			"remoteStorages.vm.tls: certFile and keyFile must be set together",
		},
		"disablewrite.bad.yaml": {"remoteStorages.ro.readURL: must be set when disableWrite is true"},
		"rangequery.bad.yaml": {
			"rangeQueries[0].expr: must be set",
			"rangeQueries[0].step: must be > 0",
			"rangeQueries[0].interval: must be > 0",
		},
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
		})
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

func TestChartValuesWarnings(t *testing.T) {
	c, err := Load("testdata/chart-values.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"disableMonitoring: key of the prometheus-benchmark chart ignored: tsbench generates the load itself",
		"vmtag: key of the prometheus-benchmark chart ignored: tsbench generates the load itself",
	}
	if diff := cmp.Diff(want, c.Warnings()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if c.TargetsCount != 2000 || c.WriteConcurrency != 16 || c.ScrapeConfigUpdateInterval != 10*time.Minute {
		t.Errorf("chart values not taken: %+v", c)
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
