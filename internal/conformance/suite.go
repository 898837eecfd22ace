// Package conformance runs Prometheus' own PromQL test files (promql/promqltest/testdata of
// the github.com/prometheus/prometheus module tsbench depends on) against a storage over the
// wire: each load block written through remote write at a recent time base of its own, each
// eval asked through the Prometheus query API and compared as the module's test runner
// compares (its float tolerance, label sets, order where ordered, an expected error or
// annotation).
//
// Invariant: every eval of the suite is counted once per storage, as passed, failed (with its
// kind) or not applicable (with its reason): passed + failed + notApplicable = the suite's evals.
package conformance

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsbench/tsbench/internal/results"
)

// testFiles are promql/promqltest/testdata/*.test of github.com/prometheus/prometheus v0.310.0,
// copied byte for byte (TestEmbeddedFilesMatchModule keeps them so).
//
//go:embed testdata/promql/*.test
var testFiles embed.FS

// Suite is a set of parsed test files.
type Suite struct {
	Files []*File
}

// File is one test file: its blocks and the Prometheus feature flags its evals need.
type File struct {
	Name     string
	Features []string
	Blocks   []*Block
}

// Block is what one time base holds: the loads an eval of the file sees (every load since the
// file's start or its last clear), and the evals that come before the next load.
type Block struct {
	File  string
	Loads []*Load
	Evals []*Eval
}

// Builtin parses the embedded suite.
func Builtin() (*Suite, error) {
	names, err := fs.Glob(testFiles, "testdata/promql/*.test")
	if err != nil {
		return nil, err
	}
	s := &Suite{}
	for _, n := range names {
		b, err := fs.ReadFile(testFiles, n)
		if err != nil {
			return nil, err
		}
		f, err := ParseFile(path.Base(n), string(b))
		if err != nil {
			return nil, err
		}
		s.Files = append(s.Files, f)
	}
	return s, nil
}

// ParseFile parses one test file into blocks; an error names the file and line. It finds the
// features each eval needs with the parser (exprFeatures): call it before anything else
// parses PromQL.
func ParseFile(name, input string) (*File, error) {
	cmds, err := parseFile(name, input)
	if err != nil {
		return nil, err
	}
	f := &File{Name: name}
	var (
		loads []*Load // since the file's start or the last clear
		cur   *Block
	)
	for _, c := range cmds {
		switch c := c.(type) {
		case clearCmd:
			loads, cur = nil, nil
		case *Load:
			loads = append(loads, c)
			cur = nil
		case *Eval:
			if cur == nil {
				cur = &Block{File: name, Loads: slices.Clone(loads)}
				f.Blocks = append(f.Blocks, cur)
			}
			cur.Evals = append(cur.Evals, c)
		}
	}
	f.Features = features(f)
	return f, nil
}

// Evals counts the suite's evals.
func (s *Suite) Evals() int {
	n := 0
	for _, f := range s.Files {
		for _, b := range f.Blocks {
			n += len(b.Evals)
		}
	}
	return n
}

// Prometheus' --enable-feature flags the test runner turns on (promqltest.RunBuiltinTests and
// NewTestEngine): a server needs them to parse and answer the files as the runner does.
const (
	FeatureExperimentalFunctions = "promql-experimental-functions"
	FeatureExtendedRangeSelector = "promql-extended-range-selectors"
	FeatureFillModifiers         = "promql-binop-fill-modifiers"
	FeatureDurationExpr          = "promql-duration-expr"
	FeatureDelayedNameRemoval    = "promql-delayed-name-removal"
)

var (
	patIdentCall = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*\(`)
	patBracket   = regexp.MustCompile(`\[([^\]]*)\]`)
	patQuoted    = regexp.MustCompile(`"(\\.|[^"\\])*"|'(\\.|[^'\\])*'|` + "`[^`]*`")
)

// unquoted is expr with its string literals emptied, so that label values never look like syntax.
func unquoted(expr string) string { return patQuoted.ReplaceAllString(expr, `""`) }

// parserFlags are the parser's feature variables by their --enable-feature name.
func parserFlags() map[string]*bool {
	return map[string]*bool{
		FeatureExperimentalFunctions: &parser.EnableExperimentalFunctions,
		FeatureDurationExpr:          &parser.ExperimentalDurationExpr,
		FeatureExtendedRangeSelector: &parser.EnableExtendedRangeSelectors,
		FeatureFillModifiers:         &parser.EnableBinopFillModifiers,
	}
}

// exprFeatures lists the parser features an expression needs, as the parser says: with all
// on but one, it does not parse. It sets the parser's package variables and leaves them all
// on (EnableParserFeatures): it runs before anything else parses PromQL.
func exprFeatures(expr string) []string {
	defer EnableParserFeatures()
	EnableParserFeatures()
	if _, err := parser.ParseExpr(expr); err != nil {
		return nil // it does not parse at all: the eval expects that error
	}
	var out []string
	for name, flag := range parserFlags() {
		EnableParserFeatures()
		*flag = false
		if _, err := parser.ParseExpr(expr); err != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// features lists the flags a file's evals need (and keeps each eval's, and whether it reads
// native histograms); delayed name removal is the runner's engine setting for every file, so
// every file lists it.
func features(f *File) []string {
	set := map[string]bool{FeatureDelayedNameRemoval: true}
	for _, b := range f.Blocks {
		hist := histogramSeries(b)
		for _, e := range b.Evals {
			e.features = exprFeatures(e.Expr)
			e.native = readsHistograms(e, hist)
			for _, x := range e.features {
				set[x] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// feature is the eval's feature for the per-feature figures: experimental when it needs a
// parser feature flag (whatever its data), else native histograms when it reads or expects
// one, else floats.
func (e *Eval) feature() string {
	switch {
	case len(e.features) > 0:
		return results.FeatureExperimental
	case e.native:
		return results.FeatureNative
	}
	return results.FeatureFloats
}

// Categories are the functions, aggregations and operators an expression uses, for the per
// function or operator figures: function and aggregation names as called, binary operators by
// their symbol or keyword.
func Categories(expr string) []string {
	e := unquoted(expr)
	set := map[string]bool{}
	for _, m := range patIdentCall.FindAllStringSubmatch(e, -1) {
		name := m[1]
		if _, ok := parser.Functions[name]; ok || aggregations[name] {
			set[name+"()"] = true
		}
	}
	for _, m := range patOperator.FindAllString(patBracket.ReplaceAllString(e, ""), -1) {
		set[strings.TrimSpace(m)] = true
	}
	if len(set) == 0 {
		set["selector"] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var (
	aggregations = map[string]bool{
		"sum": true, "avg": true, "count": true, "min": true, "max": true, "group": true, "stddev": true,
		"stdvar": true, "topk": true, "bottomk": true, "count_values": true, "quantile": true,
		"limitk": true, "limit_ratio": true,
	}
	// Binary operators: the symbols, then the keywords as whole words. Unary minus and a
	// number's sign are counted as "-" too; the figure is a rough guide, not a parse.
	patOperator = regexp.MustCompile(`==|!=|>=|<=|[-+*/%^<>]|\b(and|or|unless|atan2)\b`)
)

// String describes a file for logs.
func (f *File) String() string {
	n := 0
	for _, b := range f.Blocks {
		n += len(b.Evals)
	}
	return fmt.Sprintf("%s (%d blocks, %d evals)", f.Name, len(f.Blocks), n)
}
