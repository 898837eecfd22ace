package verify

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/workload"
)

// created is what the created-timestamp read-back uses of the workload (*workload.Part).
type created interface {
	ProcessStart(target int) int64
	Series(s int) workload.Series
}

var _ created = (*workload.Part)(nil)

// startKeeper collects the series of one scrape that carry a created timestamp: counters,
// histograms and summaries (gauges and untyped series have none).
type startKeeper struct {
	types    map[string]string // sample name → profile type
	rename   map[string]string // sample name → name stored (OTLP), nil for none
	selector string
	keys     map[string]bool
}

func (s *startKeeper) Append(ls []workload.Label, _ int64, _ float64) {
	name := metricNameOf(ls)
	if typ := s.types[name]; typ != "counter" && typ != "histogram" && typ != "summary" {
		return
	}
	if s.selector == "" {
		s.selector = "{" + strings.Join(targetMatchers(ls), ",") + "}"
	}
	if to, ok := s.rename[name]; ok {
		ls = slices.Clone(ls)
		for i, l := range ls {
			if l.Name == "__name__" {
				ls[i].Value = to
			}
		}
	}
	s.keys[keyOf(ls)] = true
}

// Created looks, in each storage written in remote write 2.0 or OTLP, for the zero sample a
// storage that ingests created timestamps stores at the start time (Prometheus 3 with
// --enable-feature=created-timestamp-zero-ingestion): for the first nativeTargets targets,
// every counter, histogram and summary series of their first scrape, with one instant query
// of the target's series over the second up to its process start.
func (v *Verifier) Created(ctx context.Context) map[string]*results.Created {
	cw, ok := v.wl.(created)
	if !ok {
		return nil
	}
	types := map[string]string{}
	for i := range v.wl.SeriesPerTarget() {
		s := cw.Series(i)
		if _, ok := types[s.Name]; !ok {
			types[s.Name] = s.Type
		}
	}
	out := map[string]*results.Created{}
	for _, t := range v.targets {
		if t.Protocol != config.ProtocolRW2 && t.Protocol != config.ProtocolOTLP {
			continue // 1.0 has no field for it
		}
		res := &results.Created{}
		out[t.Name] = res
		if t.ReadURL == "" {
			res.Errors = append(res.Errors, "no query API (readURL): created timestamps are read back through it only")
		}
		var rename map[string]string
		if t.Protocol == config.ProtocolOTLP {
			rename = v.otlp
		}
		for target := range min(nativeTargets, v.wl.Targets()) {
			if t.ReadURL == "" {
				break
			}
			sk := &startKeeper{types: types, rename: rename, keys: map[string]bool{}}
			v.wl.Scrape(sk, target, 0)
			if len(sk.keys) == 0 {
				continue
			}
			start := cw.ProcessStart(target)
			got, err := query.NewAPI(t.Client, t.ReadURL).Instant(ctx, sk.selector+"[1s]", time.UnixMilli(start))
			if err != nil {
				res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", sk.selector, err))
				continue
			}
			compareCreated(sk.keys, start, got, res)
		}
		res.Verdict = res.CreatedVerdict()
		v.log.Info("created timestamps read back", "storage", t.Name, "verdict", res.Verdict, "checked", res.Checked, "kept", res.Kept)
	}
	return out
}

// compareCreated counts each wanted series kept when got has a 0 at start for it.
func compareCreated(want map[string]bool, start int64, got *query.Result, res *results.Created) {
	zero := map[string]bool{}
	for _, s := range got.Series {
		m := maps.Clone(s.Metric)
		delete(m, "url_replica")
		if slices.Contains(s.Points, query.Point{T: start, V: 0}) {
			zero[keyOf(sortedLabels(m))] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		res.Checked++
		if zero[k] {
			res.Kept++
			continue
		}
		res.Missing++
		if len(res.Examples) < maxMetadataExamples {
			res.Examples = append(res.Examples, fmt.Sprintf("%s: no 0 at %s", strings.ReplaceAll(strings.ReplaceAll(k, "\xfe", "="), "\xff", ","),
				time.UnixMilli(start).UTC().Format(time.RFC3339)))
		}
	}
}
