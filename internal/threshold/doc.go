// Package threshold judges results: it names the figures of a run a user can set a limit on,
// parses thresholds ("query.p99 < 2s") and compare rules ("query.p99>+20%"), evaluates
// thresholds on one run, and compares a new run with one old run or several figure by figure
// (the old runs' median, with each figure's noise) and checks compare rules on the comparison
// (the CI gate of `tsbench report compare`).
//
// Invariant: threshold reads results.Run and imports nothing else of tsbench, so every stage
// of a run can judge its results without the report, and report only renders its verdicts.
package threshold
