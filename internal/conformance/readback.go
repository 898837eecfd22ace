package conformance

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/query"
)

// loss is what the read-back of one block found missing: float samples the storage
// acknowledged and does not answer.
type loss struct {
	floats int
	// series are the block's series that may have lost samples: those of a metric name with
	// a sample missing (the read-back matches by name and time, not by every label, so that
	// labels a storage adds or renames do not count as loss).
	series []labels.Labels
}

// readsLost reports whether one of e's selectors matches a series that lost samples.
func (l *loss) readsLost(e *Eval) bool {
	expr, err := parser.ParseExpr(e.Expr)
	if err != nil {
		return false
	}
	for _, sel := range parser.ExtractSelectors(expr) {
		if slices.ContainsFunc(l.series, func(ls labels.Labels) bool { return matchesAll(sel, ls) }) {
			return true
		}
	}
	return false
}

func (l *loss) String() string {
	return fmt.Sprintf("%d float samples of the block were acknowledged and are not answered", l.floats)
}

// sampleKey is a sample as the read-back matches it: its metric name and time.
type sampleKey struct {
	name string
	t    int64
}

// readBack asks for the float samples written of each block (blocks[2i] holds the series of
// todo[i] with floats only, not asked for when refused, errs[2i] != nil) once they are
// visible, one query per interval of a block, and returns the blocks that lost samples. A
// sample with a number (NaN and staleness markers are not counted: a storage may keep
// neither) is lost when fewer samples of its metric name and time are answered than were
// written: labels the storage adds or renames (a wrong answer, not a loss) and values it
// changes do not count, a sample or a series it drops or leaves out of its answers does.
// Native histograms are keepsHistograms' (a series that mixes them with floats is answered
// in part by Prometheus 2.42's API, whose engine reads it whole), and series without a
// metric name are not read back. A read that fails is counted and the rest go on: the error
// returned says how many failed and the first one's error, and the losses are then those of
// the reads that did not (the count is unknown).
func (r *runner) readBack(ctx context.Context, todo []Placed, blocks [][]series, errs []error) (map[*Block]*loss, error) {
	api := r.api.With(url.Values{"nocache": {"1"}}, nil)
	out := map[*Block]*loss{}
	var (
		reads, failed int
		first         error
	)
	for i, p := range todo {
		if errs[2*i] != nil {
			continue
		}
		ss := blocks[2*i]
		l := &loss{}
		lostNames := map[string]bool{}
		for _, iv := range intervals(p.Block) {
			from, to := p.Base+iv.lo, p.Base+iv.hi
			want, names := map[sampleKey]int{}, map[string]bool{}
			for _, s := range ss {
				name := s.labels.Get(model.MetricNameLabel)
				for _, smp := range s.samples {
					if name == "" || smp.T < from || smp.T > to || math.IsNaN(smp.V) {
						continue
					}
					want[sampleKey{name, smp.T}]++
					names[name] = true
				}
			}
			if len(want) == 0 {
				continue
			}
			reads++
			got, err := r.readInterval(ctx, api, names, from, to)
			if err != nil {
				if failed++; first == nil {
					first = fmt.Errorf("%s:%d: %w", p.File, p.Evals[0].Line, err)
				}
				continue
			}
			for k, n := range want {
				if n <= got[k] {
					continue
				}
				lostNames[k.name] = true
				l.floats += n - got[k]
			}
		}
		for _, s := range ss {
			if lostNames[s.labels.Get(model.MetricNameLabel)] {
				l.series = append(l.series, s.labels)
			}
		}
		if len(l.series) > 0 {
			out[p.Block] = l
		}
	}
	if failed > 0 {
		return out, fmt.Errorf("%d of %d reads of the data written failed, the first of the block at %w", failed, reads, first)
	}
	return out, nil
}

// readInterval counts the float samples answered of the metric names in [from, to] (ms), by
// name and time, NaN left out.
func (r *runner) readInterval(ctx context.Context, api *query.API, names map[string]bool, from, to int64) (map[sampleKey]int, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	quoted := make([]string, 0, len(names))
	for n := range names {
		quoted = append(quoted, regexp.QuoteMeta(n))
	}
	slices.Sort(quoted)
	// A range is left-open: (to-d, to] holds from.
	sel := fmt.Sprintf("{__name__=~%s}[%dms]", strconv.Quote(strings.Join(quoted, "|")), to-from+1)
	res, err := api.Instant(ctx, sel, time.UnixMilli(to))
	if err != nil {
		return nil, err
	}
	got := map[sampleKey]int{}
	for _, s := range res.Series {
		name := s.Metric[model.MetricNameLabel]
		for _, p := range s.Points {
			if !math.IsNaN(p.V) {
				got[sampleKey{name, p.T}]++
			}
		}
	}
	return got, nil
}
