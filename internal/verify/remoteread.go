package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/storage"
)

// remoteReader reads raw samples through Prometheus remote read: a snappy-compressed
// prompb.ReadRequest, answered with the SAMPLES response type, which every implementation
// serves (InfluxDB 1.x at /api/v1/prom/read?db=, Prometheus at /api/v1/read).
// It is the read-back of a storage without the query API: like VictoriaMetrics' export, it
// shows what is stored with no query engine in between, staleness markers included.
type remoteReader struct {
	client *storage.Client
	url    string // remoteReadURL, secrets and all: never put in an error
}

// maxReadBody bounds an answer, compressed and decompressed: a unit holds at most
// maxSamplesPerRead samples, a few MiB.
const maxReadBody = 256 << 20

// read asks for the samples of the series matching every label of sel (equality matchers)
// with timestamps in [start, end] ms.
func (r *remoteReader) read(ctx context.Context, sel []label, start, end int64) (*result, error) {
	q := &prompb.Query{StartTimestampMs: start, EndTimestampMs: end}
	for _, l := range sel {
		q.Matchers = append(q.Matchers, &prompb.LabelMatcher{Type: prompb.LabelMatcher_EQ, Name: l.Name, Value: l.Value})
	}
	rr := &prompb.ReadRequest{
		Queries:               []*prompb.Query{q},
		AcceptedResponseTypes: []prompb.ReadRequest_ResponseType{prompb.ReadRequest_SAMPLES},
	}
	data, err := rr.Marshal()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(snappy.Encode(nil, data)))
	if err != nil {
		return nil, errors.New("remote read: bad remoteReadURL") // the URL may carry a password
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Read-Version", "0.1.0")
	resp, err := r.client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // the URL may carry a password (InfluxDB's ?p=)
		}
		return nil, fmt.Errorf("remote read: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReadBody+1))
	if err != nil {
		return nil, fmt.Errorf("remote read: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("remote read: http %d: %s", resp.StatusCode, clipText(string(body), 200))
	}
	return decodeReadResponse(body)
}

// decodeReadResponse decodes a snappy-compressed prompb.ReadResponse of one query into a
// matrix, labels sorted by name.
func decodeReadResponse(body []byte) (*result, error) {
	if len(body) > maxReadBody {
		return nil, fmt.Errorf("remote read: answer larger than %d bytes", maxReadBody)
	}
	n, err := snappy.DecodedLen(body)
	if err != nil {
		return nil, fmt.Errorf("remote read: snappy: %w", err)
	}
	if n > maxReadBody {
		return nil, fmt.Errorf("remote read: answer of %d bytes decompressed, more than %d", n, maxReadBody)
	}
	data, err := snappy.Decode(nil, body)
	if err != nil {
		return nil, fmt.Errorf("remote read: snappy: %w", err)
	}
	var resp prompb.ReadResponse
	if err := resp.Unmarshal(data); err != nil {
		return nil, fmt.Errorf("remote read: %w", err)
	}
	if len(resp.Results) != 1 {
		return nil, fmt.Errorf("remote read: %d results for 1 query", len(resp.Results))
	}
	res := &result{Type: "matrix"}
	for _, ts := range resp.Results[0].Timeseries {
		if ts == nil {
			continue
		}
		m := make(map[string]string, len(ts.Labels))
		for _, l := range ts.Labels {
			m[l.Name] = l.Value
		}
		s := series{Labels: sortedLabels(m), Points: make([]point, len(ts.Samples))}
		for i, smp := range ts.Samples {
			s.Points[i] = point{T: smp.Timestamp, V: smp.Value}
		}
		res.Series = append(res.Series, s)
	}
	return res, nil
}

// clipText keeps an answer's text short enough for a report.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
