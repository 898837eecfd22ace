package report

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/alecthomas/units"

	"github.com/tsbench/tsbench/internal/results"
)

// ValueText is the figure's value in its unit: counts exactly, durations and sizes readably
// ("5398800", "120ms", "372.0MiB"); "?" when unknown.
func ValueText(t results.ThresholdResult) string {
	if t.Value == nil {
		return "?"
	}
	return FormatFigure(t.Figure, *t.Value)
}

// Threshold is a parsed threshold: "[storage:] figure op value".
type Threshold struct {
	Expr    string
	Storage string // empty: every storage
	Figure  string
	Op      string
	Value   float64
}

// Figure reads one number from a storage's results; nil when unknown.
type Figure func(s *results.Storage) *float64

// unit is how a figure is measured, for printing it.
type unit int

const (
	unitPlain          unit = iota // samples/s, cores, bytes per sample, ratios
	unitCount                      // an exact integer count
	unitSeconds                    // a duration
	unitBytes                      // a size
	unitBytesPerSecond             // a disk rate
)

// figure is one nameable figure: how to read it and its unit.
type figure struct {
	get  Figure
	unit unit
}

// figureTable is the one home of the figures thresholds and compare can name.
func figureTable() map[string]figure {
	w := func(u unit, f func(*results.Write) float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Write == nil {
				return nil
			}
			return new(f(s.Write))
		}}
	}
	q := func(u unit, f func(*results.Query) float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Query == nil {
				return nil
			}
			return new(f(s.Query))
		}}
	}
	latency := func(f func(results.Latency) *float64) figure { // unknown when nothing completed
		return figure{unit: unitSeconds, get: func(s *results.Storage) *float64 {
			if s.Query == nil {
				return nil
			}
			return f(s.Query.LatencySeconds)
		}}
	}
	r := func(u unit, f func(*results.Resources) *float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Resources == nil {
				return nil
			}
			return f(s.Resources)
		}}
	}
	v := func(u unit, f func(*results.Verify) float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Verify == nil {
				return nil
			}
			return new(f(s.Verify))
		}}
	}
	// among is a count over the checked samples (or markers), unknown when none was checked:
	// "0 missing" of nothing would pass verify.missingSamples == 0 and look best.
	among := func(checked func(*results.Verify) int64, u unit, f func(*results.Verify) float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Verify == nil || checked(s.Verify) == 0 {
				return nil
			}
			return new(f(s.Verify))
		}}
	}
	samples := func(v *results.Verify) int64 { return v.CheckedSamples }
	// Markers are checked one way per storage: honoured by an instant query through the query
	// API, or stored among the raw samples of remote read.
	honoured := func(v *results.Verify) int64 {
		if v.ReadBackVia == "remoteRead" {
			return 0
		}
		return v.CheckedStaleMarkers
	}
	stored := func(v *results.Verify) int64 {
		if v.ReadBackVia != "remoteRead" {
			return 0
		}
		return v.CheckedStaleMarkers
	}
	// Data lost after its ack is known only where a check read again what it had found.
	rechecked := func(v *results.Verify) int64 {
		if v.Continuous == nil {
			return 0
		}
		return v.Continuous.Total.Rechecked
	}
	// Probes and rules need the query API: unknown for a storage read back through remote read.
	viaAPI := func(u unit, f func(*results.Verify) float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Verify == nil || s.Verify.ReadBackVia == "remoteRead" {
				return nil
			}
			return new(f(s.Verify))
		}}
	}
	figs := map[string]figure{
		"write.generatedSamples":         w(unitCount, func(w *results.Write) float64 { return float64(w.GeneratedSamples) }),
		"write.ackedSamples":             w(unitCount, func(w *results.Write) float64 { return float64(w.AckedSamples) }),
		"write.droppedSamples":           w(unitCount, func(w *results.Write) float64 { return float64(w.Dropped()) }),
		"write.pendingSamples":           w(unitCount, func(w *results.Write) float64 { return float64(w.PendingSamples) }),
		"write.retries":                  w(unitCount, func(w *results.Write) float64 { return float64(w.Retries) }),
		"write.bytesSent":                w(unitBytes, func(w *results.Write) float64 { return float64(w.BytesSent) }),
		"write.lagSeconds":               w(unitSeconds, func(w *results.Write) float64 { return w.LagSeconds }),
		"write.maxLagSeconds":            w(unitSeconds, func(w *results.Write) float64 { return w.MaxLagSeconds }),
		"write.maxScheduleDriftSeconds":  w(unitSeconds, func(w *results.Write) float64 { return w.MaxScheduleDriftSeconds }),
		"write.targetSamplesPerSecond":   w(unitPlain, func(w *results.Write) float64 { return w.TargetSamplesPerSecond }),
		"write.achievedSamplesPerSecond": w(unitPlain, func(w *results.Write) float64 { return w.AchievedSamplesPerSecond }),
		"query.executed":                 q(unitCount, func(q *results.Query) float64 { return float64(q.Executed) }),
		"query.ok":                       q(unitCount, func(q *results.Query) float64 { return float64(q.OK) }),
		"query.errors":                   q(unitCount, func(q *results.Query) float64 { return float64(sumCounts(q.Errors)) }),
		"query.warnings":                 q(unitCount, func(q *results.Query) float64 { return float64(q.Warnings) }),
		"query.missed":                   q(unitCount, func(q *results.Query) float64 { return float64(q.Missed) }),
		"query.p50":                      latency(func(l results.Latency) *float64 { return l.P50 }),
		"query.p90":                      latency(func(l results.Latency) *float64 { return l.P90 }),
		"query.p99":                      latency(func(l results.Latency) *float64 { return l.P99 }),
		"query.max":                      latency(func(l results.Latency) *float64 { return l.Max }),
		"resources.cpuCoresMean":         r(unitPlain, func(r *results.Resources) *float64 { return r.CPUCoresMean }),
		"resources.cpuCoresMax":          r(unitPlain, func(r *results.Resources) *float64 { return r.CPUCoresMax }),
		"resources.rssBytesMean":         r(unitBytes, func(r *results.Resources) *float64 { return r.RSSBytesMean }),
		"resources.rssBytesMax":          r(unitBytes, func(r *results.Resources) *float64 { return r.RSSBytesMax }),
		"resources.diskBytesEnd":         r(unitBytes, func(r *results.Resources) *float64 { return r.DiskBytesEnd }),
		"resources.diskBytesMax":         r(unitBytes, func(r *results.Resources) *float64 { return r.DiskBytesMax }),
		"resources.diskReadBytesPerSecond": r(unitBytesPerSecond, func(r *results.Resources) *float64 {
			return r.DiskReadBytesPerSecond
		}),
		"resources.diskWriteBytesPerSecond": r(unitBytesPerSecond, func(r *results.Resources) *float64 {
			return r.DiskWriteBytesPerSecond
		}),
		"resources.ingestedSamples": r(unitCount, func(r *results.Resources) *float64 { return r.IngestedSamples }),
		"resources.bytesPerSample":  r(unitPlain, func(r *results.Resources) *float64 { return r.BytesPerSample }),
		"resources.snapshotBytes":   r(unitBytes, func(r *results.Resources) *float64 { return r.SnapshotBytes }),
		"resources.snapshotBytesPerSample": r(unitPlain, func(r *results.Resources) *float64 {
			return r.SnapshotBytesPerSample
		}),
		"verify.checkedSamples":      v(unitCount, func(v *results.Verify) float64 { return float64(v.CheckedSamples) }),
		"verify.uncheckedSamples":    v(unitCount, func(v *results.Verify) float64 { return float64(v.UncheckedSamples) }),
		"verify.readErrors":          v(unitCount, func(v *results.Verify) float64 { return float64(v.ReadErrors) }),
		"verify.missingSamples":      among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.MissingSamples) }),
		"verify.duplicateSamples":    among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.DuplicateSamples) }),
		"verify.unexpectedSamples":   among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.UnexpectedSamples) }),
		"verify.changedValues":       among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.ChangedValues) }),
		"verify.maxRelativeError":    among(samples, unitPlain, func(v *results.Verify) float64 { return v.MaxRelativeError }),
		"verify.nanAltered":          among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.NaNAltered) }),
		"verify.stalenessIgnored":    among(honoured, unitCount, func(v *results.Verify) float64 { return float64(v.StalenessIgnored) }),
		"verify.missingStaleMarkers": among(stored, unitCount, func(v *results.Verify) float64 { return float64(v.MissingStaleMarkers) }),
		"verify.checkedStaleMarkers": v(unitCount, func(v *results.Verify) float64 { return float64(v.CheckedStaleMarkers) }),
		"verify.shiftedTimestamps":   among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.ShiftedTimestamps) }),
		"verify.differentProbes":     viaAPI(unitCount, func(v *results.Verify) float64 { return float64(v.DifferentProbes()) }),
		"verify.lostAfterAck":        among(rechecked, unitCount, func(v *results.Verify) float64 { return float64(v.LostAfterAck) }),
		"verify.ruleDiffs":           viaAPI(unitCount, func(v *results.Verify) float64 { return float64(len(v.RuleDiffs)) }),
	}
	maps.Copy(figs, seriesFigures())
	maps.Copy(figs, haFigures())
	return figs
}

// Figures is the table of figures thresholds and compare can name.
func Figures() map[string]Figure {
	out := map[string]Figure{}
	for name, f := range figureTable() {
		out[name] = f.get
	}
	return out
}

// FigureNames lists Figures' names, sorted.
func FigureNames() []string {
	var names []string
	for n := range figureTable() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// FormatFigure prints a value of the named figure in its unit: counts as exact integers,
// seconds as a duration ("120ms"), sizes in IEC units ("372.0MiB"), in the forms a
// threshold accepts. An unknown figure name prints as a plain number.
func FormatFigure(name string, v float64) string {
	switch figureTable()[name].unit {
	case unitCount:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case unitSeconds:
		return time.Duration(v * float64(time.Second)).Round(time.Microsecond).String()
	case unitBytes:
		return fmtBytes(v)
	case unitBytesPerSecond:
		return fmtBytes(v) + "/s"
	}
	return fmtPlain(v)
}

// fmtBytes prints a size in the largest IEC unit it reaches, with one decimal.
func fmtBytes(v float64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if math.Abs(v) < 1<<10 {
		return strconv.FormatFloat(v, 'f', 0, 64) + "B"
	}
	i := 0
	for v /= 1 << 10; math.Abs(v) >= 1<<10 && i < len(units)-1; i++ {
		v /= 1 << 10
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[i]
}

// fmtPlain prints an integer exactly, a large number with one decimal and a small one with
// six significant digits: never an exponent for a number a reader counts in.
func fmtPlain(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// ParseThresholds parses every expression; errors name the index and what is wrong.
func ParseThresholds(exprs []string, storages []string) ([]Threshold, error) {
	var out []Threshold
	var errs []error
	figures := Figures()
	for i, e := range exprs {
		t, err := parseThreshold(e, storages, figures)
		if err != nil {
			errs = append(errs, fmt.Errorf("thresholds[%d]: %w", i, err))
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

func parseThreshold(expr string, storages []string, figures map[string]Figure) (Threshold, error) {
	t := Threshold{Expr: expr}
	rest := strings.TrimSpace(expr)
	if name, after, ok := strings.Cut(rest, ":"); ok {
		t.Storage, rest = strings.TrimSpace(name), strings.TrimSpace(after)
		if !slices.Contains(storages, t.Storage) {
			return t, fmt.Errorf("%q: unknown storage %q (storages: %s)", expr, t.Storage, strings.Join(storages, ", "))
		}
	}
	// Spaces around the operator are optional, as in k6: "query.p99<2s".
	figure, rest := splitRun(rest, func(r rune) bool { return !isOpRune(r) && !unicode.IsSpace(r) })
	op, value := splitRun(strings.TrimSpace(rest), isOpRune)
	value = strings.TrimSpace(value)
	if figure == "" || op == "" || value == "" || strings.ContainsFunc(value, unicode.IsSpace) {
		return t, fmt.Errorf("%q: want [storage:] figure op value, e.g. \"query.p99 < 2s\"", expr)
	}
	t.Figure, t.Op = figure, op
	if _, ok := figures[t.Figure]; !ok {
		return t, fmt.Errorf("%q: unknown figure %q (one of %s)", expr, t.Figure, strings.Join(FigureNames(), ", "))
	}
	if !slices.Contains([]string{"<", "<=", ">", ">=", "==", "!="}, t.Op) {
		return t, fmt.Errorf("%q: unknown operator %q (one of < <= > >= == !=)", expr, t.Op)
	}
	v, err := parseValue(value)
	if err != nil {
		return t, fmt.Errorf("%q: %w", expr, err)
	}
	t.Value = v
	return t, nil
}

// isOpRune reports whether r can be part of a comparison operator.
func isOpRune(r rune) bool { return strings.ContainsRune("<>=!", r) }

// splitRun splits s after its longest prefix of runes that satisfy in.
func splitRun(s string, in func(rune) bool) (prefix, rest string) {
	i := strings.IndexFunc(s, func(r rune) bool { return !in(r) })
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// parseValue reads a number, a duration (in seconds: "2s", "500ms") or a size in bytes
// ("512MiB", "1GB", "1.5GiB"). Sizes are read by alecthomas/units, the parser behind
// Prometheus' own sizes (body_size_limit, --storage.tsdb.retention.size), in its strict form:
// KiB, MiB, ... are powers of 1024 and kB, KB, MB, ... powers of 1000, as tsbench prints them.
// Prometheus' Base2Bytes would read "1GB" as 1GiB, 7% more than it says.
func parseValue(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(v) { // NaN compares false to all
		return v, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d.Seconds(), nil
	}
	if n, err := units.ParseStrictBytes(s); err == nil {
		return float64(n), nil
	}
	return 0, fmt.Errorf("value %q is not a number, a duration (2s, 500ms) or a size (512MiB, 1GB)", s)
}

// EvaluateThresholds checks every threshold on every storage it applies to, in threshold
// then storage order. An unknown figure fails its threshold.
func EvaluateThresholds(ts []Threshold, r *results.Run) []results.ThresholdResult {
	figures := Figures()
	var out []results.ThresholdResult
	for _, t := range ts {
		for i := range r.Storages {
			s := &r.Storages[i]
			if t.Storage != "" && t.Storage != s.Name {
				continue
			}
			readOnly := s.Write == nil && strings.HasPrefix(t.Figure, "write.")
			if readOnly && t.Storage == "" {
				continue // a storage only queried has no write figures for a threshold on every storage
			}
			res := results.ThresholdResult{Expr: t.Expr, Storage: s.Name, Figure: t.Figure, Value: figures[t.Figure](s)}
			if readOnly {
				res.Reason = fmt.Sprintf("%s gets no writes: it is only queried (no writeURL, or disableWrite)", s.Name)
			} else if res.Value == nil {
				res.Reason = fmt.Sprintf("%s is unknown for %s", t.Figure, s.Name)
			} else {
				res.OK = compare(*res.Value, t.Op, t.Value)
			}
			out = append(out, res)
		}
	}
	return out
}

func compare(a float64, op string, b float64) bool {
	switch op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "==":
		return a == b
	default:
		return a != b
	}
}
