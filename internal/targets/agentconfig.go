package targets

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tsbench/tsbench/internal/config"
)

// Remote is one remote_write of the agent: one write URL of a storage, one writeURLReplicas copy.
type Remote struct {
	Storage string // its name in remoteStorages
	Name    string // the agent's name for it (Prometheus' remote_name): the storage, or storage_N
	URL     string // with extra_label=url_replica=N when the storage gets several copies
}

// Remotes lists the agent's remote writes: every write URL of every storage that takes writes,
// writeURLReplicas times, in storage name order.
func Remotes(cfg *config.Config) ([]Remote, error) {
	var out []Remote
	for _, name := range cfg.StorageNames() {
		st := cfg.RemoteStorages[name]
		if st.DisableWrite {
			continue
		}
		copies := max(1, cfg.URLReplicas(name))
		urls := st.WriteURLs()
		for ui, raw := range urls {
			for c := range copies {
				u, err := url.Parse(raw)
				if err != nil {
					return nil, fmt.Errorf("remoteStorages.%s.writeURL: %w", name, err)
				}
				if copies > 1 { // as the direct writer: the storage keeps each copy apart
					q := u.Query()
					q.Add("extra_label", "url_replica="+strconv.Itoa(c))
					u.RawQuery = q.Encode()
				}
				rn := name
				if n := len(urls) * copies; n > 1 {
					rn = fmt.Sprintf("%s_%d", name, ui*copies+c)
				}
				out = append(out, Remote{Storage: name, Name: rn, URL: u.String()})
			}
		}
	}
	return out, nil
}

// JobName is the scrape job of tsbench's targets: the direct writer's job label.
const JobName = "node_exporter"

// promConfig is the part of Prometheus' configuration file tsbench writes; vmagent reads the
// same scrape_configs.
type promConfig struct {
	Global        promGlobal        `yaml:"global"`
	ScrapeConfigs []promScrape      `yaml:"scrape_configs"`
	RemoteWrite   []promRemoteWrite `yaml:"remote_write,omitempty"`
}

type promGlobal struct {
	ScrapeInterval string `yaml:"scrape_interval"`
	ScrapeTimeout  string `yaml:"scrape_timeout"`
}

type promScrape struct {
	JobName         string   `yaml:"job_name"`
	HonorTimestamps bool     `yaml:"honor_timestamps"`
	HTTPSDConfigs   []httpSD `yaml:"http_sd_configs"`
}

type httpSD struct {
	URL             string `yaml:"url"`
	RefreshInterval string `yaml:"refresh_interval,omitempty"` // Prometheus only: vmagent has a flag
}

type promRemoteWrite struct {
	URL           string            `yaml:"url"`
	Name          string            `yaml:"name"`
	Headers       map[string]string `yaml:"headers,omitempty"`
	Authorization *promAuth         `yaml:"authorization,omitempty"`
	BasicAuth     *promBasicAuth    `yaml:"basic_auth,omitempty"`
	TLSConfig     *promTLS          `yaml:"tls_config,omitempty"`
	QueueConfig   promQueue         `yaml:"queue_config"`
}

type promAuth struct {
	Credentials     string `yaml:"credentials,omitempty"`
	CredentialsFile string `yaml:"credentials_file,omitempty"`
}

type promBasicAuth struct {
	Username     string `yaml:"username"`
	Password     string `yaml:"password,omitempty"`
	PasswordFile string `yaml:"password_file,omitempty"`
}

type promTLS struct {
	CAFile             string `yaml:"ca_file,omitempty"`
	CertFile           string `yaml:"cert_file,omitempty"`
	KeyFile            string `yaml:"key_file,omitempty"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify,omitempty"`
}

type promQueue struct {
	MaxShards         int `yaml:"max_shards"`
	MaxSamplesPerSend int `yaml:"max_samples_per_send"`
	Capacity          int `yaml:"capacity"`
}

// SDRefresh is how often the agent reads the target list: churn reaches the agent within it.
// The scrape interval, between 1 s and 5 s.
func SDRefresh(cfg *config.Config) time.Duration {
	return min(5*time.Second, max(time.Second, cfg.ScrapeInterval))
}

// scrapeTimeout is the scrape interval, at most 10 s (Prometheus refuses a timeout above it).
func scrapeTimeout(cfg *config.Config) time.Duration { return min(10*time.Second, cfg.ScrapeInterval) }

func scrapeConfig(cfg *config.Config, sdURL string, withRefresh bool) promConfig {
	sd := httpSD{URL: sdURL}
	if withRefresh {
		sd.RefreshInterval = promDuration(SDRefresh(cfg))
	}
	return promConfig{
		Global: promGlobal{ScrapeInterval: promDuration(cfg.ScrapeInterval), ScrapeTimeout: promDuration(scrapeTimeout(cfg))},
		ScrapeConfigs: []promScrape{{
			JobName: JobName, HonorTimestamps: true, HTTPSDConfigs: []httpSD{sd},
		}},
	}
}

// promDuration writes d as Prometheus durations are written: whole milliseconds, "1500ms", "5s".
func promDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// PrometheusConfig is the configuration file of Prometheus in agent mode: the scrape job
// over tsbench's http_sd at sdURL, and one remote_write per Remote with its storage's auth,
// headers and TLS. With redact, secrets are written as <secret> (for printing).
func PrometheusConfig(cfg *config.Config, sdURL string, remotes []Remote, redact bool) ([]byte, error) {
	pc := scrapeConfig(cfg, sdURL, true)
	for _, r := range remotes {
		st := cfg.RemoteStorages[r.Storage]
		if redact {
			st = st.Redacted()
		}
		rw := promRemoteWrite{
			URL: r.URL, Name: r.Name, Headers: st.WriteHeaders,
			// writeConcurrency connections as the direct writer's; batches of maxSamplesPerRequest.
			QueueConfig: promQueue{
				MaxShards: cfg.WriteConcurrency, MaxSamplesPerSend: cfg.MaxSamplesPerRequest,
				Capacity: 2 * cfg.MaxSamplesPerRequest,
			},
		}
		if redact {
			rw.URL = config.RedactURL(r.URL)
		}
		if st.WriteBearerToken != "" || st.WriteBearerTokenFile != "" {
			rw.Authorization = &promAuth{Credentials: st.WriteBearerToken, CredentialsFile: st.WriteBearerTokenFile}
		}
		if ba := st.BasicAuth; ba != nil {
			rw.BasicAuth = &promBasicAuth{Username: ba.Username, Password: ba.Password, PasswordFile: ba.PasswordFile}
		}
		if t := st.TLS; t != (config.TLS{}) {
			rw.TLSConfig = &promTLS{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, InsecureSkipVerify: t.InsecureSkipVerify}
		}
		pc.RemoteWrite = append(pc.RemoteWrite, rw)
	}
	return yaml.Marshal(pc)
}

// VMAgentScrapeConfig is vmagent's -promscrape.config: the scrape job only (vmagent takes its
// remote writes from flags, and the http_sd refresh from -promscrape.httpSDCheckInterval).
func VMAgentScrapeConfig(cfg *config.Config, sdURL string) ([]byte, error) {
	return yaml.Marshal(scrapeConfig(cfg, sdURL, false))
}

// VMAgentFlags are vmagent's -remoteWrite.* flags, one value per Remote in order for every
// per-URL flag any remote needs. secretFile stores a secret in a file and returns its path,
// so no secret is on vmagent's command line; with redact it is not called and secrets are
// written as <secret>.
func VMAgentFlags(cfg *config.Config, remotes []Remote, redact bool, secretFile func(name, secret string) (string, error)) ([]string, error) {
	per := map[string][]string{}
	var order []string
	set := func(flag string, i int, v string) {
		if _, ok := per[flag]; !ok {
			per[flag] = make([]string, len(remotes))
			order = append(order, flag)
		}
		per[flag][i] = v
	}
	secret := func(name, v string) (string, error) {
		if redact {
			return "<secret>", nil
		}
		return secretFile(name, v)
	}
	for i, r := range remotes {
		st := cfg.RemoteStorages[r.Storage]
		u := r.URL
		if redact {
			u = config.RedactURL(u)
		}
		set("-remoteWrite.url", i, u)
		if st.WriteBearerToken != "" {
			p, err := secret(r.Name+".token", st.WriteBearerToken)
			if err != nil {
				return nil, err
			}
			set("-remoteWrite.bearerTokenFile", i, p)
		} else if st.WriteBearerTokenFile != "" {
			set("-remoteWrite.bearerTokenFile", i, st.WriteBearerTokenFile)
		}
		if ba := st.BasicAuth; ba != nil {
			set("-remoteWrite.basicAuth.username", i, ba.Username)
			if ba.Password != "" {
				p, err := secret(r.Name+".password", ba.Password)
				if err != nil {
					return nil, err
				}
				set("-remoteWrite.basicAuth.passwordFile", i, p)
			} else if ba.PasswordFile != "" {
				set("-remoteWrite.basicAuth.passwordFile", i, ba.PasswordFile)
			}
		}
		if len(st.WriteHeaders) > 0 {
			var hs []string
			for _, k := range slices.Sorted(maps.Keys(st.WriteHeaders)) {
				v := st.WriteHeaders[k]
				if redact {
					v = "<secret>"
				}
				hs = append(hs, k+":"+v)
			}
			set("-remoteWrite.headers", i, strings.Join(hs, "^^"))
		}
		t := st.TLS
		if t.CAFile != "" {
			set("-remoteWrite.tlsCAFile", i, t.CAFile)
		}
		if t.CertFile != "" {
			set("-remoteWrite.tlsCertFile", i, t.CertFile)
			set("-remoteWrite.tlsKeyFile", i, t.KeyFile)
		}
		if t.InsecureSkipVerify {
			set("-remoteWrite.tlsInsecureSkipVerify", i, "true")
		}
	}
	var flags []string
	for _, f := range order {
		for _, v := range per[f] {
			if v == "" && f == "-remoteWrite.tlsInsecureSkipVerify" {
				v = "false"
			}
			flags = append(flags, f+"="+v)
		}
	}
	flags = append(flags,
		"-remoteWrite.queues="+strconv.Itoa(cfg.WriteConcurrency),
		"-promscrape.httpSDCheckInterval="+promDuration(SDRefresh(cfg)),
	)
	return flags, nil
}
