package remotewrite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/workload"
)

// Canary writes tsbench's freshness canary to one storage: a few samples per request, in the
// storage's protocol, to its first write URL, outside the workload's pipelines and account.
// It is used by one goroutine at a time.
type Canary struct {
	url    string
	client *storage.Client
	wire   wire
	agent  string
	enc    encoder // the protocol's, without metadata
	out    [wires]request
	pk     packer
}

// NewCanary makes the canary writer of storage st, written through client.
func NewCanary(st config.Storage, client *storage.Client) (*Canary, error) {
	urls := st.WriteURLs()
	if len(urls) == 0 {
		return nil, fmt.Errorf("no writeURL")
	}
	return &Canary{
		url: urls[0], client: client, wire: wireOf(st), agent: "tsbench/" + version(),
		enc: newEncoder(only(wireOf(st)), metadata{}, nil, nil), pk: packer{snappy: s2.EncodeSnappy},
	}, nil
}

// Write sends one sample per label set, each at t with value v, and returns when the storage
// answered: its status (0 when none came), and an error for anything but a 2xx (the ack).
func (c *Canary) Write(ctx context.Context, series [][]workload.Label, t int64, v float64) (int, error) {
	for _, ls := range series {
		c.enc.Append(ls, t, v)
	}
	c.enc.flush(&c.out)
	body := c.pk.pack(c.wire, c.out[c.wire].body)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	setHeaders(req.Header, c.wire, c.agent)
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("canary write: %s", redactErr(err, c.url))
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("canary write: http %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return resp.StatusCode, nil
}
