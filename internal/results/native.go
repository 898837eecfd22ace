package results

// NativeHistograms is the read-back of the native histograms sent to one storage (issue 23):
// a sample of series over the end of the run, read through the query API, each histogram
// compared bucket by bucket (count, sum, every non-empty bucket's bounds and count, the zero
// bucket) with what was sent.
type NativeHistograms struct {
	// Send is nativeHistograms.send: true or both.
	Send string `json:"send"`
	// Schemas is each family's schema as sent: nativeHistograms.schema, or the coarsest that
	// keeps the family's bounds in buckets of their own.
	Schemas map[string]int32 `json:"schemas"`
	// CheckedSeries and CheckedHistograms are the native series and histograms looked for.
	CheckedSeries     int   `json:"checkedSeries"`
	CheckedHistograms int64 `json:"checkedHistograms"`
	// Kept came back as native histograms equal to what was sent.
	Kept int64 `json:"kept"`
	// Changed came back as native histograms with another count, sum or bucket.
	Changed int64 `json:"changed"`
	// Missing did not come back as native histograms.
	Missing int64 `json:"missing"`
	// FloatPoints are float samples the storage returned for the native series: under their
	// name and labels, or as bucket series made from them (name_bucket with a vmrange label,
	// as VictoriaMetrics stores a native histogram, or with an le no classic series was sent
	// with): the histograms turned into numbers.
	FloatPoints int64 `json:"floatPoints"`
	// FailedRequests are the storage's write requests answered with an error (not 2xx) or
	// not answered: with nothing stored, the histograms were refused rather than dropped.
	FailedRequests int64 `json:"failedRequests"`
	// Verdict: "kept" (every histogram as sent), "changed" (returned, some different),
	// "converted" (returned as numbers, not histograms), "dropped" (acknowledged and nothing
	// stored), "refused" (nothing stored, and write requests failed: Prometheus 2.x without
	// its feature flag answers 500 to a request with histograms, floats and all), "partial"
	// (some kept, some missing), "error" (the read failed: see Errors), or "unknown" (no
	// histogram looked for).
	Verdict  string   `json:"verdict"`
	Examples []string `json:"examples,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

// NativeVerdict names what the counts say.
func (n *NativeHistograms) NativeVerdict() string {
	returned := n.Kept+n.Changed > 0
	switch {
	case !returned && len(n.Errors) > 0:
		return "error"
	case n.Kept+n.Changed+n.Missing == 0:
		return VerdictUnknown
	case !returned && n.FloatPoints > 0:
		return "converted"
	case !returned && n.FailedRequests > 0:
		return "refused"
	}
	return readBackVerdict(n.Kept, n.Changed, n.Missing, false)
}

// Exemplars is the read-back of the exemplars sent to one storage (issue 23), through
// /api/v1/query_exemplars, for a sample of targets over the end of the run.
type Exemplars struct {
	// Percent is exemplars.percent: of counter samples and native histograms.
	Percent float64 `json:"percent"`
	// Checked exemplars were looked for; Kept came back with their trace_id, value (bit for
	// bit) and time; Changed came back at their series and time with another trace id or
	// value; Missing did not come back.
	Checked int64 `json:"checked"`
	Kept    int64 `json:"kept"`
	Changed int64 `json:"changed"`
	Missing int64 `json:"missing"`
	// Verdict: "kept", "changed", "dropped" (none came back), "partial", "error", or
	// "unknown" when none was looked for (Reason says why).
	Verdict  string   `json:"verdict"`
	Examples []string `json:"examples,omitempty"`
	Errors   []string `json:"errors,omitempty"`
	// Reason says why no exemplar was looked for, when none was.
	Reason string `json:"reason,omitempty"`
}

// ExemplarVerdict names what the counts say.
func (e *Exemplars) ExemplarVerdict() string {
	return readBackVerdict(e.Kept, e.Changed, e.Missing, len(e.Errors) > 0 && e.Kept+e.Changed == 0)
}
