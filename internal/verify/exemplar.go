package verify

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// exemplars is what the exemplar read-back uses of the workload (*workload.Part).
type exemplars interface {
	Exemplars(target int, k int64) []workload.LabeledExemplar
}

var _ exemplars = (*workload.Part)(nil)

// exemplarRead is one target's query of the exemplar read-back and what it must return.
type exemplarRead struct {
	selector string
	want     map[string]workload.Exemplar // by series key and time
}

// Exemplars reads back the exemplars of the first nativeTargets targets over the end of
// [from, to] from each storage with a query API (/api/v1/query_exemplars).
func (v *Verifier) Exemplars(ctx context.Context, percent float64, from, to time.Time) map[string]*results.Exemplars {
	ew, ok := v.wl.(exemplars)
	if !ok {
		return nil
	}
	w := window{from: max(from.UnixMilli(), to.UnixMilli()-nativeWindow.Milliseconds()), to: to.UnixMilli()}
	out := map[string]*results.Exemplars{}
	for _, t := range v.targets {
		res := &results.Exemplars{Percent: percent}
		out[t.Name] = res
		if t.ReadURL == "" {
			res.Errors = append(res.Errors, "no query API (readURL): exemplars are read back through it only")
		} else {
			api := query.NewAPI(t.Client, t.ReadURL)
			for _, rd := range v.exemplarReads(ew, w, t.Protocol) {
				got, err := api.Exemplars(ctx, rd.selector, time.UnixMilli(w.from), time.UnixMilli(w.to))
				if err != nil {
					res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", rd.selector, err))
					continue
				}
				compareExemplars(rd, got, res)
			}
		}
		res.Verdict = res.ExemplarVerdict()
		if res.Verdict == results.VerdictUnknown {
			res.Reason = fmt.Sprintf("no exemplar was sent in the window read (the first %d targets' scrapes in the last %s of the checked window)", nativeTargets, nativeWindow)
		}
		v.log.Info("exemplars read back", "storage", t.Name, "verdict", res.Verdict, "checked", res.Checked, "kept", res.Kept)
	}
	return out
}

// exemplarReads lists, per target, the exemplars its scrapes in w carried, under the names a
// storage written in proto stores their series.
func (v *Verifier) exemplarReads(ew exemplars, w window, proto config.Protocol) []exemplarRead {
	var reads []exemplarRead
	for target := range min(nativeTargets, v.wl.Targets()) {
		first, last, ok := scrapeRange(v.wl, target, w, v.interval)
		if !ok {
			continue
		}
		rd := exemplarRead{want: map[string]workload.Exemplar{}}
		for k := first; k <= last; k++ {
			for _, e := range ew.Exemplars(target, k) {
				ls := e.Labels
				if rd.selector == "" {
					rd.selector = "{" + strings.Join(targetMatchers(ls), ",") + "}"
				}
				if to, ok := v.otlp[metricNameOf(ls)]; ok && proto == config.ProtocolOTLP {
					ls = slices.Clone(ls)
					for i, l := range ls {
						if l.Name == "__name__" {
							ls[i].Value = to
						}
					}
				}
				rd.want[exemplarKey(keyOf(ls), e.T)] = e.Exemplar
			}
		}
		if len(rd.want) > 0 {
			reads = append(reads, rd)
		}
	}
	return reads
}

func exemplarKey(series string, t int64) string { return series + "@" + strconv.FormatInt(t, 10) }

// compareExemplars counts rd's exemplars in got: kept (trace_id, value bits and time as
// sent), changed (another trace id or value at the series and time), or missing.
func compareExemplars(rd exemplarRead, got []query.ExemplarSeries, res *results.Exemplars) {
	seen := map[string]query.ExemplarPoint{}
	for _, s := range got {
		delete(s.SeriesLabels, "url_replica")
		key := keyOf(sortedLabels(s.SeriesLabels))
		for _, e := range s.Exemplars {
			seen[exemplarKey(key, e.T)] = e
		}
	}
	for key, want := range rd.want {
		res.Checked++
		got, ok := seen[key]
		switch {
		case !ok:
			res.Missing++
			if len(res.Examples) < maxExamples {
				res.Examples = append(res.Examples, fmt.Sprintf("%s: sent trace_id=%s value=%s, not returned", key, want.TraceID, fmtFloat(want.Value)))
			}
		case got.Labels[workload.ExemplarLabel] == want.TraceID && math.Float64bits(got.Value) == math.Float64bits(want.Value):
			res.Kept++
		default:
			res.Changed++
			if len(res.Examples) < maxExamples {
				res.Examples = append(res.Examples, fmt.Sprintf("%s: sent trace_id=%s value=%s, got %v value=%s",
					key, want.TraceID, fmtFloat(want.Value), got.Labels, fmtFloat(got.Value)))
			}
		}
	}
}
