#!/usr/bin/env bash
# make fidelity (issue 14): does tsbench's data compress like a real exporter's?
#
# On this machine, loopback only, for FIDELITY_MINUTES (default 5) at the same time:
#   real     Debian's node_exporter behind a 1 s cache (it refuses more than 40 concurrent
#            scrapes), scraped every 1 s by vmagent as FIDELITY_TARGETS targets (default 50),
#            each with its own instance label, into its own fresh VictoriaMetrics and Prometheus;
#   captured tsbench with a profile captured from that same exporter just before (FIDELITY_CAPTURE,
#            default 3m at 1 s, no expansion), into its own pair;
#   default  tsbench with the embedded default profile, into its own pair.
# Then each VictoriaMetrics is flushed and force-merged, each Prometheus snapshotted with its
# head, and the table prints series per target, changed-sample fraction per series kind and
# bytes per sample on each storage, with the ratios captured/real and default/real.
# Six storages, vmagent and two tsbench runs share the machine: run it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${FIDELITY_MINUTES:-5}
targets=${FIDELITY_TARGETS:-50}
capture=${FIDELITY_CAPTURE:-3m}
bash scripts/install-deps.sh
command -v vmagent >/dev/null || { echo "fidelity: vmagent not found: apt-get install victoria-metrics" >&2; exit 1; }
go build -o bin/tsbench ./cmd/tsbench
go build -o bin/fidelity ./cmd/fidelity
work=$(mktemp -d /tmp/tsbench-fidelity.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -n "${FIDELITY_KEEP:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_url() { for _ in $(seq 300); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done; echo "fidelity: $1 not ready" >&2; exit 1; }
start() { # name, command...: runs it in the background, output to $work/name.log
  local name=$1; shift
  "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
}

ne=$(port)
start node_exporter prometheus-node-exporter --web.listen-address="127.0.0.1:$ne" \
  --collector.textfile.directory="$PWD/profiles/textfile"
wait_url "http://127.0.0.1:$ne/metrics"
cache=$(port)
start cache bin/fidelity cache -listen "127.0.0.1:$cache" -upstream "http://127.0.0.1:$ne/metrics"
wait_url "http://127.0.0.1:$cache/metrics"

# The capture asks node_exporter itself: alone at 1 s against the 1 s cache it would get every
# other page from the cache and see values change half as often as they do.
sleep 10 # a fresh exporter's Go metrics start at zero: let it run a few garbage collections first
echo "fidelity: capturing a profile from the exporter for $capture at 1s" >&2
bin/tsbench profile capture -url "http://127.0.0.1:$ne/metrics" -out "$work/captured.json" \
  -duration "$capture" -interval 1s >&2

declare -A vm prom
for side in real captured default; do
  vm[$side]=$(port); prom[$side]=$(port)
  start "vm-$side" victoria-metrics -httpListenAddr="127.0.0.1:${vm[$side]}" \
    -storageDataPath="$work/vm-$side" -retentionPeriod=1
  echo 'global: {}' >"$work/prom-$side.yml"
  start "prom-$side" prometheus --config.file="$work/prom-$side.yml" --storage.tsdb.path="$work/prom-$side" \
    --web.listen-address="127.0.0.1:${prom[$side]}" --web.enable-remote-write-receiver --web.enable-admin-api
done
for side in real captured default; do
  wait_url "http://127.0.0.1:${vm[$side]}/health"
  wait_url "http://127.0.0.1:${prom[$side]}/-/ready"
done

# vmagent scrapes the cache as $targets targets with the label set tsbench gives its own:
# job, instance host-NNNNNN:9100 and revision 0; each target has its own path so none is merged.
{
  echo 'global: {scrape_interval: 1s, scrape_timeout: 1s}'
  echo 'scrape_configs:'
  echo '- job_name: node_exporter'
  echo '  static_configs:'
  for i in $(seq 0 $((targets - 1))); do
    printf '  - targets: ["127.0.0.1:%s"]\n    labels: {instance: "host-%06d:9100", revision: "0", __metrics_path__: "/metrics/%d"}\n' "$cache" "$i" "$i"
  done
} >"$work/vmagent.yml"
# tsbench's two runs: the same targets, interval and duration, no churn, no reads.
for side in captured default; do
  {
    echo "duration: ${minutes}m"
    echo "targetsCount: $targets"
    echo "scrapeInterval: 1s"
    echo "scrapeConfigUpdatePercent: 0"
    echo "verifySamples: 0"
    [[ $side == captured ]] && echo "profile: $work/captured.json"
    echo "remoteStorages:"
    echo "  vm: {writeURL: http://127.0.0.1:${vm[$side]}/api/v1/write}"
    echo "  prometheus: {writeURL: http://127.0.0.1:${prom[$side]}/api/v1/write}"
  } >"$work/$side.yaml"
done

echo "fidelity: running real, captured and default side by side for ${minutes}m ($targets targets at 1s)" >&2
start vmagent vmagent -httpListenAddr="127.0.0.1:$(port)" -promscrape.config="$work/vmagent.yml" \
  -remoteWrite.tmpDataPath="$work/vmagent-queue" \
  -remoteWrite.url="http://127.0.0.1:${vm[real]}/api/v1/write" \
  -remoteWrite.url="http://127.0.0.1:${prom[real]}/api/v1/write"
vmagent_pid=${pids[-1]}
for side in captured default; do
  start "tsbench-$side" bin/tsbench run -config "$work/$side.yaml" -out "$work/out-$side" -httpListenAddr ""
done
tsbench_pids=("${pids[@]: -2}")
sleep "$((minutes * 60))"
kill "$vmagent_pid"
for p in "${tsbench_pids[@]}"; do wait "$p" || { echo "fidelity: a tsbench run failed; see $work/tsbench-*.log (FIDELITY_KEEP=1 keeps it)" >&2; exit 1; }; done
sleep 10 # let the last remote-write requests land

args=()
for side in real captured default; do
  args+=(-pipeline "$side,http://127.0.0.1:${vm[$side]},$work/vm-$side,http://127.0.0.1:${prom[$side]},$work/prom-$side")
done
bin/fidelity measure -targets "$targets" "${args[@]}"
