#!/usr/bin/env bash
# Benchmarks a storage's release candidate for a few minutes and compares the run with the
# last release's results.json: exits 3 when a figure changed past one of its compareThresholds
# (or FAIL_ON), 1 on an error, 0 otherwise. Runs as long as CONFIG's duration
# plus the read-back (3.5 minutes with examples/ci/bench.yaml).
#
#   BASELINE=last-release/results.json examples/ci/compare-release.sh
#
# The candidate must already be listening where CONFIG points. Environment:
#   BASELINE  the last release's results.json, or a directory of several of its runs (their
#             median the baseline, their spread the noise) (required); keep this run's as the next one's
#   CONFIG    the benchmark (default examples/ci/bench.yaml)
#   OUT       where results.json, report.html and compare.html go (default out/candidate)
#   MAP       old=new storage names, when the baseline named its storage otherwise
#   FAIL_ON   more compare rules, e.g. 'query.p50>+10%' (the config's compareThresholds apply too)
#   TSBENCH   the tsbench binary (default bin/tsbench, built by make build)
set -euo pipefail

: "${BASELINE:?set BASELINE to the results.json of the last release}"
config=${CONFIG:-examples/ci/bench.yaml}
out=${OUT:-out/candidate}
tsbench=${TSBENCH:-bin/tsbench}

"$tsbench" validate -config "$config"
# A threshold of the run itself failing exits 3 too; compare anyway, then exit with the worse.
run=0
"$tsbench" run -config "$config" -out "$out" -httpListenAddr "" || run=$?
if [ "$run" -ne 0 ] && [ "$run" -ne 3 ]; then
	exit "$run"
fi
args=(report compare "$BASELINE" "$out/results.json" -out "$out")
if [ -n "${MAP:-}" ]; then
	args+=(-map "$MAP")
fi
if [ -n "${FAIL_ON:-}" ]; then
	args+=(-fail-on "$FAIL_ON")
fi
compare=0
"$tsbench" "${args[@]}" || compare=$?
exit $((compare > run ? compare : run))
