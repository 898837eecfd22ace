package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

// quotedPart is a quoted string in an error, with the space before it.
var quotedPart = regexp.MustCompile(` ?"[^"]*"`)

// Storage is one storage under test, as an entry of remoteStorages.
type Storage struct {
	// WriteURL is the remote_write endpoint; a comma-separated list sends identical data to each.
	// Empty beside a ReadURL, as the prometheus-benchmark chart writes a storage it only
	// queries, means no writes (see setDefaults).
	WriteURL string `yaml:"writeURL" json:"writeURL,omitempty"`
	// ReadURL is the Prometheus HTTP API root (…/api/v1/query is appended); empty: no reads.
	ReadURL string `yaml:"readURL" json:"readURL,omitempty"`
	// RemoteReadURL is the storage's Prometheus remote read endpoint (InfluxDB 1.x:
	// …/api/v1/prom/read?db=NAME; Prometheus: …/api/v1/read). The read-back uses it where
	// the storage has no query API at readURL; empty: no remote read.
	RemoteReadURL string `yaml:"remoteReadURL" json:"remoteReadURL,omitempty"`
	// WriteURLReplicas overrides the top-level writeURLReplicas for this storage (where the
	// chart has it); 0 takes the top-level value.
	WriteURLReplicas int `yaml:"writeURLReplicas" json:"writeURLReplicas,omitempty"`

	WriteBearerToken     string     `yaml:"writeBearerToken" json:"writeBearerToken,omitempty"`
	WriteBearerTokenFile string     `yaml:"writeBearerTokenFile" json:"writeBearerTokenFile,omitempty"`
	ReadBearerToken      string     `yaml:"readBearerToken" json:"readBearerToken,omitempty"`
	ReadBearerTokenFile  string     `yaml:"readBearerTokenFile" json:"readBearerTokenFile,omitempty"`
	BasicAuth            *BasicAuth `yaml:"basicAuth" json:"basicAuth,omitempty"`
	WriteHeaders         Headers    `yaml:"writeHeaders" json:"writeHeaders,omitempty"`
	ReadHeaders          Headers    `yaml:"readHeaders" json:"readHeaders,omitempty"`
	TLS                  TLS        `yaml:"tls" json:"tls"`
	// Protocol is what the storage is written in: prometheus-rw1 (remote write 1.0, the
	// default), prometheus-rw2 (remote write 2.0) or otlp-http (OTLP over HTTP, protobuf).
	Protocol Protocol `yaml:"protocol" json:"protocol,omitempty"`
	// OTLPCompression is the Content-Encoding of otlp-http requests: gzip (the default, as
	// OpenTelemetry's exporters send) or none.
	OTLPCompression string `yaml:"otlpCompression" json:"otlpCompression,omitempty"`
	// OTLPLabels is how the storage maps OTLP resource attributes to labels: prometheus (job
	// and instance, the default), attributes (service.name, service.instance.id) or
	// underscore (service_name, service_instance_id). See freshness.go.
	OTLPLabels OTLPLabels `yaml:"otlpLabels" json:"otlpLabels,omitempty"`
	// DisableWrite sends no writes: the storage is only queried (for example a replica of
	// another storage under test, or a read-only frontend). An empty writeURL beside a
	// readURL sets it.
	DisableWrite bool `yaml:"disableWrite" json:"disableWrite,omitempty"`

	// MetricsURLs are the storage's own /metrics pages; a cluster lists each component.
	MetricsURLs []string `yaml:"metricsURLs" json:"metricsURLs,omitempty"`
	// PID and DataDir let tsbench read /proc and the data dir of a local process it did not start.
	PID     int    `yaml:"pid" json:"pid,omitempty"`
	DataDir string `yaml:"dataDir" json:"dataDir,omitempty"`

	StorageChartOnly `yaml:",inline" json:"-"` // per-storage keys of the chart that do not apply here
}

// StorageChartOnly holds the chart's per-storage keys for its vmagent and vmalert pods: they
// are accepted so a values file loads as it is, and each one set is named in a warning.
type StorageChartOnly struct {
	VMAgentExtraFlags any `yaml:"vmagentExtraFlags" json:"-"`
	VMAlertExtraFlags any `yaml:"vmalertExtraFlags" json:"-"`
	VMAgentExtraEnvs  any `yaml:"vmagentExtraEnvs" json:"-"`
	VMAlertExtraEnvs  any `yaml:"vmalertExtraEnvs" json:"-"`
}

// Protocol names a write protocol.
type Protocol string

// The write protocols; the same workload is encoded in each.
const (
	ProtocolRW1  Protocol = "prometheus-rw1"
	ProtocolRW2  Protocol = "prometheus-rw2"
	ProtocolOTLP Protocol = "otlp-http"
)

// Protocols lists every protocol, the default first.
var Protocols = []Protocol{ProtocolRW1, ProtocolRW2, ProtocolOTLP}

// OTLP request encodings.
const (
	OTLPGzip = "gzip"
	OTLPNone = "none"
)

// BasicAuth applies to both writes and reads.
type BasicAuth struct {
	Username     string `yaml:"username" json:"username"`
	Password     string `yaml:"password" json:"password,omitempty"`
	PasswordFile string `yaml:"passwordFile" json:"passwordFile,omitempty"`
}

// TLS configures the client side of HTTPS to a storage.
type TLS struct {
	CAFile             string `yaml:"caFile" json:"caFile,omitempty"`
	CertFile           string `yaml:"certFile" json:"certFile,omitempty"`
	KeyFile            string `yaml:"keyFile" json:"keyFile,omitempty"`
	InsecureSkipVerify bool   `yaml:"insecureSkipVerify" json:"insecureSkipVerify,omitempty"`
}

// setDefaults reads a storage the chart's way: writeURL "" beside a readURL is a storage
// that is only queried (the chart then deploys only its vmalert for it), so it gets no
// writes, as with disableWrite: true. A storage with neither URL is left for validate.
func (s *Storage) setDefaults() {
	if len(s.WriteURLs()) == 0 && s.ReadURL != "" {
		s.DisableWrite = true
	}
}

// WriteProtocol is Protocol, prometheus-rw1 when unset. The defaults of protocol and
// otlpCompression are applied where they are read, so a config that leaves them out reads
// back (in results.json) as it was written.
func (s Storage) WriteProtocol() Protocol {
	if s.Protocol == "" {
		return ProtocolRW1
	}
	return s.Protocol
}

// OTLPGzipped reports whether otlp-http requests are gzipped: otlpCompression gzip or unset.
func (s Storage) OTLPGzipped() bool { return s.OTLPCompression != OTLPNone }

// WriteURLs returns the write endpoints: one per element of the comma list.
func (s Storage) WriteURLs() []string {
	var urls []string
	for u := range strings.SplitSeq(s.WriteURL, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

func (s Storage) validate(key string) []error {
	var errs []error
	bad := func(k, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", key, k, fmt.Sprintf(format, args...)))
	}
	switch {
	case s.DisableWrite && s.ReadURL == "":
		bad("readURL", "must be set when disableWrite is true: the storage would get no load")
	case len(s.WriteURLs()) == 0 && s.ReadURL == "":
		// Keyed by writeURL, so that a writeURL that did not decode is not reported twice.
		bad("writeURL", "neither writeURL nor readURL is set: set writeURL to write to the storage, readURL to query it, or both")
	case len(s.WriteURLs()) == 0 && !s.DisableWrite:
		// Only a Storage built in code gets here: Parse turns this into disableWrite.
		bad("writeURL", "is empty: set it, or disableWrite: true to only query the storage")
	}
	if !s.DisableWrite {
		for _, u := range s.WriteURLs() {
			if err := checkURL(u); err != nil {
				bad("writeURL", "%v", err)
			}
		}
	}
	if s.ReadURL != "" {
		if err := checkURL(s.ReadURL); err != nil {
			bad("readURL", "%v", err)
		}
	}
	if s.RemoteReadURL != "" {
		if err := checkURL(s.RemoteReadURL); err != nil {
			bad("remoteReadURL", "%v", err)
		}
	}
	for i, u := range s.MetricsURLs {
		if err := checkURL(u); err != nil {
			bad(fmt.Sprintf("metricsURLs[%d]", i), "%v", err)
		}
	}
	if s.WriteBearerToken != "" && s.WriteBearerTokenFile != "" {
		bad("writeBearerTokenFile", "set either writeBearerToken or writeBearerTokenFile, not both")
	}
	if s.ReadBearerToken != "" && s.ReadBearerTokenFile != "" {
		bad("readBearerTokenFile", "set either readBearerToken or readBearerTokenFile, not both")
	}
	if s.BasicAuth != nil {
		if s.BasicAuth.Username == "" {
			bad("basicAuth.username", "must be set")
		}
		if s.BasicAuth.Password != "" && s.BasicAuth.PasswordFile != "" {
			bad("basicAuth.passwordFile", "set either password or passwordFile, not both")
		}
		if err := checkFile(key+".basicAuth.passwordFile", s.BasicAuth.PasswordFile); err != nil {
			errs = append(errs, err)
		}
		if (s.WriteBearerToken != "" || s.WriteBearerTokenFile != "" || s.ReadBearerToken != "" || s.ReadBearerTokenFile != "") && s.BasicAuth.Username != "" {
			bad("basicAuth", "cannot be combined with a bearer token")
		}
	}
	for k, f := range map[string]string{
		"writeBearerTokenFile": s.WriteBearerTokenFile, "readBearerTokenFile": s.ReadBearerTokenFile,
		"tls.caFile": s.TLS.CAFile, "tls.certFile": s.TLS.CertFile, "tls.keyFile": s.TLS.KeyFile,
	} {
		if err := checkFile(key+"."+k, f); err != nil {
			errs = append(errs, err)
		}
	}
	if (s.TLS.CertFile == "") != (s.TLS.KeyFile == "") {
		bad("tls", "certFile and keyFile must be set together")
	}
	if s.PID < 0 {
		bad("pid", "must be > 0 when set")
	}
	errs = append(errs, s.otlpLabelProblems(key)...)
	if !slices.Contains(Protocols, s.Protocol) && s.Protocol != "" {
		bad("protocol", "must be %s (the default), %s or %s, not %q", ProtocolRW1, ProtocolRW2, ProtocolOTLP, s.Protocol)
	}
	if s.OTLPCompression != "" && s.OTLPCompression != OTLPGzip && s.OTLPCompression != OTLPNone {
		bad("otlpCompression", "must be %s (the default) or %s, not %q", OTLPGzip, OTLPNone, s.OTLPCompression)
	}
	if s.WriteURLReplicas < 0 {
		bad("writeURLReplicas", "must be >= 1 (0 or unset takes the top-level writeURLReplicas)")
	}
	errs = append(errs, s.WriteHeaders.validate(key+".writeHeaders", true)...)
	errs = append(errs, s.ReadHeaders.validate(key+".readHeaders", false)...)
	return errs
}

// checkURL accepts absolute http(s) URLs with a host. Its errors quote no part of the URL:
// one can carry a password or a token.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		// url's reasons quote the part at fault ("invalid port \":x\" after host"): drop it.
		why := quotedPart.ReplaceAllString(errors.Unwrap(err).Error(), "")
		return fmt.Errorf("not an absolute http(s) URL like http://host:port/: %s", why)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("scheme must be http or https")
	}
	if u.Host == "" {
		return errors.New("host missing")
	}
	return nil
}

// checkFile checks that a file named by the config exists; "" is not set, and fine.
func checkFile(key, path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// Redacted returns a copy with every secret replaced by "<secret>", for logs and reports.
func (s Storage) Redacted() Storage {
	r := s
	const hidden = "<secret>"
	if r.WriteBearerToken != "" {
		r.WriteBearerToken = hidden
	}
	if r.ReadBearerToken != "" {
		r.ReadBearerToken = hidden
	}
	if s.BasicAuth != nil {
		ba := *s.BasicAuth
		if ba.Password != "" {
			ba.Password = hidden
		}
		r.BasicAuth = &ba
	}
	r.WriteHeaders = redactHeaders(s.WriteHeaders)
	r.ReadHeaders = redactHeaders(s.ReadHeaders)
	r.WriteURL = redactURLs(s.WriteURL)
	r.ReadURL = redactURLs(s.ReadURL)
	r.RemoteReadURL = RedactURL(s.RemoteReadURL)
	r.MetricsURLs = nil
	for _, u := range s.MetricsURLs {
		r.MetricsURLs = append(r.MetricsURLs, redactURLs(u))
	}
	return r
}

// Redacted returns a copy of the config with every storage's secrets hidden.
func (c *Config) Redacted() Config {
	r := *c
	r.RemoteStorages = make(map[string]Storage, len(c.RemoteStorages))
	for name, st := range c.RemoteStorages {
		r.RemoteStorages[name] = st.Redacted()
	}
	return r
}

// redactHeaders hides every header value: headers carry API keys and tenant secrets as often
// as not, and a report is no place to tell which.
func redactHeaders(h Headers) Headers {
	if h == nil {
		return nil
	}
	r := make(Headers, len(h))
	for k := range h {
		r[k] = "<secret>"
	}
	return r
}

func redactURLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		parts[i] = RedactURL(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}

// secretParams are query parameters that carry credentials, as InfluxDB's ?u=NAME&p=PASSWORD
// or an API gateway's ?api_key=…; compared without case.
var secretParams = []string{"p", "password", "token", "access_token", "api_key", "apikey", "key", "secret"}

// RedactURL hides the password of a URL's user info (as url.URL.Redacted) and the value of
// every secret query parameter (as "<secret>"), keeping the other parameters as they are.
// A string that does not parse as a URL is returned whole: Validate refuses it before use.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for i, p := range params {
			name, _, _ := strings.Cut(p, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if slices.ContainsFunc(secretParams, func(s string) bool { return strings.EqualFold(s, name) }) {
				params[i] = name + "=<secret>"
			}
		}
		u.RawQuery = strings.Join(params, "&")
	}
	return u.Redacted()
}
