package bench

import (
	"context"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/verify"
)

// verifySampleTypes adds the read-back of native histograms, exemplars and metadata to each
// storage's, when they were sent; the first two look at the end of [from, to].
func (r *run) verifySampleTypes(ctx context.Context, v *verify.Verifier, res map[string]*results.Verify, from, to time.Time) {
	for name, m := range v.Metadata(ctx, r.cfg.SendMetadata) {
		if res[name] != nil {
			res[name].Metadata = m
		}
	}
	for name, c := range v.Created(ctx) {
		if res[name] != nil {
			res[name].Created = c
		}
	}
	if pct := r.cfg.Exemplars.Percent; pct > 0 {
		for name, e := range v.Exemplars(ctx, pct, from, to) {
			if res[name] != nil {
				res[name].Exemplars = e
			}
		}
	}
	if !r.cfg.NativeHistograms.On() {
		return
	}
	for name, n := range v.Natives(ctx, r.cfg.NativeHistograms.Send, from, to) {
		if res[name] == nil {
			continue
		}
		if w := r.writer.Results(name); w != nil {
			for status, c := range w.RequestsByStatus {
				if !strings.HasPrefix(status, "2") {
					n.FailedRequests += c
				}
			}
			n.Verdict = n.NativeVerdict()
		}
		res[name].NativeHistograms = n
	}
}
