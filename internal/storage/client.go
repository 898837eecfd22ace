// Package storage is how every reader reaches a storage under test: the HTTP client that
// carries a storage's auth, headers and TLS to one side of it (write or read), the kinds of
// storage tsbench tells apart, and the settings of each family that change what tsbench
// measures (settings.go, one file per family). Starting and stopping local storages is package local's
// job; storagetest is an in-process receiver for tests. This package imports neither.
//
// Invariant: a secret (token, password) is read from config or file once, goes only into
// request headers, and never into an error, a log line or a report.
package storage

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// Side says which of a storage's credentials and headers a Client carries.
type Side int

// The two sides of a storage.
const (
	Write Side = iota
	Read
)

// Client sends requests to one side of one storage with its auth and headers.
type Client struct {
	Name   string
	HTTP   *http.Client
	header http.Header // static headers, auth included
}

// NewClient builds the client for one side of a storage. maxConns bounds the connections
// kept open (one per write shard or query slot).
func NewClient(name string, st config.Storage, side Side, maxConns int) (*Client, error) {
	tlsConf, err := tlsConfig(st.TLS)
	if err != nil {
		return nil, fmt.Errorf("storage %s: %w", name, err)
	}
	tr := &http.Transport{
		Proxy:               nil, // loopback benchmarks must not go through an environment proxy
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConf,
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		MaxConnsPerHost:     maxConns,
		IdleConnTimeout:     90 * time.Second,
		// Remote-write bodies are already snappy-compressed; query responses are small enough.
		DisableCompression: side == Write,
	}
	h := http.Header{}
	headers, token, tokenFile := st.WriteHeaders, st.WriteBearerToken, st.WriteBearerTokenFile
	if side == Read {
		headers, token, tokenFile = st.ReadHeaders, st.ReadBearerToken, st.ReadBearerTokenFile
	}
	for k, v := range headers {
		h.Set(k, v)
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("storage %s: bearer token file: %w", name, err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	if ba := st.BasicAuth; ba != nil && ba.Username != "" {
		pw := ba.Password
		if ba.PasswordFile != "" {
			b, err := os.ReadFile(ba.PasswordFile)
			if err != nil {
				return nil, fmt.Errorf("storage %s: basic auth password file: %w", name, err)
			}
			pw = strings.TrimSpace(string(b))
		}
		req := &http.Request{Header: http.Header{}}
		req.SetBasicAuth(ba.Username, pw)
		h.Set("Authorization", req.Header.Get("Authorization"))
	}
	return &Client{Name: name, HTTP: &http.Client{Transport: tr}, header: h}, nil
}

// Do sends req with the storage's headers and auth added.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	maps.Copy(req.Header, c.header)
	return c.HTTP.Do(req)
}

// Close releases idle connections.
func (c *Client) Close() { c.HTTP.CloseIdleConnections() }

func tlsConfig(t config.TLS) (*tls.Config, error) {
	if t == (config.TLS{}) {
		return nil, nil
	}
	conf := &tls.Config{InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // the user asked for it
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.caFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.caFile %s: no PEM certificate found", t.CAFile)
		}
		conf.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls.certFile/keyFile: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// StripURL drops url.Error's own "Get \"URL\":" prefix from an error of Client.Do: its text
// quotes the URL, password included, and tsbench's messages name the redacted URL
// themselves.
func StripURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
