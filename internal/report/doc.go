// Package report renders a run's results: the terminal summary, report.html, threshold checks
// and the comparison of two runs.
//
// Invariant: report reads results.Run and nothing else of a run, so results.json, the summary
// and the HTML always agree; no stage of a run imports report.
package report
