package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// nativeSuffix names a query's native-histogram twin (query.NativeSuffix).
const nativeSuffix = ":native"

// writeNatives tells, per storage, what it did with the native histograms and exemplars, and
// compares the latency of each histogram_quantile query over classic buckets with its
// native twin's.
func writeNatives(b *strings.Builder, r *results.Run) {
	sep := "\n"
	for _, s := range r.Storages {
		if s.Verify == nil || s.Verify.NativeHistograms == nil {
			continue
		}
		n := s.Verify.NativeHistograms
		if n.Verdict == results.VerdictUnknown {
			fmt.Fprintf(b, "%snative histograms %s: unknown: no histogram looked for in the window read\n", sep, s.Name)
			sep = ""
			continue
		}
		fmt.Fprintf(b, "%snative histograms %s: %s: %d of %d kept, %d changed, %d missing, %d float points",
			sep, s.Name, n.Verdict, n.Kept, n.CheckedHistograms, n.Changed, n.Missing, n.FloatPoints)
		sep = ""
		if n.FailedRequests > 0 {
			fmt.Fprintf(b, ", %d write requests failed", n.FailedRequests)
		}
		var schemas []string
		for _, f := range slices.Sorted(maps.Keys(n.Schemas)) {
			schemas = append(schemas, fmt.Sprintf("%s=%d", f, n.Schemas[f]))
		}
		fmt.Fprintf(b, " (schemas %s)\n", strings.Join(schemas, " "))
		for _, e := range n.Examples {
			fmt.Fprintf(b, "  %s\n", e)
		}
		for _, e := range n.Errors {
			fmt.Fprintf(b, "  error: %s\n", e)
		}
	}
	for _, s := range r.Storages {
		if s.Verify == nil || s.Verify.Exemplars == nil {
			continue
		}
		e := s.Verify.Exemplars
		if e.Verdict == results.VerdictUnknown {
			fmt.Fprintf(b, "%sexemplars %s: unknown: %s\n", sep, s.Name, cmpOr(e.Reason, "none looked for"))
		} else {
			fmt.Fprintf(b, "%sexemplars %s: %s: %d of %d kept, %d changed, %d missing\n", sep, s.Name, e.Verdict, e.Kept, e.Checked, e.Changed, e.Missing)
		}
		sep = ""
		for _, x := range e.Examples {
			fmt.Fprintf(b, "  %s\n", x)
		}
		for _, x := range e.Errors {
			fmt.Fprintf(b, "  error: %s\n", x)
		}
	}
	for _, s := range r.Storages {
		if s.Query == nil {
			continue
		}
		byName := map[string]results.QueryStat{}
		for _, q := range s.Query.PerQuery {
			byName[q.Kind+" "+q.Name] = q
		}
		for _, q := range s.Query.PerQuery {
			name, ok := strings.CutSuffix(q.Name, nativeSuffix)
			classic, found := byName[q.Kind+" "+name]
			if !ok || !found {
				continue
			}
			fmt.Fprintf(b, "%slatency %s %s: classic p50 %s p99 %s ms (%s series), native p50 %s p99 %s ms (%s series)\n", sep, s.Name, name,
				fmtPtr("%.1f", classic.LatencySeconds.P50, 1e-3), fmtPtr("%.1f", classic.LatencySeconds.P99, 1e-3), seriesCount(classic),
				fmtPtr("%.1f", q.LatencySeconds.P50, 1e-3), fmtPtr("%.1f", q.LatencySeconds.P99, 1e-3), seriesCount(q))
			sep = ""
		}
	}
}

// seriesCount is the series of a query's last answer: an empty answer is fast, and not a
// like-for-like comparison.
func seriesCount(q results.QueryStat) string {
	if q.ResultSeries == nil {
		return "?"
	}
	return strconv.FormatInt(*q.ResultSeries, 10)
}
