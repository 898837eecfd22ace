// Package report renders a run's results: the terminal summary, report.html, the threshold
// checks and the comparison of runs (one old run or several against a new one), as
// internal/threshold evaluated them.
//
// Invariant: report reads results.Run (and threshold's figures and verdicts over it) and
// nothing else of a run, so results.json, the summary and the HTML always agree; no stage of a
// run imports report.
package report
