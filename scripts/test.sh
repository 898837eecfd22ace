#!/usr/bin/env bash
# make test's tests: every package of tsbench under the race detector, and beside them the
# end-to-end package without it. What e2e tests is the tsbench binary it builds, built without
# -race as users run it, and the real storages it starts; under -race the in-process receivers
# of some e2e tests (Prometheus' TSDB and engine) took most of the suite's CPU. `make e2e` still
# runs e2e under -race, by hand.
#
# Each go test writes its -json events to a file of its own (two writers on one pipe could
# split a long line); $OUT/test.json is both, and scripts/testsummary prints the result.
# Exits non-zero when either go test or the summary failed.
set -uo pipefail
GO=${GO:-go}
OUT=${OUT:-out}
TIMEOUT=${TEST_TIMEOUT:-10m}
mkdir -p "$OUT"
# go test starts packages in the order given, two at a time on 2 cores: the longest first
# (cli, then conformance), so that neither starts last and holds up the end.
mapfile -t unit < <("$GO" list ./... | grep -v '/e2e$' | awk '/\/internal\/cli$/ {print 0, $0; next} /\/internal\/conformance$/ {print 1, $0; next} {print 2, $0}' | sort -s -n -k1,1 | cut -d' ' -f2)

"$GO" test -count=1 -json -timeout "$TIMEOUT" ./e2e/... > "$OUT/e2e.json" &
e2e=$!
"$GO" test -race -count=1 -json -timeout "$TIMEOUT" "${unit[@]}" > "$OUT/unit.json"
unit_rc=$?
wait "$e2e"
e2e_rc=$?
cat "$OUT/unit.json" "$OUT/e2e.json" > "$OUT/test.json"
rm -f "$OUT/unit.json" "$OUT/e2e.json"
"$GO" run ./scripts/testsummary < "$OUT/test.json"
summary_rc=$?
if (( unit_rc != 0 || e2e_rc != 0 || summary_rc != 0 )); then
	echo "go test exit codes: packages under -race $unit_rc, e2e $e2e_rc; summary $summary_rc" >&2
	exit 1
fi
