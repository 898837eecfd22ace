#!/usr/bin/env bash
# make soak (issue 19): tsbench against the local VictoriaMetrics and Prometheus for SOAK
# (default 1h) of live load after SOAK_HISTORY (default 1h) of history caught up, then one
# table: tsbench's live heap and RSS slopes (from results.json, after its first 10 minutes or
# fifth), the size of its files (results.json as each checkpoint rewrote it, extrapolated to
# 24 h; report.html; its log), the largest schedule drift, every storage's account, and the
# continuous read-back's checks when the results have them. Everything stays in OUT/soak.
set -euo pipefail
cd "$(dirname "$0")/.."
soak=${SOAK:-1h}
history=${SOAK_HISTORY:-1h}
out=${OUT:-out}/soak
checkpoint=${SOAK_CHECKPOINT:-1m}
go build -o bin/tsbench ./cmd/tsbench
mkdir -p "$out"
rm -f "$out/results.json" "$out/report.html" "$out/sizes.tsv"
# checkpointInterval 1m: the file's growth is measured at every minute, not every 5.
printf 'checkpointInterval: %s\n' "$checkpoint" >"$out/soak.yaml"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "soak: $soak live after $history of history; output in $out (progress in $out/tsbench.log)"
bin/tsbench run -config "$out/soak.yaml" -history "$history" -duration "$soak" -out "$out" \
  -httpListenAddr "127.0.0.1:$port" >"$out/summary.txt" 2>"$out/tsbench.log" &
pid=$!
trap 'kill -INT $pid 2>/dev/null || true' INT TERM
start=$(date +%s)
last=""
# Every 10 s: the size of results.json when a checkpoint rewrote it, and tsbench's RSS.
while kill -0 "$pid" 2>/dev/null; do
  if [[ -f "$out/results.json" ]]; then
    size=$(stat -c %s "$out/results.json")
    if [[ "$size" != "$last" ]]; then
      printf '%s\t%s\n' "$(($(date +%s) - start))" "$size" >>"$out/sizes.tsv"
      last=$size
    fi
  fi
  tail -n 1 "$out/tsbench.log" 2>/dev/null | grep -o '^\[.*tsbench[^;]*' || true
  sleep 10
done
code=0
wait "$pid" || code=$?
cat "$out/summary.txt"
python3 scripts/soak-table.py "$out"
exit "$code"
