package verify

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// natives is what the native read-back uses of the workload (*workload.Part).
type natives interface {
	NativeFamilies() int
	NativeSchemas() map[string]int32
	NativeLabels(target, f int, rev int64) []workload.Label
	NativeHistogram(target, f int, t int64) workload.Histogram
	NativeBucketsSent(f int) bool
}

// The workload bench hands the verifier: a type assertion to natives must not fail unseen.
var _ natives = (*workload.Part)(nil)

// The native read-back checks every native series of at most nativeTargets targets over the
// last nativeWindow of the checked window: a few hundred histograms, a query per series.
const (
	nativeTargets = 5
	nativeWindow  = 10 * time.Minute
)

// nativeRead is one query of the native read-back: a target's family, every revision.
type nativeRead struct {
	selector, buckets string                                  // the native series; their family_bucket series
	bucketsSent       bool                                    // the family's classic _bucket series are sent too
	want              map[string]map[int64]workload.Histogram // by label key, by time
}

// Natives reads back the native histograms from each storage with a query API, over the
// end of [from, to]; nil when the workload sends none.
func (v *Verifier) Natives(ctx context.Context, send string, from, to time.Time) map[string]*results.NativeHistograms {
	nw, ok := v.wl.(natives)
	if !ok || nw.NativeFamilies() == 0 {
		return nil
	}
	w := window{from: max(from.UnixMilli(), to.UnixMilli()-nativeWindow.Milliseconds()), to: to.UnixMilli()}
	reads := v.nativeReads(nw, w)
	out := map[string]*results.NativeHistograms{}
	for _, t := range v.targets {
		res := &results.NativeHistograms{Send: send, Schemas: nw.NativeSchemas()}
		out[t.Name] = res
		if t.ReadURL == "" {
			res.Errors = append(res.Errors, "no query API (readURL): native histograms are read back through it only")
		} else {
			api := query.NewAPI(t.Client, t.ReadURL)
			for _, rd := range reads {
				q := fmt.Sprintf("%s[%dms]", rd.selector, w.to-w.from+1)
				got, err := api.Histograms(ctx, q, time.UnixMilli(w.to))
				if err != nil {
					res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", q, err))
					continue
				}
				compareNatives(rd, got, res)
				q = fmt.Sprintf("%s[%dms]", rd.buckets, w.to-w.from+1)
				if got, err = api.Histograms(ctx, q, time.UnixMilli(w.to)); err != nil {
					res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", q, err))
					continue
				}
				countConverted(rd, got, res)
			}
		}
		res.Verdict = res.NativeVerdict()
		v.log.Info("native histograms read back", "storage", t.Name, "verdict", res.Verdict, "checked", res.CheckedHistograms,
			"kept", res.Kept, "changed", res.Changed, "missing", res.Missing)
	}
	return out
}

// nativeReads lists what the first nativeTargets targets sent in w, family by family.
func (v *Verifier) nativeReads(nw natives, w window) []nativeRead {
	var reads []nativeRead
	for target := range min(nativeTargets, v.wl.Targets()) {
		first, last, ok := scrapeRange(v.wl, target, w, v.interval)
		if !ok {
			continue
		}
		for f := range nw.NativeFamilies() {
			rd := nativeRead{want: map[string]map[int64]workload.Histogram{}, bucketsSent: nw.NativeBucketsSent(f)}
			for k := first; k <= last; k++ {
				t := v.wl.ScrapeTime(target, k)
				ls := nw.NativeLabels(target, f, v.wl.Revision(target, k))
				if rd.selector == "" {
					rd.selector, rd.buckets = selectorOf(ls, ""), selectorOf(ls, "_bucket")
				}
				key := keyOf(ls)
				if rd.want[key] == nil {
					rd.want[key] = map[int64]workload.Histogram{}
				}
				rd.want[key][t] = nw.NativeHistogram(target, f, t)
			}
			reads = append(reads, rd)
		}
	}
	return reads
}

// selectorOf selects a native series (its name with suffix) by job, instance and replica:
// every revision.
func selectorOf(ls []workload.Label, suffix string) string {
	return "{" + strings.Join(append([]string{fmt.Sprintf("__name__=%q", metricNameOf(ls)+suffix)}, targetMatchers(ls)...), ",") + "}"
}

// targetMatchers select a target's series by job, instance and replica.
func targetMatchers(ls []workload.Label) []string {
	var ms []string
	for _, l := range ls {
		switch l.Name {
		case "instance", "job", "replica":
			ms = append(ms, fmt.Sprintf("%s=%q", l.Name, l.Value))
		}
	}
	return ms
}

func metricNameOf(ls []workload.Label) string {
	for _, l := range ls {
		if l.Name == "__name__" {
			return l.Value
		}
	}
	return ""
}

// compareNatives counts rd's histograms in got: kept, changed or missing; float points of
// the same series are counted apart. A url_replica label is left out of the identity.
func compareNatives(rd nativeRead, got []query.HistogramSeries, res *results.NativeHistograms) {
	seen := map[string]map[int64]query.HistogramPoint{}
	for _, s := range got {
		delete(s.Metric, "url_replica")
		key := keyOf(sortedLabels(s.Metric))
		if _, ok := rd.want[key]; !ok {
			continue // another series of the name: a summary's quantiles
		}
		res.FloatPoints += int64(s.Floats)
		if seen[key] == nil {
			seen[key] = map[int64]query.HistogramPoint{}
		}
		for _, p := range s.Histograms {
			seen[key][p.T] = p
		}
	}
	for key, points := range rd.want {
		res.CheckedSeries++
		for t, h := range points {
			res.CheckedHistograms++
			p, ok := seen[key][t]
			switch {
			case !ok:
				res.Missing++
			case sameHistogram(&h, p):
				res.Kept++
			default:
				res.Changed++
				if len(res.Examples) < maxExamples {
					res.Examples = append(res.Examples, fmt.Sprintf("%s at %d: sent %s, got %s", render(labelsFromKey(key)), t, describeHistogram(&h), describePoint(p)))
				}
			}
		}
	}
}

// countConverted counts the float points of family_bucket series that are a native series'
// labels plus a vmrange label (VictoriaMetrics' histogram buckets) or plus an le label that
// no classic series sent: the histograms turned into bucket counters by the storage.
func countConverted(rd nativeRead, got []query.HistogramSeries, res *results.NativeHistograms) {
	for _, s := range got {
		delete(s.Metric, "url_replica")
		s.Metric["__name__"] = strings.TrimSuffix(s.Metric["__name__"], "_bucket")
		_, vmrange := s.Metric["vmrange"]
		_, le := s.Metric["le"]
		delete(s.Metric, "vmrange")
		delete(s.Metric, "le")
		if _, ok := rd.want[keyOf(sortedLabels(s.Metric))]; ok && (vmrange || le && !rd.bucketsSent) {
			res.FloatPoints += int64(s.Floats)
		}
	}
}

// apiBuckets is h as the Prometheus API shows it: the zero bucket, then every non-empty
// positive bucket, left-open.
func apiBuckets(h *workload.Histogram) []query.Bucket {
	var bs []query.Bucket
	if h.ZeroCount > 0 {
		bs = append(bs, query.Bucket{Boundaries: 3, Lower: -h.ZeroThreshold, Upper: h.ZeroThreshold, Count: float64(h.ZeroCount)})
	}
	for i, c := range h.Buckets {
		if c > 0 {
			idx := h.Offset + int32(i)
			bs = append(bs, query.Bucket{Boundaries: 0, Lower: workload.BucketUpper(idx-1, h.Schema), Upper: workload.BucketUpper(idx, h.Schema), Count: float64(c)})
		}
	}
	return bs
}

// sameHistogram: count and counts exactly, the sum bit for bit, bounds to 1e-12 (Prometheus
// computes them from its own table of 2^(i/2^schema)).
func sameHistogram(h *workload.Histogram, p query.HistogramPoint) bool {
	want := apiBuckets(h)
	if p.Count != float64(h.Count) || math.Float64bits(p.Sum) != math.Float64bits(h.Sum) || len(p.Buckets) != len(want) {
		return false
	}
	for i, b := range p.Buckets {
		w := want[i]
		if b.Boundaries != w.Boundaries || b.Count != w.Count || !closeEnough(b.Lower, w.Lower, 1e-12) || !closeEnough(b.Upper, w.Upper, 1e-12) {
			return false
		}
	}
	return true
}

func describeHistogram(h *workload.Histogram) string {
	return describePoint(query.HistogramPoint{Count: float64(h.Count), Sum: h.Sum, Buckets: apiBuckets(h)})
}

func describePoint(p query.HistogramPoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "count=%s sum=%s buckets=[", fmtFloat(p.Count), fmtFloat(p.Sum))
	for i, bk := range p.Buckets {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%s..%s=%s", bk.Boundaries, fmtFloat(bk.Lower), fmtFloat(bk.Upper), fmtFloat(bk.Count))
	}
	b.WriteByte(']')
	return b.String()
}
