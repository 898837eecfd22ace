package report

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ThresholdResult is one threshold's outcome for one storage.
type ThresholdResult struct {
	Expr    string   `json:"expr"`
	Storage string   `json:"storage"`
	Value   *float64 `json:"value"` // nil when the figure is unknown for that storage
	OK      bool     `json:"ok"`
	// Reason says why a threshold failed without a comparison (an unknown figure).
	Reason string `json:"reason,omitempty"`
}

// Check is the threshold as it applies to its storage: the expression without a storage prefix.
func (t ThresholdResult) Check() string {
	return strings.TrimSpace(strings.TrimPrefix(t.Expr, t.Storage+":"))
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
type Figure func(s *Storage) *float64

// Figures is the table of figures thresholds and compare can name, with their units.
func Figures() map[string]Figure {
	w := func(f func(*Write) float64) Figure {
		return func(s *Storage) *float64 {
			if s.Write == nil {
				return nil
			}
			return new(f(s.Write))
		}
	}
	q := func(f func(*Query) float64) Figure {
		return func(s *Storage) *float64 {
			if s.Query == nil {
				return nil
			}
			return new(f(s.Query))
		}
	}
	r := func(f func(*Resources) *float64) Figure {
		return func(s *Storage) *float64 {
			if s.Resources == nil {
				return nil
			}
			return f(s.Resources)
		}
	}
	v := func(f func(*Verify) float64) Figure {
		return func(s *Storage) *float64 {
			if s.Verify == nil {
				return nil
			}
			return new(f(s.Verify))
		}
	}
	return map[string]Figure{
		"write.generatedSamples":         w(func(w *Write) float64 { return float64(w.GeneratedSamples) }),
		"write.ackedSamples":             w(func(w *Write) float64 { return float64(w.AckedSamples) }),
		"write.droppedSamples":           w(func(w *Write) float64 { return float64(w.Dropped()) }),
		"write.pendingSamples":           w(func(w *Write) float64 { return float64(w.PendingSamples) }),
		"write.retries":                  w(func(w *Write) float64 { return float64(w.Retries) }),
		"write.maxLagSeconds":            w(func(w *Write) float64 { return w.MaxLagSeconds }),
		"write.achievedSamplesPerSecond": w(func(w *Write) float64 { return w.AchievedSamplesPerSecond }),
		"query.executed":                 q(func(q *Query) float64 { return float64(q.Executed) }),
		"query.errors":                   q(func(q *Query) float64 { return float64(sumCounts(q.Errors)) }),
		"query.missed":                   q(func(q *Query) float64 { return float64(q.Missed) }),
		"query.p50":                      q(func(q *Query) float64 { return q.LatencySeconds.P50 }),
		"query.p90":                      q(func(q *Query) float64 { return q.LatencySeconds.P90 }),
		"query.p99":                      q(func(q *Query) float64 { return q.LatencySeconds.P99 }),
		"query.max":                      q(func(q *Query) float64 { return q.LatencySeconds.Max }),
		"resources.cpuCoresMean":         r(func(r *Resources) *float64 { return r.CPUCoresMean }),
		"resources.cpuCoresMax":          r(func(r *Resources) *float64 { return r.CPUCoresMax }),
		"resources.rssBytesMean":         r(func(r *Resources) *float64 { return r.RSSBytesMean }),
		"resources.rssBytesMax":          r(func(r *Resources) *float64 { return r.RSSBytesMax }),
		"resources.diskBytesEnd":         r(func(r *Resources) *float64 { return r.DiskBytesEnd }),
		"resources.bytesPerSample":       r(func(r *Resources) *float64 { return r.BytesPerSample }),
		"resources.snapshotBytesPerSample": r(func(r *Resources) *float64 {
			return r.SnapshotBytesPerSample
		}),
		"verify.checkedSamples":    v(func(v *Verify) float64 { return float64(v.CheckedSamples) }),
		"verify.missingSamples":    v(func(v *Verify) float64 { return float64(v.MissingSamples) }),
		"verify.duplicateSamples":  v(func(v *Verify) float64 { return float64(v.DuplicateSamples) }),
		"verify.unexpectedSamples": v(func(v *Verify) float64 { return float64(v.UnexpectedSamples) }),
		"verify.changedValues":     v(func(v *Verify) float64 { return float64(v.ChangedValues) }),
		"verify.maxRelativeError":  v(func(v *Verify) float64 { return v.MaxRelativeError }),
		"verify.nanAltered":        v(func(v *Verify) float64 { return float64(v.NaNAltered) }),
		"verify.stalenessIgnored":  v(func(v *Verify) float64 { return float64(v.StalenessIgnored) }),
		"verify.shiftedTimestamps": v(func(v *Verify) float64 { return float64(v.ShiftedTimestamps) }),
	}
}

// FigureNames lists Figures' names, sorted.
func FigureNames() []string {
	var names []string
	for n := range Figures() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
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
	fields := strings.Fields(rest)
	if len(fields) != 3 {
		return t, fmt.Errorf("%q: want [storage:] figure op value, e.g. \"query.p99 < 2s\"", expr)
	}
	t.Figure, t.Op = fields[0], fields[1]
	if _, ok := figures[t.Figure]; !ok {
		return t, fmt.Errorf("%q: unknown figure %q (one of %s)", expr, t.Figure, strings.Join(FigureNames(), ", "))
	}
	if !slices.Contains([]string{"<", "<=", ">", ">=", "==", "!="}, t.Op) {
		return t, fmt.Errorf("%q: unknown operator %q (one of < <= > >= == !=)", expr, t.Op)
	}
	v, err := parseValue(fields[2])
	if err != nil {
		return t, fmt.Errorf("%q: %w", expr, err)
	}
	t.Value = v
	return t, nil
}

// parseValue reads a number, a duration (in seconds: "2s", "500ms") or a size in bytes
// ("512MiB", "1GB").
func parseValue(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d.Seconds(), nil
	}
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			if v, err := strconv.ParseFloat(num, 64); err == nil {
				return v * u.mult, nil
			}
		}
	}
	return 0, fmt.Errorf("value %q is not a number, a duration (2s, 500ms) or a size (512MiB, 1GB)", s)
}

// EvaluateThresholds checks every threshold on every storage it applies to, in threshold
// then storage order. An unknown figure fails its threshold.
func EvaluateThresholds(ts []Threshold, r *Results) []ThresholdResult {
	figures := Figures()
	var out []ThresholdResult
	for _, t := range ts {
		for i := range r.Storages {
			s := &r.Storages[i]
			if t.Storage != "" && t.Storage != s.Name {
				continue
			}
			res := ThresholdResult{Expr: t.Expr, Storage: s.Name, Value: figures[t.Figure](s)}
			if res.Value == nil {
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
