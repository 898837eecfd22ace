package conformance

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
)

// slice is how much time one write request covers. Prometheus' TSDB refuses a sample more
// than an hour (half its head chunk range) older than the newest it holds ("out of bounds"),
// so samples go in time order, in requests of at most 30 minutes of every series.
const slice = 30 * time.Minute

// series is one series of a placed block with its samples at absolute times.
type series struct {
	labels  labels.Labels
	samples []Sample
}

// blockSeries are the series of a block's loads at base, floats and native histograms, their
// samples inside the block's intervals only (no eval reads the others); a series loaded twice
// keeps the first load's sample at a time, as the runner's storage does.
func blockSeries(p Placed, ivs []span) []series {
	byHash := map[uint64]*series{}
	var order []uint64
	for _, l := range p.Loads {
		for _, s := range l.Series {
			h := s.Labels.Hash()
			out, ok := byHash[h]
			if !ok {
				out = &series{labels: s.Labels}
				byHash[h] = out
				order = append(order, h)
			}
			for _, smp := range s.Samples {
				if inside(ivs, smp.T) {
					smp.T += p.Base
					out.samples = append(out.samples, smp)
				}
			}
		}
	}
	out := make([]series, 0, len(order))
	for _, h := range order {
		if s := byHash[h]; len(s.samples) > 0 {
			slices.SortStableFunc(s.samples, func(a, b Sample) int { return cmp.Compare(a.T, b.T) })
			s.samples = slices.CompactFunc(s.samples, func(a, b Sample) bool { return a.T == b.T })
			out = append(out, *s)
		}
	}
	return out
}

func inside(ivs []span, t int64) bool {
	for _, s := range ivs {
		if t >= s.lo && t <= s.hi {
			return true
		}
	}
	return false
}

// writer sends blocks to one storage's remote write endpoint.
type writer struct {
	client *storage.Client
	url    string
	proto  config.Protocol
	// retries counts the requests sent again, by the status that asked for it; gaveUp is
	// set once a request's retries ran out (one goroutine writes: writeAll's).
	retries map[string]int
	gaveUp  bool
}

// writeAll sends every block's series in time order: one request per block and time slice,
// slice after slice, so that no sample is older than a slice before the newest sent. A block
// whose request is refused is not sent further; its error is returned at its index.
func (w *writer) writeAll(ctx context.Context, blocks [][]series) []error {
	errs := make([]error, len(blocks))
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, ss := range blocks {
		for _, s := range ss {
			lo, hi = min(lo, s.samples[0].T), max(hi, s.samples[len(s.samples)-1].T)
		}
	}
	step := slice.Milliseconds()
	for from := lo; from <= hi && ctx.Err() == nil; from += step {
		for i, ss := range blocks {
			if errs[i] != nil {
				continue
			}
			part := cut(ss, from, from+step)
			if len(part) == 0 {
				continue
			}
			body, err := w.encode(part)
			if err == nil {
				err = w.post(ctx, body)
			}
			errs[i] = err
		}
	}
	return errs
}

// cut keeps the samples in [from, to).
func cut(ss []series, from, to int64) []series {
	var out []series
	for _, s := range ss {
		i, _ := slices.BinarySearchFunc(s.samples, from, func(a Sample, t int64) int { return cmp.Compare(a.T, t) })
		j, _ := slices.BinarySearchFunc(s.samples, to, func(a Sample, t int64) int { return cmp.Compare(a.T, t) })
		if i < j {
			out = append(out, series{labels: s.labels, samples: s.samples[i:j]})
		}
	}
	return out
}

func (w *writer) encode(ss []series) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	if w.proto == config.ProtocolRW2 {
		st := writev2.NewSymbolTable()
		req := &writev2.Request{}
		for _, s := range ss {
			refs := st.SymbolizeLabels(s.labels, nil)
			for _, run := range runs(s.samples) {
				req.Timeseries = append(req.Timeseries, timeSeriesV2(refs, run))
			}
		}
		req.Symbols = st.Symbols()
		b, err = req.Marshal()
	} else {
		req := &prompb.WriteRequest{}
		for _, s := range ss {
			ls := prompb.FromLabels(s.labels, nil)
			for _, run := range runs(s.samples) {
				req.Timeseries = append(req.Timeseries, timeSeriesV1(ls, run))
			}
		}
		b, err = req.Marshal()
	}
	if err != nil {
		return nil, err
	}
	return s2.EncodeSnappy(nil, b), nil
}

// post sends one request, and again after an answer that asks to try later (429, 503, and
// a proxy's 502 and 504: as remote write clients retry, internal/remotewrite) with
// exponential backoff or the answer's Retry-After, until requestTimeout has passed since the
// first attempt. Each retry is counted by the status that asked for it (writer.retries); the
// answer that stopped them is the error. A 500 is the storage's answer to the data
// (Prometheus 2.42 answers it to a native histogram it finds invalid) and is not retried;
// once one request's retries ran out, no other is retried (gaveUp): the storage is not
// coming back, and each of its blocks would wait in vain.
func (w *writer) post(ctx context.Context, body []byte) error {
	first := time.Now()
	backoff := minBackoff
	for {
		status, wait, err := w.postOnce(ctx, body)
		if w.gaveUp || !retried(status) {
			return err
		}
		if wait == 0 {
			wait, backoff = backoff, min(2*backoff, maxBackoff)
		}
		if time.Since(first)+wait > requestTimeout {
			w.gaveUp = true
			return fmt.Errorf("%w (retried for %s)", err, time.Since(first).Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		if w.retries == nil {
			w.retries = map[string]int{}
		}
		w.retries[strconv.Itoa(status)]++
	}
}

// retried tells an answer that asks to try later.
func retried(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Backoff between retries of a write, as Prometheus' min_backoff and max_backoff.
const (
	minBackoff = 30 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// postOnce sends one request: its answer's status (0 when none came), the wait its
// Retry-After asks for, and an error unless the storage took it.
func (w *writer) postOnce(ctx context.Context, body []byte) (status int, wait time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Encoding", "snappy")
	if w.proto == config.ProtocolRW2 {
		req.Header.Set("Content-Type", "application/x-protobuf;proto=io.prometheus.write.v2.Request")
		req.Header.Set("X-Prometheus-Remote-Write-Version", "2.0.0")
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	}
	resp, err := w.client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // the URL is the config's, and may carry a secret
		}
		return 0, 0, fmt.Errorf("remote write: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("remote write answered %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return resp.StatusCode, 0, nil
}

// retryAfter is the wait a Retry-After value asks for, in seconds or as an HTTP date; 0 when
// it asks for none or cannot be read.
func retryAfter(v string) time.Duration {
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}
