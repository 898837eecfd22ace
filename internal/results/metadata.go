package results

// VerdictUnknown is the verdict of a read-back of metadata, created timestamps, exemplars or
// native histograms that looked for nothing: none was sent in the window it checked.
const VerdictUnknown = "unknown"

// WriteMetadata counts the metadata-only requests remote write 1.0 sent with sendMetadata
// (issue 23): they carry no sample, so they are outside the sample account and its requests
// and bytes.
type WriteMetadata struct {
	// Families is how many metric families each request describes.
	Families int `json:"families"`
	// RequestsByStatus counts the requests by HTTP status, or network_error: every attempt,
	// retries included.
	RequestsByStatus map[string]int64 `json:"requestsByStatus"`
	// BytesSent is their compressed bytes.
	BytesSent int64 `json:"bytesSent"`
	// Retries counts the requests sent again after a network error, a 5xx or a 429, as a
	// batch of samples is retried (issue 37); absent when none was (and in results of
	// tsbench before it, which did not retry them).
	Retries int64 `json:"retries,omitempty"`
	// Dropped counts the sends (one per URL and interval) given up, by reason: retry_timeout
	// when the next retry would pass maxRetryDuration, http_<status> for a 3xx or 4xx but
	// 429. Absent when none was.
	Dropped map[string]int64 `json:"dropped,omitempty"`
	// Pending counts the sends still retrying when the run's drain deadline came. Every send
	// is accepted (a 2xx in RequestsByStatus), dropped or pending.
	Pending int64 `json:"pending,omitempty"`
}

// Metadata is the read-back of the metadata sent to one storage (issue 23), through
// /api/v1/metadata, family by family against the profile's type, help and unit.
type Metadata struct {
	// Families is how many families were sent and looked for.
	Families int `json:"families"`
	// Kept came back with the type, help and unit sent.
	Kept int `json:"kept"`
	// Changed came back with another type, help or unit (a storage may answer "unknown" for
	// a type it does not keep, or one entry per family name with a suffix).
	Changed int `json:"changed"`
	// Missing did not come back.
	Missing int `json:"missing"`
	// Verdict: "kept" (every family as sent), "changed" (some came back different),
	// "partial" (some missing), "dropped" (none came back), "error" (the read failed), or
	// "unknown" (no family looked for).
	Verdict  string   `json:"verdict"`
	Examples []string `json:"examples,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

// MetadataVerdict names what the counts say.
func (m *Metadata) MetadataVerdict() string {
	return readBackVerdict(int64(m.Kept), int64(m.Changed), int64(m.Missing), len(m.Errors) > 0)
}

// readBackVerdict names what a read-back's counts say: "error" when the read failed (as the
// caller judges), "unknown" when nothing was looked for (issue 29: not "dropped", 0 of 0),
// then "dropped" (nothing came back), "changed", "partial" or "kept".
func readBackVerdict(kept, changed, missing int64, failed bool) string {
	switch {
	case failed:
		return "error"
	case kept+changed+missing == 0:
		return VerdictUnknown
	case kept+changed == 0:
		return "dropped"
	case changed > 0:
		return "changed"
	case missing > 0:
		return "partial"
	}
	return "kept"
}

// Created is the read-back of the created timestamps sent to one storage (issue 23): a
// storage that ingests them as Prometheus 3 does with created-timestamp-zero-ingestion stores
// a zero sample at the start time before the series' first sample; tsbench looks for it.
type Created struct {
	// Checked are the series looked for: every counter, histogram and summary series of the
	// first 5 targets' first scrape.
	Checked int `json:"checked"`
	// Kept have a sample of value 0 at their target's process start.
	Kept int `json:"kept"`
	// Missing have none.
	Missing int `json:"missing"`
	// Verdict: "kept" (every series), "partial", "dropped" (none), "error", or "unknown"
	// (no series looked for).
	Verdict  string   `json:"verdict"`
	Examples []string `json:"examples,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

// CreatedVerdict names what the counts say.
func (c *Created) CreatedVerdict() string {
	return readBackVerdict(int64(c.Kept), 0, int64(c.Missing), len(c.Errors) > 0 && c.Kept == 0)
}
