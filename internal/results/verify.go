package results

import (
	"fmt"
	"strings"
	"time"
)

// Verify is the read-back check of one storage (issue: verify).
//
// Every sample checked lands in at most one of the counts below, so they add up: a NaN
// sample lost or turned into a number counts in NaNAltered only (not in MissingSamples), a
// staleness marker not honoured in StalenessIgnored only.
type Verify struct {
	// CheckedSamples is how many written samples (values and NaN, not staleness markers)
	// were looked for in the storage's answers.
	CheckedSamples int64 `json:"checkedSamples"`
	// NotChecked is why the read-back checked no sample; results.json then writes the counts
	// of UncheckedFields null (unchecked.go).
	NotChecked string `json:"notChecked,omitempty"`
	// MissingSamples were written but not returned (NaN samples excluded: see NaNAltered).
	MissingSamples int64 `json:"missingSamples"`
	// Late and OutOfOrder are the held samples' read-back (series.late, series.outOfOrder),
	// counted there and not above; nil without them.
	Late       *VerifyHeld `json:"late,omitempty"`
	OutOfOrder *VerifyHeld `json:"outOfOrder,omitempty"`
	// HA is the HA pair's read-back (series.haReplicas, ha.go); nil without HA pairs.
	HA *VerifyHA `json:"ha,omitempty"`
	// DuplicateSamples are extra answers for a timestamp already returned once.
	DuplicateSamples int64 `json:"duplicateSamples"`
	// UnexpectedSamples were returned but never written (in a series or at a time that was
	// not written, and not explained as a shifted timestamp).
	UnexpectedSamples int64 `json:"unexpectedSamples"`
	// ChangedValues came back with other float64 bits than were written.
	ChangedValues int64 `json:"changedValues"`
	// MaxRelativeError is the largest |got - want| / |want| among ChangedValues, always a
	// finite number: it is defined only for a finite, non-zero value written and a finite
	// value returned.
	MaxRelativeError float64 `json:"maxRelativeError"`
	// ChangedWithoutRelativeError counts the ChangedValues with no relative error (not in
	// MaxRelativeError): a 0 (or -0) written and something else returned, ±Inf changed, a
	// number returned as ±Inf or NaN, or a staleness marker returned as a number.
	ChangedWithoutRelativeError int64 `json:"changedWithoutRelativeError"`
	// NaNAltered counts NaN samples dropped or returned as a number.
	NaNAltered int64 `json:"nanAltered"`
	// StalenessIgnored counts series still returned by an instant query just after their
	// staleness marker.
	StalenessIgnored int64 `json:"stalenessIgnored"`
	// MissingStaleMarkers are staleness markers written but not stored, where the read-back
	// sees raw samples (ReadBackVia "remoteRead"); through the query API, markers are checked
	// as StalenessIgnored instead.
	MissingStaleMarkers int64 `json:"missingStaleMarkers"`
	// ShiftedTimestamps came back at another millisecond than written (by less than half a
	// scrape interval); MaxShiftMillis is the largest shift.
	ShiftedTimestamps int64      `json:"shiftedTimestamps"`
	Probes            []Probe    `json:"probes"`
	RuleDiffs         []RuleDiff `json:"ruleDiffs"`
	// RulesCompared counts the rules whose range-query answers were compared with another
	// storage's (0: none was, as with a single storage).
	RulesCompared int `json:"rulesCompared"`
	// RulesNotCompared are the rules whose lookback (largest range, subqueries added up) is
	// longer than the checked window: over younger series a rate is each engine's
	// extrapolation, not the data, so they are named, not compared.
	RulesNotCompared []string `json:"rulesNotCompared,omitempty"`

	MaxShiftMillis int64 `json:"maxShiftMillis"`
	// CheckedStaleMarkers is how many staleness markers were checked for StalenessIgnored.
	CheckedStaleMarkers int64 `json:"checkedStaleMarkers"`
	// ReadBackVia is how the samples were read back: "queryAPI" (range selectors through the
	// Prometheus query API at readURL) or "remoteRead" (raw samples through Prometheus remote
	// read at remoteReadURL, for a storage without the query API: no probes or rules then).
	ReadBackVia string `json:"readBackVia"`
	// CheckedSeries and Reads: how many series were compared, in how many queries.
	CheckedSeries int64 `json:"checkedSeries"`
	Reads         int64 `json:"reads"`
	// CheckedFrom and CheckedTo bound the timestamps of the samples checked (inclusive).
	CheckedFrom time.Time `json:"checkedFrom"`
	CheckedTo   time.Time `json:"checkedTo"`
	// PendingFrom is, for a storage that had not acked or dropped every sample when the
	// drain ended, the oldest it had not: the read-back ends just before it, as those
	// samples are pending in the write account (write.pendingSamples), not missing.
	PendingFrom *time.Time `json:"pendingFrom,omitempty"`
	// NotAckedSamples were planned but not looked for: tsbench dropped the write that carried
	// them (write.droppedSamples: queue full, refused, retries given up) or had it acked in
	// part, so the storage may hold them or not, and neither is its doing.
	NotAckedSamples int64 `json:"notAckedSamples,omitempty"`
	// Examples are the first differences found, one line each, for a human to start from.
	Examples []string `json:"examples,omitempty"`
	// ReadErrors is how many read-back reads failed (range, export and staleness reads;
	// probes and rules show their failures in their own answers).
	ReadErrors int64 `json:"readErrors"`
	// UncheckedSamples were planned but not checked: their range read failed, or was not
	// made because the check ran out of time. CheckedSamples + UncheckedSamples is every
	// sample planned.
	UncheckedSamples int64 `json:"uncheckedSamples"`
	// Errors are the first failed reads (ReadErrors counts them all), reads not made, or
	// why nothing was checked.
	Errors          []string `json:"errors,omitempty"`
	DurationSeconds float64  `json:"durationSeconds"`
	// Export is the same check on raw samples from /api/v1/export, where the storage offers
	// it (VictoriaMetrics): no query engine in between, staleness markers visible.
	Export *ExportCheck `json:"export,omitempty"`
	// RenamedSamples were not under the labels written but found under LabelChanges: counted
	// in CheckedSamples, not in MissingSamples (attribution.go).
	RenamedSamples int64         `json:"renamedSamples,omitempty"`
	LabelChanges   []LabelChange `json:"labelChanges,omitempty"`
	// StoredNothing is set when the storage acknowledged writes and stored none of them.
	StoredNothing *StoredNothing `json:"storedNothing,omitempty"`
	// Checks are the read-backs made while the load ran, every verifyInterval, oldest first,
	// at most MaxChecks (checks.go); Continuous adds them all up.
	Checks     []Check     `json:"checks,omitempty"`
	Continuous *Continuous `json:"continuous,omitempty"`
	// LostAfterAck counts the samples a check found and a later check did not: lost after
	// the storage acked them. LostAfterAckAt is the first check that missed one.
	LostAfterAck   int64      `json:"lostAfterAck"`
	LostAfterAckAt *time.Time `json:"lostAfterAckAt,omitempty"`
	// NativeHistograms is the read-back of the native histograms, when they were sent.
	NativeHistograms *NativeHistograms `json:"nativeHistograms,omitempty"`
	// Exemplars is the read-back of the exemplars, when they were sent.
	Exemplars *Exemplars `json:"exemplars,omitempty"`
	// Metadata is the read-back of the metadata through /api/v1/metadata, when the storage
	// was sent any (remote write 2.0, OTLP, or 1.0 with sendMetadata).
	Metadata *Metadata `json:"metadata,omitempty"`
	// Created is the read-back of the created timestamps (zero samples at the start time),
	// for storages written in remote write 2.0 or OTLP.
	Created *Created `json:"createdTimestamps,omitempty"`
}

// ExportCheck is the read-back of raw samples through a storage's export API: the counts
// mean what they mean in Verify; MissingStaleMarkers are markers written but not stored.
type ExportCheck struct {
	SampleCounts
}

// SampleCounts are what comparing the samples read back with those written counts: Verify
// has them among its own fields (in an order results.json keeps), ExportCheck embeds them.
// Add is the one place they add up, for the read-back's reads, the export and the shards
// of a merge alike.
type SampleCounts struct {
	CheckedSamples    int64   `json:"checkedSamples"`
	MissingSamples    int64   `json:"missingSamples"`
	DuplicateSamples  int64   `json:"duplicateSamples"`
	UnexpectedSamples int64   `json:"unexpectedSamples"`
	ChangedValues     int64   `json:"changedValues"`
	MaxRelativeError  float64 `json:"maxRelativeError"`
	NaNAltered        int64   `json:"nanAltered"`
	ShiftedTimestamps int64   `json:"shiftedTimestamps"`
	// ChangedWithoutRelativeError: as in Verify.
	ChangedWithoutRelativeError int64 `json:"changedWithoutRelativeError"`
	CheckedStaleMarkers         int64 `json:"checkedStaleMarkers"`
	MissingStaleMarkers         int64 `json:"missingStaleMarkers"`
}

// Add adds o to c: every count summed, the largest relative error kept.
func (c *SampleCounts) Add(o SampleCounts) {
	c.CheckedSamples += o.CheckedSamples
	c.MissingSamples += o.MissingSamples
	c.DuplicateSamples += o.DuplicateSamples
	c.UnexpectedSamples += o.UnexpectedSamples
	c.ChangedValues += o.ChangedValues
	c.MaxRelativeError = max(c.MaxRelativeError, o.MaxRelativeError)
	c.NaNAltered += o.NaNAltered
	c.ShiftedTimestamps += o.ShiftedTimestamps
	c.ChangedWithoutRelativeError += o.ChangedWithoutRelativeError
	c.CheckedStaleMarkers += o.CheckedStaleMarkers
	c.MissingStaleMarkers += o.MissingStaleMarkers
}

// SampleCounts are v's sample counts as one value.
func (v *Verify) SampleCounts() SampleCounts {
	return SampleCounts{
		CheckedSamples: v.CheckedSamples, MissingSamples: v.MissingSamples, DuplicateSamples: v.DuplicateSamples,
		UnexpectedSamples: v.UnexpectedSamples, ChangedValues: v.ChangedValues, MaxRelativeError: v.MaxRelativeError,
		NaNAltered: v.NaNAltered, ShiftedTimestamps: v.ShiftedTimestamps, ChangedWithoutRelativeError: v.ChangedWithoutRelativeError,
		CheckedStaleMarkers: v.CheckedStaleMarkers, MissingStaleMarkers: v.MissingStaleMarkers,
	}
}

// AddSampleCounts adds o to v's sample counts (SampleCounts.Add).
func (v *Verify) AddSampleCounts(o SampleCounts) {
	c := v.SampleCounts()
	c.Add(o)
	v.CheckedSamples, v.MissingSamples, v.DuplicateSamples = c.CheckedSamples, c.MissingSamples, c.DuplicateSamples
	v.UnexpectedSamples, v.ChangedValues, v.MaxRelativeError = c.UnexpectedSamples, c.ChangedValues, c.MaxRelativeError
	v.NaNAltered, v.ShiftedTimestamps, v.ChangedWithoutRelativeError = c.NaNAltered, c.ShiftedTimestamps, c.ChangedWithoutRelativeError
	v.CheckedStaleMarkers, v.MissingStaleMarkers = c.CheckedStaleMarkers, c.MissingStaleMarkers
}

// Probe is one PromQL behaviour: the correct Prometheus answer and this storage's.
type Probe struct {
	Name     string `json:"name"`
	Query    string `json:"query"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
	Same     bool   `json:"same"`
}

// RuleDiff is one rule whose range-query result differs from the other storages'.
type RuleDiff struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

// Exact reports whether the storage returned exactly what it was given: samples were
// checked, every one came back with the same timestamp and the same float64 bits (NaN as
// NaN), nothing extra, every staleness marker honoured, and no read failed.
func (v *Verify) Exact() bool {
	return v.exactValues() && len(v.LabelChanges) == 0
}

// exactValues is Exact but for the labels: every value and timestamp came back, under the
// labels written or under LabelChanges.
func (v *Verify) exactValues() bool {
	return v != nil && v.CheckedSamples > 0 && len(v.Errors) == 0 && v.ReadErrors == 0 && v.UncheckedSamples == 0 &&
		v.MissingSamples == 0 && v.DuplicateSamples == 0 && v.UnexpectedSamples == 0 &&
		v.ChangedValues == 0 && v.NaNAltered == 0 && v.StalenessIgnored == 0 && v.MissingStaleMarkers == 0 &&
		v.ShiftedTimestamps == 0 && v.LostAfterAck == 0 && (v.Continuous == nil || v.Continuous.Total.Checks == 0 || v.Continuous.Total.Clean())
}

// DifferentProbes counts the probes whose answer differs from Prometheus'.
func (v *Verify) DifferentProbes() int {
	n := 0
	for _, p := range v.Probes {
		if !p.Same {
			n++
		}
	}
	return n
}

// Verdict is the one-line read-back result, e.g. "returns exactly what it was given (12345
// samples, 40 staleness markers)" or "12345 samples checked: 120 missing, 7 values changed
// (max relative error 1.2e-13)".
func (v *Verify) Verdict() string {
	if v == nil {
		return "not verified"
	}
	if v.CheckedSamples == 0 && v.ContinuousVerdict() != "" { // a checkpoint's: no read-back at the end yet
		return "checked during the run only: " + v.ContinuousVerdict()
	}
	if v.Exact() {
		return fmt.Sprintf("returns exactly what it was given (%d samples, %d staleness markers)", v.CheckedSamples, v.CheckedStaleMarkers)
	}
	if s := v.attributionVerdict(); s != "" {
		return s
	}
	var parts []string
	add := func(n int64, what string) { parts = addCount(parts, n, what) }
	if len(v.LabelChanges) > 0 {
		parts = append(parts, fmt.Sprintf("%d under other labels (%s)", v.RenamedSamples, labelChangesText(v.LabelChanges)))
	}
	if v.LostAfterAck > 0 && v.LostAfterAckAt != nil {
		parts = append(parts, fmt.Sprintf("%d lost after ack (first missed by the check at %s)", v.LostAfterAck, v.LostAfterAckAt.UTC().Format(time.RFC3339)))
	}
	add(v.MissingSamples, "missing")
	add(v.DuplicateSamples, "duplicated")
	add(v.UnexpectedSamples, "unexpected")
	if v.ChangedValues > 0 {
		s := fmt.Sprintf("%d values changed (max relative error %.3g", v.ChangedValues, v.MaxRelativeError)
		if n := v.ChangedWithoutRelativeError; n > 0 {
			s += fmt.Sprintf("; %d from 0, ±Inf or a staleness marker, or to ±Inf or NaN", n)
		}
		parts = append(parts, s+")")
	}
	add(v.NaNAltered, "NaN dropped or altered")
	if v.StalenessIgnored > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d staleness markers ignored", v.StalenessIgnored, v.CheckedStaleMarkers))
	}
	if v.MissingStaleMarkers > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d staleness markers not stored", v.MissingStaleMarkers, v.CheckedStaleMarkers))
	}
	if v.ShiftedTimestamps > 0 {
		parts = append(parts, fmt.Sprintf("%d timestamps shifted (up to %dms)", v.ShiftedTimestamps, v.MaxShiftMillis))
	}
	add(v.ReadErrors, "reads failed")
	add(v.UncheckedSamples, "samples unchecked")
	if c := v.Continuous; c != nil && c.Total.Checks > 0 && !c.Total.Clean() {
		parts = append(parts, "differences in the checks during the run")
	}
	if len(parts) == 0 {
		return "nothing checked"
	}
	return fmt.Sprintf("%d samples checked: %s", v.CheckedSamples, strings.Join(parts, ", "))
}

// addCount appends "n what" to parts when n is not 0.
func addCount(parts []string, n int64, what string) []string {
	if n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n, what))
	}
	return parts
}
