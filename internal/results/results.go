// Package results is the versioned results.json schema: the types every stage of a run fills,
// reading and writing the file, the write account check and the read-back verdicts.
//
// Invariant: results imports nothing of tsbench's. Every stage writes its figures here and
// report renders only what is here, so results.json, the summary and the HTML always agree.
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SchemaVersion is bumped on every incompatible change of Run.
const SchemaVersion = 1

// Run is the content of results.json: everything measured in one run.
type Run struct {
	SchemaVersion int       `json:"schemaVersion"`
	StartTime     time.Time `json:"startTime"`
	EndTime       time.Time `json:"endTime"`
	// Config is the run's configuration with secrets redacted (a config.Config).
	Config    any        `json:"config"`
	Workload  Workload   `json:"workload"`
	Storages  []Storage  `json:"storages"` // in name order
	Generator *Generator `json:"generator,omitempty"`
	// Sender is scrape mode's agent (sender.go); nil when tsbench wrote directly.
	Sender *Sender `json:"sender,omitempty"`
	// Thresholds holds each configured threshold's outcome, in config order.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Shard says which part of a sharded workload this file holds; nil for a run of the whole
	// workload in one process. A merged file (tsbench report merge) has none, and Merged set.
	// A shard's file has no thresholds: they are evaluated on the merged file.
	Shard *Shard `json:"shard,omitempty"`
	// Merged is how many shard files `tsbench report merge` added up into this one.
	Merged int `json:"merged,omitempty"`
	// AccountingErrors lists every moment the write accounting did not balance; empty on a
	// good run. A non-empty list fails the run.
	AccountingErrors []string `json:"accountingErrors,omitempty"`
	// Partial is set while the run goes on: the file is a checkpoint (longrun.go).
	Partial *Partial `json:"partial,omitempty"`
	// Gaps are the stretches a resumed run did not account for (longrun.go).
	Gaps []Gap `json:"gaps,omitempty"`
	// Interrupted is set when the run was stopped before its configured duration.
	Interrupted *Interrupted `json:"interrupted,omitempty"`
	// Headline is each table row's medians, intervals and best storage (headline.go).
	Headline *Headline `json:"headline,omitempty"`
	// Rounds are every round's figures when the run was repeated (-rounds N, N > 1); the
	// storages above are the last round's, in full.
	Rounds []Round `json:"rounds,omitempty"`
	// NotFresh names the storages that held earlier rounds' data when a round began: tsbench
	// did not start them, so each round wrote under its own round label instead.
	NotFresh []string `json:"notFresh,omitempty"`
	// Reproduction is a published comparison's figures beside this run's (tsbench reproduce);
	// nil for any other run.
	Reproduction *Reproduction `json:"reproduction,omitempty"`
}

// Interrupted says when a run was stopped (an interrupt, SIGINT or SIGTERM) and how long it
// was meant to last, both as Go durations ("25s", "5m0s"), as the config's are written.
type Interrupted struct {
	At string `json:"at"` // since the start of the run
	Of string `json:"of"` // the configured duration
	// Round is "2 of 3" when the run had rounds: the round the interrupt ended; no later
	// round was run.
	Round string `json:"round,omitempty"`
}

// Shard is a shard file's place in its set.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Lead is set on the shard that ran the query load and observed the storages (leadShard).
	Lead bool `json:"lead"`
}

// Workload describes what the generator produced, the same for every storage.
type Workload struct {
	Targets         int   `json:"targets"`         // targetsCount × writeReplicas
	SeriesPerTarget int   `json:"seriesPerTarget"` // sent per target, native histogram series included
	ActiveSeries    int64 `json:"activeSeries"`
	SeriesCreated   int64 `json:"seriesCreated"` // by churn, beyond the initial targets × seriesPerTarget
	StaleMarkers    int64 `json:"staleMarkers"`
	// ScrapeIntervalSeconds and Seed let a reader recompute every sample.
	ScrapeIntervalSeconds float64 `json:"scrapeIntervalSeconds"`
	Seed                  uint64  `json:"seed"`
	// HistorySeconds is how far before StartTime the workload's clock began (config history):
	// the data a storage holds at StartTime + t spans up to HistorySeconds + t.
	HistorySeconds float64 `json:"historySeconds,omitempty"`
	// HistorySkewSeconds is the bound on the catch-up's order: no history sample reached a
	// storage more than this older than the newest one sent to it before. Absent without
	// history.
	HistorySkewSeconds float64 `json:"historySkewSeconds,omitempty"`
	// Series is the series section's events and expected series over time; nil without.
	Series *WorkloadSeries `json:"series,omitempty"`
}

// Storage is everything measured for one storage under test.
type Storage struct {
	Name string `json:"name"`
	// Status is ok, degraded or failed (status.go), StatusReasons why when it is not ok. A
	// failed storage is ranked on nothing and makes tsbench run exit 3.
	Status        string     `json:"status,omitempty"`
	StatusReasons []string   `json:"statusReasons,omitempty"`
	Write         *Write     `json:"write,omitempty"`
	Query         *Query     `json:"query,omitempty"`
	Resources     *Resources `json:"resources,omitempty"`
	Verify        *Verify    `json:"verify,omitempty"`
	// QueryAPI is the check, at the start of the run, that readURL serves the Prometheus HTTP
	// query API; absent when the storage has no readURL.
	QueryAPI *QueryAPI `json:"queryAPI,omitempty"`
	// Series compares the storage's resources and latency during each cardinality event with
	// the calm before it; nil without events.
	Series *StorageSeries `json:"series,omitempty"`
	// Conformance is the PromQL test suite's outcome (tsbench conformance); absent from a run.
	Conformance *Conformance `json:"conformance,omitempty"`
	// Problems are what went wrong with the storage during the run (it exited, ...).
	Problems []string `json:"problems,omitempty"`
	// ExitedAt is when the storage's process, one tsbench started, exited while the run still
	// needed it; absent when it ran to the end (or tsbench did not start it). Its status is
	// then failed.
	ExitedAt *time.Time `json:"exitedAt,omitempty"`
	// Freshness is the canary's measure of how soon an ack is visible (freshness.go).
	Freshness *Freshness `json:"freshness,omitempty"`
	// Version is the storage's version as it says it on /metrics (vm_app_version,
	// prometheus_build_info), else, for a storage tsbench started, its Debian package's
	// version; absent when neither is known.
	Version string `json:"version,omitempty"`
	// Settings are the storage's settings that change what tsbench measures, as flags: those
	// tsbench started it with beyond its address and paths (its retention, what it answers,
	// the sample types it keeps), then those read from the storage at the start of the run
	// (VictoriaMetrics' -search.latencyOffset, -dedup.minScrapeInterval, -retentionPeriod;
	// Prometheus' --storage.tsdb.retention.time and its config's
	// storage.tsdb.out_of_order_time_window). Absent when neither applies.
	Settings []string `json:"settings,omitempty"`
	// SettingsWarnings say, one sentence each, which settings hide data from tsbench's
	// checks (a latency offset longer than the probes wait, a retention shorter than the
	// run) and what to change.
	SettingsWarnings []string `json:"settingsWarnings,omitempty"`
}

// QueryAPI is the answer of a storage's readURL to one cheap Prometheus API call, the instant
// query `1`, asked before the load starts. A storage without the API (Available false) gets
// no read load, probes or rule comparison; its read-back goes through remoteReadURL when set.
type QueryAPI struct {
	URL string `json:"url"` // readURL, secrets redacted
	// Available is false only when readURL answered, and not as the Prometheus API does (a 404
	// page, HTML, another API's JSON). One that could not be reached or answered only 5xx
	// keeps its read load, whose errors count.
	Available bool `json:"available"`
	// Answer is what the check got when it was not the API's success, e.g.
	// "http_404 (http 404): 404 page not found" or "network: … connection refused".
	Answer string `json:"answer,omitempty"`
}

// Write is the write path's account for one storage: exact integer counts, where
// GeneratedSamples == AckedSamples + sum(DroppedSamples) + PendingSamples.
type Write struct {
	GeneratedSamples int64            `json:"generatedSamples"`
	AckedSamples     int64            `json:"ackedSamples"`
	DroppedSamples   map[string]int64 `json:"droppedSamples"` // by reason
	PendingSamples   int64            `json:"pendingSamples"`
	Retries          int64            `json:"retries"`
	RequestsByStatus map[string]int64 `json:"requestsByStatus"` // "204", "429", "network_error", ...
	BytesSent        int64            `json:"bytesSent"`
	// TargetSamplesPerSecond is the configured rate: series × targets / scrapeInterval × copies.
	TargetSamplesPerSecond float64 `json:"targetSamplesPerSecond"`
	// AchievedSamplesPerSecond is the acked samples over the time from the load's start to
	// the last ack, drain included: a storage that catches up only after the load does not
	// get credit for the load time alone. 0 before the first ack.
	AchievedSamplesPerSecond float64 `json:"achievedSamplesPerSecond"`
	// MaxLagSeconds is the largest lag of the live phase (with history, from the moment the
	// storage caught up: during the catch-up it lags by design).
	MaxLagSeconds float64 `json:"maxLagSeconds"`
	// LagSeconds is the lag at the moment of the snapshot: now − the scheduled time of the
	// oldest sample not yet acked or dropped (0 when nothing is pending).
	LagSeconds float64 `json:"lagSeconds"`
	// MaxScheduleDriftSeconds is tsbench's own schedule drift: the largest delay, over the
	// live phase, from a sample's scheduled time to the moment its batch was generated,
	// encoded and queued to send; waiting for the storage after that is lag. A run of days
	// holds it under one scrape interval (issue 19).
	MaxScheduleDriftSeconds float64 `json:"maxScheduleDriftSeconds"`
	// Protocol is what the storage was written in: prometheus-rw1, prometheus-rw2 or otlp-http.
	Protocol string `json:"protocol,omitempty"`
	// UnconfirmedSamples are acked samples whose 2xx did not confirm them: a remote write 2.0
	// answer without X-Prometheus-Remote-Write-Samples-Written, as a 1.0-only receiver
	// answers. They are in AckedSamples.
	UnconfirmedSamples int64 `json:"unconfirmedSamples,omitempty"`
	// Notes say, in words, what the storage's answers mean for the account: unconfirmed 2.0
	// writes, a storage that does not take 2.0 (415), OTLP partial successes.
	Notes []string `json:"notes,omitempty"`
	// Limits are the storage's own limits its refusals named (a tenant's series or
	// ingestion rate, concurrent inserts, out-of-order samples), in the order first met:
	// nil when none was recognized.
	Limits []WriteLimit `json:"limits,omitempty"`
	// Copies is how many times each generated sample is sent to this storage
	// (writeURLReplicas × URLs in writeURL); GeneratedSamples counts every copy.
	Copies int `json:"copies"`
	// Timeline holds the write counters every progress interval.
	Timeline []WritePoint `json:"timeline,omitempty"`
	// History is the catch-up of a run with history: nil without.
	History *WriteHistory `json:"history,omitempty"`
	// Metadata counts remote write 1.0's metadata-only requests (sendMetadata): nil without.
	Metadata *WriteMetadata `json:"metadata,omitempty"`
	// Late and OutOfOrder count the held samples apart (series.late, series.outOfOrder):
	// nil without them.
	Late       *WriteHeld `json:"late,omitempty"`
	OutOfOrder *WriteHeld `json:"outOfOrder,omitempty"`
}

// WriteLimit is one limit a storage named when it refused writes (issue 31), recognized in
// the body of its answer, with what raises it.
type WriteLimit struct {
	// Limit names it: "series per tenant", "ingestion rate", "concurrent inserts", ...
	Limit string `json:"limit"`
	// Family is the storage whose message it is: Mimir, Cortex, VictoriaMetrics, or
	// "Prometheus TSDB" for the TSDB's own refusals, which Prometheus, Thanos receive and
	// Cortex answer alike.
	Family string `json:"family"`
	// Value is the limit's value as the message gives it, "" when it gives none.
	Value string `json:"value,omitempty"`
	// Raise is the flags or config keys that raise it.
	Raise string `json:"raise"`
	// Status is the HTTP status of the first answer that named it.
	Status int `json:"status"`
	// Requests counts the answers that named it (each retry of a 429 or 5xx is one).
	Requests int64 `json:"requests"`
	// Message is the first such answer's body, as much of it as tsbench reads (512 bytes).
	Message string `json:"message"`
}

// WriteHistory is a storage's catch-up (config history, issue 12): the batches generated
// while its generator was behind the wall clock, sent as fast as the storage took them. They
// are in the account above like every other sample.
type WriteHistory struct {
	GeneratedSamples int64 `json:"generatedSamples"`
	AckedSamples     int64 `json:"ackedSamples"`
	// Seconds is from the load's start until the last history batch settled (until now when
	// CaughtUp is false).
	Seconds float64 `json:"seconds"`
	// SamplesPerSecond is AckedSamples over Seconds: the storage's catch-up rate, the most it
	// ingested with tsbench sending as fast as it answered.
	SamplesPerSecond float64 `json:"samplesPerSecond"`
	// CaughtUp is true once the storage held (or refused) every history sample: its live
	// phase, its query load and duration began then.
	CaughtUp bool `json:"caughtUp"`
	// CaughtUpTime is when; zero when CaughtUp is false.
	CaughtUpTime time.Time `json:"caughtUpTime,omitzero"`
}

// WritePoint is a snapshot of the write counters at one moment of the run.
type WritePoint struct {
	Time           time.Time `json:"time"`
	Generated      int64     `json:"generated"`
	Acked          int64     `json:"acked"`
	Dropped        int64     `json:"dropped"`
	Pending        int64     `json:"pending"`
	Retries        int64     `json:"retries"`
	LagSeconds     float64   `json:"lagSeconds"`
	SamplesPerSecs float64   `json:"samplesPerSecond"` // acked rate since the previous point
	// N is how many progress intervals the point stands for (0: one) in a long run's
	// downsampled timeline (Timeline): counters are the last interval's, LagSeconds the
	// largest, SamplesPerSecs the mean between SamplesPerSecondMin and SamplesPerSecondMax.
	N                   int     `json:"n,omitempty"`
	SamplesPerSecondMin float64 `json:"samplesPerSecondMin,omitempty"`
	SamplesPerSecondMax float64 `json:"samplesPerSecondMax,omitempty"`
}

// Storage is the named storage's results, or nil.
func (r *Run) Storage(name string) *Storage {
	for i := range r.Storages {
		if r.Storages[i].Name == name {
			return &r.Storages[i]
		}
	}
	return nil
}

// Dropped is the sum of DroppedSamples over every reason.
func (w *Write) Dropped() int64 {
	var n int64
	for _, v := range w.DroppedSamples {
		n += v
	}
	return n
}

// Balanced reports whether generated = acked + dropped + pending holds, and the difference.
func (w *Write) Balanced() (bool, int64) {
	diff := w.GeneratedSamples - w.AckedSamples - w.Dropped() - w.PendingSamples
	return diff == 0, diff
}

// WriteFile writes r as indented JSON to dir/results.json.
func (r *Run) WriteFile(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "results.json")
	return path, writeAtomic(path, append(b, '\n'))
}

// ReadFile loads a results.json written by any tsbench of the same schema version.
func ReadFile(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse reads the content of a results.json; name says where it came from, for errors.
func Parse(b []byte, path string) (*Run, error) {
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: schemaVersion %d, this tsbench reads %d", path, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}
