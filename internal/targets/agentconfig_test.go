package targets

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/tsbench/tsbench/internal/config"
)

func scrapeCfg(t *testing.T) *config.Config {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("t0k3n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := config.Default()
	c.Sender = config.SenderPrometheusAgent
	c.ScrapeInterval = 5 * time.Second
	c.RemoteStorages = map[string]config.Storage{
		"vm": {WriteURL: "http://127.0.0.1:8428/api/v1/write", WriteURLReplicas: 2, WriteHeaders: config.Headers{"X-Tenant": "a"}},
		"mimir": {
			WriteURL: "https://127.0.0.1:9009/api/v1/push", WriteBearerToken: "s3cret",
			TLS: config.TLS{InsecureSkipVerify: true},
		},
		"prom": {WriteURL: "http://127.0.0.1:9090/api/v1/write", BasicAuth: &config.BasicAuth{Username: "u", Password: "p4ss"}},
		"ro":   {ReadURL: "http://127.0.0.1:9091/", DisableWrite: true},
		"file": {WriteURL: "http://127.0.0.1:9092/api/v1/write", WriteBearerTokenFile: tokenFile},
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestRemotes(t *testing.T) {
	got, err := Remotes(scrapeCfg(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []Remote{
		{Storage: "file", Name: "file", URL: "http://127.0.0.1:9092/api/v1/write"},
		{Storage: "mimir", Name: "mimir", URL: "https://127.0.0.1:9009/api/v1/push"},
		{Storage: "prom", Name: "prom", URL: "http://127.0.0.1:9090/api/v1/write"},
		{Storage: "vm", Name: "vm_0", URL: "http://127.0.0.1:8428/api/v1/write?extra_label=url_replica%3D0"},
		{Storage: "vm", Name: "vm_1", URL: "http://127.0.0.1:8428/api/v1/write?extra_label=url_replica%3D1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("remotes (-want +got):\n%s", diff)
	}
}

// TestPrometheusConfig checks the generated file's remote writes, and hands it to promtool
// (Debian's prometheus package), which must accept it as Prometheus does.
func TestPrometheusConfig(t *testing.T) {
	cfg := scrapeCfg(t)
	remotes, err := Remotes(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := PrometheusConfig(cfg, "http://127.0.0.1:1234/sd", remotes, false)
	if err != nil {
		t.Fatal(err)
	}
	var pc promConfig
	if err := yaml.Unmarshal(b, &pc); err != nil {
		t.Fatal(err)
	}
	tokenFile := cfg.RemoteStorages["file"].WriteBearerTokenFile
	queue := promQueue{MaxShards: 4, MaxSamplesPerSend: 5000, Capacity: 10000}
	want := []promRemoteWrite{
		{URL: "http://127.0.0.1:9092/api/v1/write", Name: "file", Authorization: &promAuth{CredentialsFile: tokenFile}, QueueConfig: queue},
		{URL: "https://127.0.0.1:9009/api/v1/push", Name: "mimir", Authorization: &promAuth{Credentials: "s3cret"}, TLSConfig: &promTLS{InsecureSkipVerify: true}, QueueConfig: queue},
		{URL: "http://127.0.0.1:9090/api/v1/write", Name: "prom", BasicAuth: &promBasicAuth{Username: "u", Password: "p4ss"}, QueueConfig: queue},
		{URL: "http://127.0.0.1:8428/api/v1/write?extra_label=url_replica%3D0", Name: "vm_0", Headers: map[string]string{"X-Tenant": "a"}, QueueConfig: queue},
		{URL: "http://127.0.0.1:8428/api/v1/write?extra_label=url_replica%3D1", Name: "vm_1", Headers: map[string]string{"X-Tenant": "a"}, QueueConfig: queue},
	}
	if diff := cmp.Diff(want, pc.RemoteWrite); diff != "" {
		t.Errorf("remote writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]promScrape{{JobName: JobName, HonorTimestamps: true, HTTPSDConfigs: []httpSD{{URL: "http://127.0.0.1:1234/sd", RefreshInterval: "5s"}}}}, pc.ScrapeConfigs); diff != "" {
		t.Errorf("scrape configs (-want +got):\n%s", diff)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		path := filepath.Join(t.TempDir(), "prometheus.yml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(promtool, "check", "config", "--agent", path).CombinedOutput(); err != nil {
			t.Errorf("promtool refuses the config: %v\n%s\n%s", err, out, b)
		}
	}
	// Printed for a user's own agent: no secret in it.
	red, err := PrometheusConfig(cfg, "http://127.0.0.1:1234/sd", remotes, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cret", "p4ss", "X-Tenant: a"} {
		if strings.Contains(string(red), secret) {
			t.Errorf("redacted config holds %q:\n%s", secret, red)
		}
	}
}

// TestVMAgentFlags gives one value per remote, in order, for every per-URL flag any remote
// needs; inline secrets go to files, never to the command line.
func TestVMAgentFlags(t *testing.T) {
	cfg := scrapeCfg(t)
	remotes, err := Remotes(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	got, err := VMAgentFlags(cfg, remotes, false, func(name, secret string) (string, error) {
		stored["/q/"+name] = secret
		return "/q/" + name, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := cfg.RemoteStorages["file"].WriteBearerTokenFile
	want := []string{
		"-remoteWrite.url=http://127.0.0.1:9092/api/v1/write",
		"-remoteWrite.url=https://127.0.0.1:9009/api/v1/push",
		"-remoteWrite.url=http://127.0.0.1:9090/api/v1/write",
		"-remoteWrite.url=http://127.0.0.1:8428/api/v1/write?extra_label=url_replica%3D0",
		"-remoteWrite.url=http://127.0.0.1:8428/api/v1/write?extra_label=url_replica%3D1",
		"-remoteWrite.bearerTokenFile=" + tokenFile,
		"-remoteWrite.bearerTokenFile=/q/mimir.token",
		"-remoteWrite.bearerTokenFile=",
		"-remoteWrite.bearerTokenFile=",
		"-remoteWrite.bearerTokenFile=",
		"-remoteWrite.tlsInsecureSkipVerify=false",
		"-remoteWrite.tlsInsecureSkipVerify=true",
		"-remoteWrite.tlsInsecureSkipVerify=false",
		"-remoteWrite.tlsInsecureSkipVerify=false",
		"-remoteWrite.tlsInsecureSkipVerify=false",
		"-remoteWrite.basicAuth.username=",
		"-remoteWrite.basicAuth.username=",
		"-remoteWrite.basicAuth.username=u",
		"-remoteWrite.basicAuth.username=",
		"-remoteWrite.basicAuth.username=",
		"-remoteWrite.basicAuth.passwordFile=",
		"-remoteWrite.basicAuth.passwordFile=",
		"-remoteWrite.basicAuth.passwordFile=/q/prom.password",
		"-remoteWrite.basicAuth.passwordFile=",
		"-remoteWrite.basicAuth.passwordFile=",
		"-remoteWrite.headers=",
		"-remoteWrite.headers=",
		"-remoteWrite.headers=",
		"-remoteWrite.headers=X-Tenant:a",
		"-remoteWrite.headers=X-Tenant:a",
		"-remoteWrite.queues=4",
		"-promscrape.httpSDCheckInterval=5s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"/q/mimir.token": "s3cret", "/q/prom.password": "p4ss"}, stored); diff != "" {
		t.Errorf("secret files (-want +got):\n%s", diff)
	}
}

func TestVMAgentScrapeConfig(t *testing.T) {
	b, err := VMAgentScrapeConfig(scrapeCfg(t), "http://127.0.0.1:1234/sd")
	if err != nil {
		t.Fatal(err)
	}
	want := `global:
    scrape_interval: 5s
    scrape_timeout: 5s
scrape_configs:
    - job_name: node_exporter
      honor_timestamps: true
      http_sd_configs:
        - url: http://127.0.0.1:1234/sd
`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("vmagent's scrape config (-want +got):\n%s", diff)
	}
}
