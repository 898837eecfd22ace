#!/usr/bin/env bash
# make test's tests: every package of tsbench under the race detector, and beside them, without
# it, the tests whose CPU goes to real storages or to Prometheus' TSDB run in the test process:
#
#   - the end-to-end package: what it tests is the tsbench binary it builds, built without
#     -race as users run it, and the real storages it starts;
#   - cli's whole runs in process (inProcess below): the matrix, the A/A headline and the
#     history canary. Under -race these three took 300 s of CPU, 37 s without (docs/development.md).
#     Under -race the matrix still runs one row in every mode ($raceRows), so every mode's
#     pipeline is raced; `make race` runs all of it under -race, by hand, as `make e2e` does e2e;
#   - conformance's runs of Prometheus' PromQL test files through its engine, but one
#     (TestRunAgainstReceiver, raced): most of the package's 36 s of CPU under -race (6 without);
#   - freshness's TestFreshnessMeasuresTheDelay, which judges poll times in real time: in the
#     race pass at nice 10 a busy make test starved it (max 1.1-1.6 s where 0.95 is allowed).
#
# Each go test writes its -json events to a file of its own (two writers on one pipe could
# split a long line); $OUT/test.json is all of them, and scripts/testsummary prints the result.
# Exits non-zero when any go test or the summary failed.
set -uo pipefail
GO=${GO:-go}
OUT=${OUT:-out}
TIMEOUT=${TEST_TIMEOUT:-10m}
# e2e's is twice that: beside another e2e run on the machine its tests take turns at the
# machine's slots (e2e/slots_test.go), and it may take as long as both.
E2E_TIMEOUT=${E2E_TEST_TIMEOUT:-20m}
# The test names are unique across the packages; -run and -skip apply to both.
notRaced='TestFreshnessMeasuresTheDelay|TestHeadlineAA|TestHistoryCanaryAfterCatchUp|TestRunWithoutNativeHistograms|TestLayoutKeepsBlocksApart|TestRunAddedLabel|TestRunHistogramsVisibleLater'
inProcess="^(TestMatrix|$notRaced)\$"
raceRows=dropSamples
mkdir -p "$OUT"
# go test starts packages in the order given, the longest first (conformance, then cli), so
# that neither starts last and holds up the end; 4 at a time, not GOMAXPROCS' 2, as most of
# the packages mostly wait (bench: 28 s for 7 s of CPU, freshness 23 for 7), and at 2 the
# race pass ran on alone for 130 s after e2e had ended.
mapfile -t unit < <("$GO" list ./... | grep -v '/e2e$' | awk '/\/internal\/conformance$/ {print 0, $0; next} /\/internal\/cli$/ {print 1, $0; next} {print 2, $0}' | sort -s -n -k1,1 | cut -d' ' -f2)

"$GO" test -count=1 -json -timeout "$E2E_TIMEOUT" ./e2e/... > "$OUT/e2e.json" &
e2e=$!
"$GO" test -count=1 -json -timeout "$TIMEOUT" -run "$inProcess" ./internal/cli ./internal/conformance ./internal/freshness > "$OUT/inprocess.json" &
inprocess=$!
# The race pass skips the runs above but the matrix, which it runs one row of. It runs at
# nice 10: its tests wait on events or a fake clock, while e2e's judge real storages keeping
# up with a production rate in real time, which a second suite's race pass beside them
# starved (two make test side by side: Prometheus given 0.14 cores, 80 s behind). Alone, the
# machine's CPU goes to it all the same.
TSBENCH_MATRIX_ROWS=$raceRows nice -n 10 "$GO" test -race -p 4 -count=1 -json -timeout "$TIMEOUT" -skip "^($notRaced)\$" "${unit[@]}" > "$OUT/unit.json"
unit_rc=$?
wait "$inprocess"
inprocess_rc=$?
wait "$e2e"
e2e_rc=$?
cat "$OUT/unit.json" "$OUT/inprocess.json" "$OUT/e2e.json" > "$OUT/test.json"
rm -f "$OUT/unit.json" "$OUT/inprocess.json" "$OUT/e2e.json"
"$GO" run ./scripts/testsummary < "$OUT/test.json"
summary_rc=$?
if (( unit_rc != 0 || inprocess_rc != 0 || e2e_rc != 0 || summary_rc != 0 )); then
	echo "go test exit codes: packages under -race $unit_rc, the in-process runs $inprocess_rc, e2e $e2e_rc; summary $summary_rc" >&2
	exit 1
fi
