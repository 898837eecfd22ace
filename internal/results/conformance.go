package results

// Conformance is how a storage answered Prometheus' own PromQL test files (tsbench
// conformance): every eval of the suite is passed, failed or not applicable, so
// Passed + Failed + NotApplicable is the suite's eval count.
type Conformance struct {
	Passed        int `json:"passed"`
	Failed        int `json:"failed"`
	NotApplicable int `json:"notApplicable"`
	// Seconds is the wall time of the suite against this storage: writing every block and
	// asking every eval.
	Seconds float64 `json:"seconds"`
	// Suite names the test files' origin, e.g. "github.com/prometheus/prometheus v0.310.0
	// promql/promqltest/testdata".
	Suite string `json:"suite"`
	// SpanHours is how far back the data goes (the storage's retention must cover it).
	SpanHours float64 `json:"spanHours"`
	// Files are per test file, in name order, with the Prometheus feature flags it needs.
	Files []ConformanceFile `json:"files"`
	// Functions are per function, aggregation or operator an eval uses (an eval counts
	// under each of them), in name order.
	Functions []ConformanceCount `json:"functions"`
	// Kinds counts the failures by kind; NotApplicableReasons the rest by reason.
	Kinds                map[string]int `json:"kinds"`
	NotApplicableReasons map[string]int `json:"notApplicableReasons"`
	// Failures lists every failed eval, in file and line order.
	Failures []ConformanceFailure `json:"failures"`
	// RejectedBlocks are the blocks whose samples the storage refused, with its answer.
	RejectedBlocks []ConformanceBlock `json:"rejectedBlocks,omitempty"`
}

// ConformanceFile is one test file's outcome.
type ConformanceFile struct {
	File          string   `json:"file"`
	Passed        int      `json:"passed"`
	Failed        int      `json:"failed"`
	NotApplicable int      `json:"notApplicable"`
	Features      []string `json:"features,omitempty"`
}

// ConformanceCount is the outcome of the evals that use one function or operator.
type ConformanceCount struct {
	Name          string `json:"name"`
	Passed        int    `json:"passed"`
	Failed        int    `json:"failed"`
	NotApplicable int    `json:"notApplicable"`
}

// Failure kinds of a conformance eval.
const (
	KindRejected          = "rejected"           // the storage answered an error where a result was expected
	KindWrongAnswer       = "wrong answer"       // a result other than the expected one, or a result where an error was expected
	KindMissingAnnotation = "missing annotation" // an expected warning or info was not returned
	KindExtraAnnotation   = "extra annotation"   // a warning or info the file does not expect
	KindDataRejected      = "data rejected"      // the storage refused the block's samples
)

// ConformanceFailure is one failed eval: the file's line, the query as the file has it,
// and what was expected and got.
type ConformanceFailure struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Expr     string `json:"expr"`
	Kind     string `json:"kind"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
}

// ConformanceBlock is a block the storage refused: the line of its first eval, its answer.
type ConformanceBlock struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Answer string `json:"answer"`
}

// Total is every eval counted.
func (c *Conformance) Total() int { return c.Passed + c.Failed + c.NotApplicable }
