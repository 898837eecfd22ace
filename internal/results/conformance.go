package results

import "encoding/json"

// Conformance is how a storage answered Prometheus' own PromQL test files (tsbench
// conformance): every eval of the suite is passed, failed or not applicable, so
// Passed + Failed + NotApplicable is the suite's eval count. Not applicable is only what no
// storage could answer over the query API (a counter reset hint, the clock itself) and an
// OTLP storage as a whole; data a storage acknowledged and did not keep fails the evals that
// read it (KindDataDropped).
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
	// AddedLabels are the labels the storage adds to every series it stores (Thanos receive's
	// tenant_id="default-tenant"), name to value, found in its answer to the written data's
	// first read: answers are compared without them.
	AddedLabels map[string]string `json:"addedLabels,omitempty"`
	// PassedWithAddedLabels counts the passed evals whose answer held AddedLabels: they pass
	// once those are taken off.
	PassedWithAddedLabels int `json:"passedWithAddedLabels,omitempty"`
	// Files are per test file, in name order, with the Prometheus feature flags it needs.
	Files []ConformanceFile `json:"files"`
	// Functions are per function, aggregation or operator an eval uses (an eval counts
	// under each of them), in name order.
	Functions []ConformanceCount `json:"functions"`
	// Features are the evals per feature, in the order of the Feature constants (floats,
	// native histograms, experimental): a user who needs no native histograms reads the
	// floats' figures. Each eval counts under one.
	Features []ConformanceCount `json:"byFeature"`
	// Kinds counts the failures by kind; NotApplicableReasons the rest by reason.
	Kinds                map[string]int `json:"kinds"`
	NotApplicableReasons map[string]int `json:"notApplicableReasons"`
	// Failures lists every failed eval, in file and line order.
	Failures []ConformanceFailure `json:"failures"`
	// RejectedBlocks are the blocks whose samples the storage refused, with its answer.
	RejectedBlocks []ConformanceBlock `json:"rejectedBlocks,omitempty"`
	// WriteRetries counts the write requests sent again, by the status of the answer that
	// asked for it (429, 502, 503, 504): a block is refused only by an answer that is not
	// retried, or by the last after retrying for 30 s.
	WriteRetries map[string]int `json:"writeRetries,omitempty"`
	// DroppedSamples counts the float samples with a number (NaN and staleness markers
	// apart) of the series without native histograms that the storage acknowledged and does
	// not answer, read back by metric name and time once the writes were visible: the evals
	// that read them fail as KindDataDropped. Unknown (0) when ReadBackError is set: results.json
	// writes it null then (MarshalJSON), so that "could not read" never reads as "nothing
	// dropped" (issue 37).
	DroppedSamples int `json:"droppedSamples,omitempty"`
	// ReadBackError says why the read-back could not count DroppedSamples: how many of its
	// reads failed, and the first one's error.
	ReadBackError string `json:"readBackError,omitempty"`
}

// conformanceFields is Conformance without its methods, so that MarshalJSON can encode it.
type conformanceFields Conformance

// unreadConformance is a Conformance whose read-back failed as results.json writes it: its
// droppedSamples null (the field hides the embedded one of the same JSON name).
type unreadConformance struct {
	*conformanceFields
	DroppedSamples *int `json:"droppedSamples"`
}

// MarshalJSON writes droppedSamples null when the read-back failed (ReadBackError says why),
// else as it is. Reading such a file back gives 0, which ReadBackError still tells apart.
func (c *Conformance) MarshalJSON() ([]byte, error) {
	if c.ReadBackError == "" {
		return json.Marshal((*conformanceFields)(c))
	}
	return json.Marshal(unreadConformance{conformanceFields: (*conformanceFields)(c)})
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
	// KindDataDropped: the storage acknowledged the samples the eval reads and does not
	// answer them (a storage that predates native histograms skips their field).
	KindDataDropped = "data dropped after ack"
	// KindPanic: the storage's query engine crashed on the eval and recovered: Prometheus'
	// engine, and those built on it (Thanos query), answer "unexpected error: runtime error:
	// ..." and log "runtime panic during query evaluation". A bug of the storage's, kept
	// apart from the PromQL it refuses on purpose.
	KindPanic = "engine panic"
)

// Features of a conformance eval, for the per-feature figures.
const (
	FeatureFloats       = "floats"            // reads and expects floats only, in PromQL every server parses
	FeatureNative       = "native histograms" // reads or expects a native histogram, in PromQL every server parses
	FeatureExperimental = "experimental"      // needs an experimental function or syntax (a parser --enable-feature)
)

// ConformanceFeatures are the features in the order the figures list them.
func ConformanceFeatures() []string {
	return []string{FeatureFloats, FeatureNative, FeatureExperimental}
}

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

// Feature is the figures of one feature, zero when the results have none (an older file).
func (c *Conformance) Feature(name string) ConformanceCount {
	for _, f := range c.Features {
		if f.Name == name {
			return f
		}
	}
	return ConformanceCount{Name: name}
}
