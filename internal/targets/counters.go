package targets

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tsbench/tsbench/internal/config"
)

// Counters is an agent's own account, read from its /metrics: what it scraped and took in to
// send, and per storage (its remotes added up) what it had, acked, dropped and holds pending.
type Counters struct {
	// Scraped is the samples the agent says it scraped; nil when it does not count them
	// (Prometheus).
	Scraped *int64
	// Appended is every sample the agent took in to send: scraped, its own series per scrape
	// (up, scrape_duration_seconds, ...) and the staleness markers it writes.
	Appended int64
	// ScrapesTimedOut is how many scrapes the agent gave up on (vmagent); nil when it does not
	// count them (Prometheus).
	ScrapesTimedOut *int64
	Storages        map[string]*Account
}

// Account is one storage's part of an agent's account, in samples.
type Account struct {
	In      int64 // samples queued for the storage
	Acked   int64
	Dropped map[string]int64 // by reason
	Pending int64
	Retried int64
	// Known is false when the agent's counters cannot give Acked and Pending in samples
	// (vmagent counts pending data in bytes): Why says so, and PendingBytes what is left.
	Known        bool
	Why          string
	PendingBytes int64
}

// Unexplained is In less what the agent says became of it: 0 when its counters add up.
func (a *Account) Unexplained() int64 {
	d := a.In - a.Acked - a.Pending
	for _, v := range a.Dropped {
		d -= v
	}
	return d
}

// ReadCounters fetches metricsURL and reads the account of an agent of kind sender.
func ReadCounters(ctx context.Context, client *http.Client, metricsURL, sender string, remotes []Remote) (*Counters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read the agent's counters: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, fmt.Errorf("read the agent's counters: %s: status %s", config.RedactURL(metricsURL), resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse the agent's counters: %w", err)
	}
	return countersOf(sender, metricSums(fams), remotes), nil
}

// sums holds, per metric name, its samples keyed by their label pairs.
type sums map[string][]labeled

type labeled struct {
	labels map[string]string
	v      float64
}

func metricSums(fams map[string]*dto.MetricFamily) sums {
	out := sums{}
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			ls := map[string]string{}
			for _, lp := range m.GetLabel() {
				ls[lp.GetName()] = lp.GetValue()
			}
			var v float64
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			case m.Summary != nil:
				out[name+"_sum"] = append(out[name+"_sum"], labeled{ls, m.GetSummary().GetSampleSum()})
				v = float64(m.GetSummary().GetSampleCount())
				name := name + "_count"
				out[name] = append(out[name], labeled{ls, v})
				continue
			case m.Histogram != nil:
				out[name+"_sum"] = append(out[name+"_sum"], labeled{ls, m.GetHistogram().GetSampleSum()})
				name := name + "_count"
				out[name] = append(out[name], labeled{ls, float64(m.GetHistogram().GetSampleCount())})
				continue
			}
			out[name] = append(out[name], labeled{ls, v})
		}
	}
	return out
}

// sum adds the samples of name whose labels include match.
func (s sums) sum(name string, match map[string]string) int64 {
	var t float64
	for _, l := range s[name] {
		ok := true
		for k, v := range match {
			ok = ok && l.labels[k] == v
		}
		if ok {
			t += l.v
		}
	}
	return int64(t)
}

func countersOf(sender string, s sums, remotes []Remote) *Counters {
	c := &Counters{Storages: map[string]*Account{}}
	acc := func(storage string) *Account {
		a := c.Storages[storage]
		if a == nil {
			a = &Account{Dropped: map[string]int64{}, Known: true}
			c.Storages[storage] = a
		}
		return a
	}
	switch sender {
	case config.SenderPrometheusAgent:
		c.Appended = s.sum("prometheus_remote_storage_samples_in_total", nil)
		for _, r := range remotes {
			m := map[string]string{"remote_name": r.Name}
			a := acc(r.Storage)
			// samples_total counts every attempt: a retried batch counts again, a failed one once.
			sent := s.sum("prometheus_remote_storage_samples_total", m)
			retried := s.sum("prometheus_remote_storage_samples_retried_total", m)
			failed := s.sum("prometheus_remote_storage_samples_failed_total", m)
			a.In += c.Appended
			a.Acked += sent - retried - failed
			a.Retried += retried
			a.Pending += s.sum("prometheus_remote_storage_samples_pending", m)
			add(a.Dropped, "failed", failed)
			add(a.Dropped, "dropped", s.sum("prometheus_remote_storage_samples_dropped_total", m))
		}
	case config.SenderVMAgent:
		scraped := s.sum("vm_promscrape_scraped_samples_sum", nil)
		timedOut := s.sum("vm_promscrape_scrapes_timed_out_total", nil)
		c.Scraped, c.ScrapesTimedOut = &scraped, &timedOut
		c.Appended = s.sum("vmagent_remotewrite_global_rows_pushed_before_relabel_total", nil)
		// vmagent names a remote by its position among -remoteWrite.url, from 1.
		var made int64 // rows queued for every remote, to compare with the rows put in blocks
		for i, r := range remotes {
			m := map[string]string{"url": strconv.Itoa(i+1) + ":secret-url"}
			a := acc(r.Storage)
			in := s.sum("vmagent_remotewrite_rows_pushed_after_relabel_total", m)
			made += in
			a.In += in
			a.Acked += in
			a.Retried += s.sum("vmagent_remotewrite_retries_count_total", m)
			add(a.Dropped, "relabel", s.sum("vmagent_remotewrite_relabel_metrics_dropped_total", m))
			a.In += a.Dropped["relabel"]
			bytes := s.sum("vmagent_remotewrite_pending_data_bytes", m)
			blocks := s.sum("vmagent_remotewrite_pending_inmemory_blocks", m)
			packets := s.sum("vmagent_remotewrite_packets_dropped_total", m)
			a.PendingBytes += bytes
			var why []string
			if bytes > 0 || blocks > 0 {
				why = append(why, fmt.Sprintf("%d bytes and %d blocks pending (vmagent counts pending data in bytes, not samples)", bytes, blocks))
			}
			if packets > 0 {
				why = append(why, fmt.Sprintf("%d packets dropped (vmagent counts dropped packets, not samples)", packets))
			}
			if len(why) > 0 {
				a.Known = false
				a.Why = strings.Join(why, "; ")
			}
		}
		// Rows are put in blocks every -remoteWrite.flushInterval: until every queued row is in a
		// block sent or pending, some are in vmagent's buffers, counted nowhere in samples.
		if blocked := s.sum("vmagent_remotewrite_block_size_rows_sum", nil); blocked != made {
			for _, a := range c.Storages {
				if a.Known {
					a.Known = false
					a.Why = fmt.Sprintf("%d samples in vmagent's buffers, not yet in blocks", made-blocked)
				}
			}
		}
	}
	return c
}

func add(m map[string]int64, reason string, n int64) {
	if n != 0 {
		m[reason] += n
	}
}
