package verify

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// haSource is a Workload written by an HA pair (series.haReplicas): *workload.Part.
type haSource interface {
	HAReplicas() int
	HAReplicaOf(j int) int
	HAOffset() time.Duration
	HALabels(j, s int) []workload.Label
	HAReplicaName(r int) string
	HASeries(n int) []int
}

// The HA read-back looks at haSeries series of each of haTargets targets, over the last
// haScrapes scrapes of the window: enough to see which copies a storage keeps and whether
// the one it keeps changes, in a handful of queries.
const haTargets, haSeries, haScrapes = 3, 4, 30

// HA reads back, per storage, which HA replicas' copies of a few series' scrapes in [from,
// to] it returns; nil without HA pairs. A storage without a query API gets an Error.
func (v *Verifier) HA(ctx context.Context, from, to time.Time) map[string]*results.VerifyHA {
	hs, ok := v.wl.(haSource)
	if !ok || hs.HAReplicas() < 2 {
		return nil
	}
	select {
	case <-ctx.Done():
	case <-time.After(v.Settle):
	}
	out := map[string]*results.VerifyHA{}
	for _, t := range v.targets {
		h := &results.VerifyHA{Replicas: hs.HAReplicas(), StoredByReplica: map[string]int64{}}
		var c results.HACounts
		if r := newReader(t); r.api == nil {
			h.Error = "no query API (readURL): the HA read-back needs raw samples by PromQL"
		} else {
			h.Error = v.readHA(ctx, r, hs, h, &c, from.UnixMilli(), to.UnixMilli())
		}
		h.Winner = haWinner(hs, h, c)
		h.SetCounts(c, "no scrape in the checked window has every copy and its next scrape written in it (a window shorter than a scrape interval and the HA offset)")
		out[t.Name] = h
	}
	return out
}

// readHA tallies the copies stored of haSeries series of the first haTargets targets of
// replica 0; it returns why a read failed, "" if none did.
func (v *Verifier) readHA(ctx context.Context, r *reader, hs haSource, h *results.VerifyHA, c *results.HACounts, from, to int64) string {
	start := max(from, to-haScrapes*v.interval)
	seen := 0
	for j := 0; j < v.wl.Targets() && seen < haTargets; j++ {
		if hs.HAReplicaOf(j) != 0 {
			continue
		}
		seen++
		for _, s := range hs.HASeries(haSeries) {
			q := haSelector(hs.HALabels(j, s)) + "[" + strconv.FormatInt(to-start, 10) + "ms]"
			got, err := r.instant(ctx, q, to)
			if err != nil {
				return describeErr(err)
			}
			v.tallyHA(hs, h, c, got, j, start, to)
		}
	}
	return ""
}

// tallyHA counts in c (CheckedScrapes and StoredByReplica in h), for each scrape of target j whose every copy lies in (start, to], which
// replicas' copies the answer holds: a copy is told by its timestamp. A scrape counts once
// the next one is written too: deduplication by interval (VictoriaMetrics keeps the last
// sample of each minScrapeInterval) decides on a scrape's copies only beside the next's.
func (v *Verifier) tallyHA(hs haSource, h *results.VerifyHA, c *results.HACounts, got *result, j int, start, to int64) {
	at := map[int64]bool{}
	for _, s := range got.Series {
		for _, p := range s.Points {
			at[p.T] = true
		}
	}
	n, off := hs.HAReplicas(), hs.HAOffset().Milliseconds()
	last := -1 // the replica stored alone at the previous scrape
	for k := int64(0); ; k++ {
		t0 := v.wl.ScrapeTime(j, k)
		if t0+v.interval+int64(n-1)*off > to {
			break
		}
		if t0 <= start {
			continue
		}
		h.CheckedScrapes++
		stored, only := 0, -1
		for rep := range n {
			if at[t0+int64(rep)*off] {
				stored, only = stored+1, rep
				h.StoredByReplica[hs.HAReplicaName(rep)]++
			}
		}
		switch {
		case stored == n:
			c.AllCopies++
		case stored == 0:
			c.Gaps++
		case stored > 1:
			c.Partial++
		default:
			c.OneCopy++
			if last >= 0 && last != only {
				c.Switchovers++
			}
			last = only
		}
	}
}

// haWinner is the replica stored most often, "" when no scrape had one copy.
func haWinner(hs haSource, h *results.VerifyHA, c results.HACounts) string {
	if c.OneCopy == 0 {
		return ""
	}
	best, most := "", int64(-1)
	for rep := range hs.HAReplicas() {
		if c := h.StoredByReplica[hs.HAReplicaName(rep)]; c > most {
			best, most = hs.HAReplicaName(rep), c
		}
	}
	return best
}

// haSelector selects a series whatever its pod: the instance of any of the target's pods.
func haSelector(ls []workload.Label) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		if l.Name == "instance" {
			host, port, _ := strings.Cut(l.Value, ":")
			b.WriteString("instance=~" + quote(regexp.QuoteMeta(host)+"(-[^:]*)?:"+regexp.QuoteMeta(port)))
			continue
		}
		b.WriteString(l.Name + "=" + quote(l.Value))
	}
	b.WriteByte('}')
	return b.String()
}
