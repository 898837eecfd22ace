package results

// Query is the read path's account for one storage (issue: read path).
type Query struct {
	Executed       int64            `json:"executed"`
	OK             int64            `json:"ok"`
	Errors         map[string]int64 `json:"errors"` // by kind: "http_503", "timeout", "bad_body", "status_error:bad_data", ...
	Warnings       int64            `json:"warnings"`
	Missed         int64            `json:"missed"`
	LatencySeconds Latency          `json:"latencySeconds"`
	// ServiceSeconds is measured from each request's send: LatencySeconds minus the time an
	// evaluation waited for a free query slot.
	ServiceSeconds Latency     `json:"serviceSeconds"`
	PerQuery       []QueryStat `json:"perQuery"`
	// Timeline holds p50/p99 and errors every observe interval.
	Timeline []QueryPoint `json:"timeline,omitempty"`
}

// QueryStat is one query's (rule, panel or index lookup) figures against one storage.
type QueryStat struct {
	Name           string           `json:"name"`
	Kind           string           `json:"kind"` // instant, range, series, labels, labelValues
	Expr           string           `json:"expr,omitempty"`
	Executed       int64            `json:"executed"`
	OK             int64            `json:"ok"`
	Errors         map[string]int64 `json:"errors"`
	Warnings       int64            `json:"warnings"`
	Missed         int64            `json:"missed"`
	LatencySeconds Latency          `json:"latencySeconds"`
	ServiceSeconds Latency          `json:"serviceSeconds"`
	// ResultSeries is the series count of the last successful evaluation; null when none
	// succeeded.
	ResultSeries *int64 `json:"resultSeries"`
	// FirstError is the text of the first error seen, for the reader to act on.
	FirstError string `json:"firstError,omitempty"`
	// Group is a rule's group in the rule file; IntervalSeconds how often the query is
	// scheduled (for a rule, its group's interval, else queryInterval).
	Group           string  `json:"group,omitempty"`
	IntervalSeconds float64 `json:"intervalSeconds,omitempty"`
}

// Latency quantiles in seconds, measured from each query's scheduled time, over the
// successful evaluations only (a refused connection is fast: counted with the failures, it
// would flatter a storage that never answered; the errors are counted beside). Each is null
// when no evaluation succeeded: there is no latency to tell, and 0 would read as the fastest
// answer.
type Latency struct {
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
	// Histogram is every latency recorded, in microseconds: HdrHistogram's V2 compressed
	// encoding (base64), as its Java and Go libraries read it. Merged results add these up.
	Histogram string `json:"histogram,omitempty"`
}

// QueryPoint is the read path at one moment of the run. P50 and P99 are null when no
// evaluation completed in the interval (Completed is 0).
type QueryPoint struct {
	Time   string   `json:"time"`
	P50    *float64 `json:"p50"`
	P99    *float64 `json:"p99"`
	Errors int64    `json:"errors"`
	// Completed is how many evaluations finished in the interval ending at Time.
	Completed int64 `json:"completed"`
	// N is how many intervals the point stands for (0: one) in a long run's downsampled
	// timeline (Timeline): completions and errors added up, P50 their mean, P99 the largest.
	N int `json:"n,omitempty"`
}
