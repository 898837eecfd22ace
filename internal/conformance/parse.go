package conformance

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// The test file format of promql/promqltest (test.go, v0.310.0): the same commands, the same
// modifiers and expectations, parsed the same way. Times are milliseconds from the test's
// start (Unix 0 there; a block's base here).
var (
	patSpace       = regexp.MustCompile("[\t ]+")
	patLoad        = regexp.MustCompile(`^load(?:_(with_nhcb))?\s+(.+?)$`)
	patEvalInstant = regexp.MustCompile(`^eval(?:_(fail|warn|ordered|info))?\s+instant\s+(?:at\s+(.+?))?\s+(.+)$`)
	patEvalRange   = regexp.MustCompile(`^eval(?:_(fail|warn|info))?\s+range\s+from\s+(.+)\s+to\s+(.+)\s+step\s+(.+?)\s+(.+)$`)
	patExpect      = regexp.MustCompile(`^expect\s+(ordered|fail|warn|no_warn|info|no_info)(?:\s+(regex|msg):(.+))?$`)
	patExpectRange = regexp.MustCompile(`^expect range vector\s+from\s+(.+)\s+to\s+(.+)\s+step\s+(.+)$`)
)

// Load is one load command: series with their samples, each sample's T from the test start.
type Load struct {
	Line   int
	NHCB   bool // load_with_nhcb: classic histograms also loaded as native ones with custom buckets
	Series []LoadSeries
}

// LoadSeries is one series of a load.
type LoadSeries struct {
	Labels  labels.Labels
	Samples []Sample
}

// Sample is one loaded sample: a float V, or a native histogram H.
type Sample struct {
	T int64
	V float64
	H *histogram.FloatHistogram
}

// expectation is an `expect <kind> [msg|regex:...]` line: message or pattern.
type expectation struct {
	msg string
	re  *regexp.Regexp
}

// match tells whether an annotation matches. A server adds details for its query to some
// messages (", from buckets 1 to +Inf, ..."), which the runner's engine messages lack: a
// message matches with them.
func (e expectation) match(s string) bool {
	if e.re == nil {
		return e.msg == s || strings.HasPrefix(s, e.msg+", ")
	}
	return e.re.MatchString(s)
}

func (e expectation) String() string {
	if e.re == nil {
		return e.msg
	}
	return e.re.String()
}

// expectedSeries is one series of an expected result, with its position (for ordered).
type expectedSeries struct {
	labels labels.Labels
	vals   []parser.SequenceValue
	pos    int
}

// Eval is one eval command with what it expects.
type Eval struct {
	Line  int
	Expr  string
	Range bool
	// At is an instant query's time; Start, End and Step a range query's (or an instant one's
	// `expect range vector`).
	At, Start, End int64
	Step           time.Duration

	fail, ordered, warn, info bool
	failMsg                   string
	failRe                    *regexp.Regexp
	expects                   map[string][]expectation // by kind: ordered fail warn no_warn info no_info
	scalar                    *float64
	str                       *string
	series                    map[uint64]expectedSeries
	excludeRange              bool     // not asked again as a range query (the runner's excludeFromRangeQuery)
	rangeVector               bool     // an instant eval expecting a matrix over Start..End by Step
	features                  []string // the parser features it needs (exprFeatures)
	native                    bool     // it expects a native histogram or reads one of its block's (readsHistograms)
}

func (e *Eval) isFail() bool    { return e.fail || len(e.expects["fail"]) > 0 }
func (e *Eval) isOrdered() bool { return e.ordered || len(e.expects["ordered"]) > 0 }

// command is a parsed line: a *Load, an *Eval or clear.
type command any

type clearCmd struct{}

// parseFile parses a test file; an error names the file and the line.
func parseFile(name, input string) ([]command, error) {
	lines := strings.Split(input, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			l = ""
		}
		lines[i] = l
	}
	var cmds []command
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		var (
			cmd command
			err error
		)
		switch c := strings.ToLower(patSpace.Split(l, 2)[0]); {
		case c == "clear":
			cmd = clearCmd{}
		case strings.HasPrefix(c, "load"):
			i, cmd, err = parseLoad(lines, i)
		case strings.HasPrefix(c, "eval"):
			i, cmd, err = parseEval(lines, i)
		default:
			err = fmt.Errorf("invalid command %q", l)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

func parseLoad(lines []string, i int) (int, *Load, error) {
	parts := patLoad.FindStringSubmatch(lines[i])
	if parts == nil {
		return i, nil, errors.New("invalid load command (load[_with_nhcb] <step:duration>)")
	}
	gap, err := model.ParseDuration(parts[2])
	if err != nil {
		return i, nil, fmt.Errorf("invalid step %q: %w", parts[2], err)
	}
	ld := &Load{Line: i + 1, NHCB: parts[1] == "with_nhcb"}
	at := map[uint64]int{} // a series defined again in the same load replaces its first definition, as in the runner
	for i+1 < len(lines) && lines[i+1] != "" {
		i++
		m, vals, err := parser.ParseSeriesDesc(lines[i])
		if err != nil {
			return i, nil, err
		}
		s := LoadSeries{Labels: m}
		for k, v := range vals {
			if !v.Omitted {
				s.Samples = append(s.Samples, Sample{T: int64(k) * time.Duration(gap).Milliseconds(), V: v.Value, H: v.Histogram})
			}
		}
		if k, ok := at[m.Hash()]; ok {
			ld.Series[k] = s
			continue
		}
		at[m.Hash()] = len(ld.Series)
		ld.Series = append(ld.Series, s)
	}
	if ld.NHCB {
		nh, err := nhcbSeries(ld.Series)
		if err != nil {
			return i, nil, err
		}
		ld.Series = append(ld.Series, nh...)
	}
	return i, ld, nil
}

func parseEval(lines []string, i int) (int, *Eval, error) {
	inst := patEvalInstant.FindStringSubmatch(lines[i])
	rng := patEvalRange.FindStringSubmatch(lines[i])
	ev := &Eval{Line: i + 1, expects: map[string][]expectation{}, series: map[uint64]expectedSeries{}}
	var mod string
	switch {
	case inst != nil:
		mod, ev.Expr = inst[1], inst[3]
		at, err := model.ParseDuration(inst[2])
		if err != nil {
			return i, nil, fmt.Errorf("invalid timestamp %q: %w", inst[2], err)
		}
		ev.At = time.Duration(at).Milliseconds()
		ev.Start = ev.At
	case rng != nil:
		mod, ev.Expr, ev.Range = rng[1], rng[5], true
		var err error
		if ev.Start, ev.End, ev.Step, err = parseSpan(rng[2], rng[3], rng[4]); err != nil {
			return i, nil, err
		}
	default:
		return i, nil, errors.New("invalid eval command: eval[_fail|_warn|_info|_ordered] instant [at <offset>] <query> or eval[_fail|_warn|_info] range from <from> to <to> step <step> <query>")
	}
	switch mod {
	case "ordered":
		ev.ordered = true
	case "fail":
		ev.fail = true
	case "warn":
		ev.warn = true
	case "info":
		ev.info = true
	}
	for j := 1; i+1 < len(lines) && lines[i+1] != ""; j++ {
		i++
		l := lines[i]
		if ev.fail && strings.HasPrefix(l, "expected_fail_message") {
			ev.failMsg = strings.TrimSpace(strings.TrimPrefix(l, "expected_fail_message"))
			break
		}
		if ev.fail && strings.HasPrefix(l, "expected_fail_regexp") {
			re, err := regexp.Compile(strings.TrimSpace(strings.TrimPrefix(l, "expected_fail_regexp")))
			if err != nil {
				return i, nil, fmt.Errorf("invalid expected_fail_regexp: %w", err)
			}
			ev.failRe = re
			break
		}
		if p := patExpectRange.FindStringSubmatch(l); p != nil {
			var err error
			if ev.Start, ev.End, ev.Step, err = parseSpan(p[1], p[2], p[3]); err != nil {
				return i, nil, err
			}
			ev.At, ev.excludeRange, ev.rangeVector = ev.End, true, true
			continue
		}
		if rest, ok := strings.CutPrefix(l, "expect string"); ok {
			s, err := strconv.Unquote(strings.TrimSpace(rest))
			if err != nil {
				return i, nil, errors.New("expected string literal not valid: check that it is quoted")
			}
			ev.str, ev.excludeRange = &s, true
			continue
		}
		if strings.Split(l, " ")[0] == "expect" {
			kind, e, err := parseExpect(l)
			if err != nil {
				return i, nil, err
			}
			ev.expects[kind] = append(ev.expects[kind], e)
			j--
			continue
		}
		if f, err := parseNumber(l); err == nil {
			ev.scalar = &f
			break
		}
		m, vals, err := parser.ParseSeriesDesc(l)
		if err != nil {
			return i, nil, err
		}
		if len(vals) > 1 && !ev.Range && !ev.rangeVector {
			return i, nil, errors.New("expecting multiple values in instant evaluation not allowed")
		}
		ev.series[m.Hash()] = expectedSeries{labels: m, vals: vals, pos: j}
	}
	return i, ev, nil
}

func parseExpect(l string) (string, expectation, error) {
	p := patExpect.FindStringSubmatch(l)
	if p == nil {
		return "", expectation{}, errors.New("invalid expect statement, must match `expect <type> <match_type>: <string>`")
	}
	switch p[2] {
	case "msg":
		return p[1], expectation{msg: strings.TrimSpace(p[3])}, nil
	case "regex":
		re, err := regexp.Compile(strings.TrimSpace(p[3]))
		if err != nil {
			return "", expectation{}, fmt.Errorf("invalid regex for %s: %w", p[1], err)
		}
		return p[1], expectation{re: re}, nil
	}
	return p[1], expectation{re: regexp.MustCompile(`^.*$`)}, nil
}

func parseSpan(from, to, step string) (start, end int64, st time.Duration, err error) {
	f, err := model.ParseDuration(from)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("invalid start %q: %w", from, err)
	}
	t, err := model.ParseDuration(to)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("invalid end %q: %w", to, err)
	}
	s, err := model.ParseDuration(step)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("invalid step %q: %w", step, err)
	}
	if t < f {
		return 0, 0, 0, fmt.Errorf("end %s before start %s", to, from)
	}
	return time.Duration(f).Milliseconds(), time.Duration(t).Milliseconds(), time.Duration(s), nil
}

func parseNumber(s string) (float64, error) {
	n, err := strconv.ParseInt(s, 0, 64)
	f := float64(n)
	if err != nil {
		f, err = strconv.ParseFloat(s, 64)
	}
	return f, err
}
