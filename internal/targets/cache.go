package targets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// cache fetches an exporter's page at most once per ttl, as the prometheus-benchmark chart's
// nginx in front of node_exporter: however many targets are scraped at once, the exporter
// sees one request per ttl (node_exporter refuses more than 40 concurrent scrapes).
type cache struct {
	url    string
	ttl    time.Duration
	client *http.Client

	mu      sync.Mutex // guards below; held while fetching, so concurrent scrapes wait for one fetch
	body    []byte
	samples int
	fetched time.Time
	fetches int64
}

func newCache(url string, ttl time.Duration) *cache {
	return &cache{url: url, ttl: ttl, client: &http.Client{Timeout: 10 * time.Second}}
}

// get returns the page and its number of samples, fetching it when the copy is older than ttl.
func (c *cache) get(ctx context.Context) ([]byte, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.body != nil && time.Since(c.fetched) < c.ttl {
		return c.body, c.samples, nil
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, c.url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("exporterURL: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("exporterURL: read: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("exporterURL: status %s", resp.Status)
	}
	c.body, c.samples, c.fetched = body, countSamples(body), time.Now()
	c.fetches++
	return c.body, c.samples, nil
}

// Fetches is how many times the exporter was asked.
func (c *cache) Fetches() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches
}

// countSamples counts the sample lines of a text-format page: every line that is neither
// empty nor a comment.
func countSamples(body []byte) int {
	n := 0
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			n++
		}
	}
	return n
}
