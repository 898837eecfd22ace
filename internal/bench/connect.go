package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
)

// connectTimeout bounds each URL's answer: a storage that answers nothing in 5 s is as good
// as gone for a benchmark.
const connectTimeout = 5 * time.Second

// Connection is what one URL of a storage answered to `tsbench validate -connect`.
type Connection struct {
	Storage string
	Key     string // writeURL, readURL, remoteReadURL or metricsURLs
	URL     string // redacted
	// Status is the HTTP status it answered with, any status: the storage is there. 0 with Err.
	Status int
	// Err is why it did not answer: refused, no such host, a timeout, TLS.
	Err error
}

// Connect asks every URL of every storage of cfg once, a GET with that side's auth and TLS,
// and returns what each answered, in name order and each storage's URLs in config order.
// Any HTTP answer (a write endpoint answers a GET with 400 or 405) says the storage is
// there; only a network error says it is not.
func Connect(ctx context.Context, cfg *config.Config) ([]Connection, error) {
	type target struct {
		conn   Connection
		client *storage.Client
	}
	var targets []target
	for _, name := range cfg.StorageNames() {
		st := cfg.RemoteStorages[name]
		write, err := storage.NewClient(name, st, storage.Write, 1)
		if err != nil {
			return nil, err
		}
		read, err := storage.NewClient(name, st, storage.Read, 1)
		if err != nil {
			return nil, err
		}
		add := func(key, u string, c *storage.Client) {
			if u != "" {
				targets = append(targets, target{Connection{Storage: name, Key: key, URL: u}, c})
			}
		}
		for _, u := range st.WriteURLs() {
			add("writeURL", u, write)
		}
		add("readURL", st.ReadURL, read)
		add("remoteReadURL", st.RemoteReadURL, read)
		for _, u := range st.MetricsURLs {
			add("metricsURLs", u, read)
		}
	}
	var wg sync.WaitGroup
	for i := range targets {
		t := &targets[i]
		wg.Go(func() { t.conn.Status, t.conn.Err = reach(ctx, t.client, t.conn.URL) })
	}
	wg.Wait()
	out := make([]Connection, len(targets))
	for i, t := range targets {
		t.client.Close()
		out[i] = t.conn
		out[i].URL = config.RedactURL(t.conn.URL)
	}
	return out, nil
}

// reach GETs u through c and returns the status it answered with, or why it did not answer.
func reach(ctx context.Context, c *storage.Client, u string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, errors.New("invalid URL")
	}
	resp, err := c.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // its text quotes the URL, password included
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer in %s", connectTimeout)
		}
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
