package fidelity

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// cache serves the upstream page on every path, refreshed in the background every -ttl: as
// the prometheus-benchmark chart's nginx in front of node_exporter, except that a scrape never
// waits for node_exporter, so a slow exporter on a loaded machine does not fail scrapes (each
// failure writes a staleness marker into every series of the target).
func cache(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cache", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to serve on")
	upstream := fs.String("upstream", "", "the exporter's /metrics URL")
	ttl := fs.Duration("ttl", time.Second, "how often the page is fetched again")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := loopback(*upstream); err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		return err
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-listen %s is not a loopback address", *listen)
	}
	c := &pageCache{upstream: *upstream, client: &http.Client{Timeout: 10 * time.Second}}
	if err := c.refresh(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		tick := time.NewTicker(*ttl)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := c.refresh(ctx); err != nil && ctx.Err() == nil {
					fmt.Fprintln(stderr, "fidelity cache: refresh:", err) // the old page is served meanwhile
				}
			}
		}
	})
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	wg.Go(func() {
		<-ctx.Done()
		_ = srv.Close()
	})
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type pageCache struct {
	upstream string
	client   *http.Client

	mu   sync.Mutex // guards body
	body []byte
}

func (c *pageCache) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	body := c.body
	c.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write(body)
}

func (c *pageCache) refresh(ctx context.Context) error {
	b, err := fetch(ctx, c.client, http.MethodGet, c.upstream)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.body = b
	c.mu.Unlock()
	return nil
}

func loopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("%q: want an http URL", raw)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s: only loopback addresses (127.0.0.1) are allowed", raw)
	}
	return nil
}
