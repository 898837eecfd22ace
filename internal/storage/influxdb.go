package storage

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// KindInfluxDB is InfluxDB 1.x: Prometheus remote write and remote read, no query API.
// tsbench starts it for the tests of that case, never as a default storage.
const KindInfluxDB = "influxdb"

// InfluxDatabase is the database a local InfluxDB is given, named in its URLs' ?db=.
const InfluxDatabase = "tsbench"

// InfluxDB is what tsbench knows of InfluxDB 1.x: how to start it. It has no query API (the
// read-back reads it through remote read) and no /metrics page (its figures are in
// /debug/vars): its resources come from /proc and its data dir.
func (families) InfluxDB() Family {
	return Family{
		Kind: KindInfluxDB, Order: 30,
		Local: &Local{
			Binary: "influxd", Package: "influxdb", ReadyPath: "/ping",
			Args: influxArgs, URLs: influxURLs, Setup: createInfluxDatabase,
		},
	}
}

// influxArgs writes an InfluxDB 1.x config: HTTP on addr without auth, its RPC (backup)
// service on another free port (its default, 8088, would collide between instances), every
// dir under dataDir, and nothing else running: no reporting, monitor store, subscriber or
// continuous queries. Its database's default retention policy (autogen) keeps data forever,
// so the retention tsbench asks for is already covered.
func influxArgs(p Place) ([]string, error) {
	rpc, err := p.FreePort()
	if err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`reporting-disabled = true
bind-address = "127.0.0.1:%d"
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  enabled = true
  bind-address = %q
  auth-enabled = false
  log-enabled = false
[subscriber]
  enabled = false
[continuous_queries]
  enabled = false
`, rpc, filepath.Join(p.DataDir, "meta"), filepath.Join(p.DataDir, "data"), filepath.Join(p.DataDir, "wal"), p.Addr)
	path := filepath.Join(p.WorkDir, "influxdb.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return []string{"run", "-config", path}, nil
}

// influxURLs are InfluxDB 1.x's Prometheus endpoints for InfluxDatabase. readURL is its root,
// as a user would first try: it has no query API there, which tsbench finds out and says.
// It has no /metrics page either (its figures are in /debug/vars): resources come from /proc.
func influxURLs(root string, st *config.Storage) {
	st.WriteURL = root + "api/v1/prom/write?db=" + InfluxDatabase
	st.ReadURL = root
	st.RemoteReadURL = root + "api/v1/prom/read?db=" + InfluxDatabase
	st.MetricsURLs = nil
}

// createInfluxDatabase creates InfluxDatabase through InfluxDB's /query endpoint.
func createInfluxDatabase(ctx context.Context, root string) error {
	form := url.Values{"q": {"CREATE DATABASE " + InfluxDatabase}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, root+"query", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("create database %s: %w", InfluxDatabase, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"error"`) {
		return fmt.Errorf("create database %s: %s: %s", InfluxDatabase, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
