package threshold

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/alecthomas/units"

	"github.com/tsbench/tsbench/internal/results"
)

// Threshold is a parsed threshold: "[storage:] figure op value".
type Threshold struct {
	Expr    string
	Storage string // empty: every storage
	Figure  string
	Op      string
	Value   float64
}

// Parse parses every expression; errors name the index and what is wrong.
func Parse(exprs []string, storages []string) ([]Threshold, error) {
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

// Evaluate checks every threshold on every storage it applies to, in threshold
// then storage order. An unknown figure fails its threshold.
func Evaluate(ts []Threshold, r *results.Run) []results.ThresholdResult {
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
