package verify

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
	"github.com/tsbench/tsbench/internal/storage/storagetest"
	"github.com/tsbench/tsbench/internal/workload"
)

// haTracker is the Cortex/Mimir distributor's HA tracker rule, as Mimir's documentation
// ("Configure high-availability deduplication") states it, in front of a receiver: per
// request, the cluster and replica labels of its first series decide; the first replica seen
// of a cluster is elected, and stays elected while it sends (failover after FailoverTimeout,
// 30 s by default, without its samples); the elected replica's samples are accepted with the
// replica label removed, the others' answered 202 Accepted and dropped. A request without
// both labels is passed on as is. No real Mimir runs here: this is the rule, not Mimir.
type haTracker struct {
	next                 string // the receiver's write URL
	cluster, replica     string // label names
	mu                   sync.Mutex
	leader               map[string]string
	requests, duplicates map[string]int // by replica label value
	mixed                int            // requests with series of more than one replica
}

func (h *haTracker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	raw, err := snappy.Decode(nil, body)
	var req prompb.WriteRequest
	if err == nil {
		err = req.Unmarshal(raw)
	}
	if err != nil {
		http.Error(w, "not a remote write 1.0 request: "+err.Error(), http.StatusBadRequest)
		return
	}
	cluster, replica := h.labelsOf(req)
	if cluster != "" && replica != "" {
		h.mu.Lock()
		h.requests[replica]++
		if h.mixes(req, replica) {
			h.mixed++
		}
		if h.leader[cluster] == "" {
			h.leader[cluster] = replica
		}
		elected := h.leader[cluster] == replica
		if !elected {
			h.duplicates[replica]++
		}
		h.mu.Unlock()
		if !elected {
			w.WriteHeader(http.StatusAccepted) // as the distributor answers deduplicated samples
			return
		}
		h.dropReplicaLabel(&req)
		if raw, err = req.Marshal(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		body = snappy.Encode(nil, raw)
	}
	fwd, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, h.next, bytes.NewReader(body))
	fwd.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(fwd)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// labelsOf is the cluster and replica label values of the request's first series.
func (h *haTracker) labelsOf(req prompb.WriteRequest) (cluster, replica string) {
	if len(req.Timeseries) == 0 {
		return "", ""
	}
	for _, l := range req.Timeseries[0].Labels {
		switch l.Name {
		case h.cluster:
			cluster = l.Value
		case h.replica:
			replica = l.Value
		}
	}
	return cluster, replica
}

// mixes reports whether a series of req lacks replica's label value: the tracker would
// treat it as replica's.
func (h *haTracker) mixes(req prompb.WriteRequest, replica string) bool {
	for _, ts := range req.Timeseries {
		if !slices.ContainsFunc(ts.Labels, func(l prompb.Label) bool { return l.Name == h.replica && l.Value == replica }) {
			return true
		}
	}
	return false
}

func (h *haTracker) dropReplicaLabel(req *prompb.WriteRequest) {
	for i, ts := range req.Timeseries {
		out := ts.Labels[:0]
		for _, l := range ts.Labels {
			if l.Name != h.replica {
				out = append(out, l)
			}
		}
		req.Timeseries[i].Labels = out
	}
}

// TestHAPairThroughTracker writes an HA pair with cluster and __replica__ labels through the
// HA tracker's rule into Prometheus' own receiver: every request carries one replica and both
// labels on its first series (else the tracker would pass it, or the wrong replica's samples,
// on); the account counts every copy acked (202 is a success, as Prometheus counts it); the
// read-back says one copy stored, replica a's, no switch-over and no gap.
func TestHAPairThroughTracker(t *testing.T) {
	p := testProfile(t)
	recv := startReceiver(t, storagetest.Options{})
	tracker := &haTracker{
		next: recv.URL + storagetest.WritePath, cluster: "cluster", replica: "__replica__",
		leader: map[string]string{}, requests: map[string]int{}, duplicates: map[string]int{},
	}
	srv := httptest.NewServer(tracker)
	t.Cleanup(srv.Close)
	cfg := config.Default()
	cfg.ScrapeInterval, cfg.TargetsCount = 100*time.Millisecond, 4
	st := config.Storage{WriteURL: srv.URL + storagetest.WritePath, ReadURL: recv.URL}
	cfg.RemoteStorages = map[string]config.Storage{"mimir": st}
	start := time.Now()
	gen, err := workload.New(p, workload.Options{
		Seed: 1, Start: start, Hosts: cfg.TargetsCount, ScrapeInterval: cfg.ScrapeInterval,
		HA: workload.HA{
			Replicas: 2, Offset: 33 * time.Millisecond, ClusterName: "cluster", ClusterValue: "bench",
			ReplicaName: "__replica__", ReplicaValue: []string{"a", "b"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := writeFor(t, &cfg, gen.Part(0, 1), 2*time.Second, 50*time.Millisecond)
	acct := w.Results("mimir")
	if ok, diff := acct.Balanced(); !ok || acct.Dropped() != 0 || acct.AckedSamples != acct.GeneratedSamples {
		t.Errorf("account: generated %d acked %d dropped %v, off by %d: want every copy acked", acct.GeneratedSamples, acct.AckedSamples, acct.DroppedSamples, diff)
	}
	tracker.mu.Lock()
	t.Logf("tracker: requests by replica %v, answered 202 %v, leader %v; account: generated %d acked %d", tracker.requests, tracker.duplicates, tracker.leader, acct.GeneratedSamples, acct.AckedSamples)
	if tracker.requests["a"] == 0 || tracker.requests["b"] == 0 || tracker.duplicates["b"] != tracker.requests["b"] || tracker.duplicates["a"] != 0 || tracker.mixed != 0 {
		t.Errorf("tracker saw requests %v, answered 202 to %v, %d mixing replicas: want both replicas' requests, every one of b's deduplicated, none mixed", tracker.requests, tracker.duplicates, tracker.mixed)
	}
	tracker.mu.Unlock()
	client, err := storage.NewClient("mimir", st, storage.Read, 2)
	if err != nil {
		t.Fatal(err)
	}
	v := New(&cfg, gen.Part(0, 1), []Target{{Name: "mimir", ReadURL: recv.URL, Client: client, Kind: storage.KindPrometheus}}, nil, slog.New(slog.DiscardHandler))
	v.Settle = 0
	h := v.HA(t.Context(), start, w.GeneratedBefore().Add(-time.Millisecond))["mimir"]
	t.Logf("verify.ha %+v", h)
	if h == nil || h.Stored != results.HAStoredOne || h.Winner != "a" || h.Switchovers == nil || *h.Switchovers != 0 || *h.Gaps != 0 || *h.OneCopy != h.CheckedScrapes || h.CheckedScrapes == 0 {
		t.Errorf("verify.ha %+v: want one copy of every scrape, replica a's", h)
	}
	// Stored under the labels without __replica__, as the tracker leaves them.
	got, err := recv.Series(start.UnixMilli(), time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	for key := range got {
		if bytes.Contains([]byte(key), []byte("__replica__")) {
			t.Fatalf("series %s stored with the replica label", key)
		}
	}
}

// TestTallyHA: the copies an answer holds, told by timestamp, make the counts: replica a's
// copies of scrapes 1-4, b's of 5-6, none of 7, a's of 8, both of 9 → 2 switch-overs,
// 1 gap, 1 scrape with every copy, a the winner; scrape 10 is left out (its next scrape is
// after the window), scrape 0 too (before it).
func TestTallyHA(t *testing.T) {
	p := testProfile(t)
	cfg := config.Default()
	cfg.ScrapeInterval = 10 * time.Second
	gen, err := workload.New(p, workload.Options{
		Seed: 3, Start: time.UnixMilli(1_700_000_000_000), Hosts: 2, ScrapeInterval: cfg.ScrapeInterval,
		HA: workload.HA{Replicas: 2, Offset: 2 * time.Second, ReplicaName: "replica", ReplicaValue: []string{"a", "b"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	part := gen.Part(0, 1)
	v := New(&cfg, part, nil, nil, slog.New(slog.DiscardHandler))
	at := func(k int64, rep int) point { return point{T: part.ScrapeTime(0, k) + int64(rep)*2000, V: 1} }
	var pts []point
	for k, reps := range map[int64][]int{0: {0}, 1: {0}, 2: {0}, 3: {0}, 4: {0}, 5: {1}, 6: {1}, 8: {0}, 9: {0, 1}, 10: {0, 1}} {
		for _, r := range reps {
			pts = append(pts, at(k, r))
		}
	}
	h := &results.VerifyHA{Replicas: 2, StoredByReplica: map[string]int64{}}
	var c results.HACounts
	v.tallyHA(part, h, &c, &result{Series: []series{{Points: pts}}}, 0, part.ScrapeTime(0, 0), part.ScrapeTime(0, 11)-1)
	h.Winner = haWinner(part, h, c)
	h.SetCounts(c, "")
	want := results.HACounts{AllCopies: 1, OneCopy: 7, Gaps: 1, Switchovers: 2}
	if h.Stored != results.HAStoredMixed || h.Winner != "a" || c != want || h.CheckedScrapes != 9 || *h.Gaps != 1 ||
		h.StoredByReplica["a"] != 6 || h.StoredByReplica["b"] != 3 {
		t.Errorf("tally %+v, want %+v", h, want)
	}
}
