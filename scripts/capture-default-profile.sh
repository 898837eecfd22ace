#!/usr/bin/env bash
# Captures profiles/node_exporter.json, the embedded default profile, from Debian's
# prometheus-node-exporter on a free loopback port, watching it for 5 minutes at 1 s so the
# shapes record how often each value changes, its steps and digits (issue 14). Run it on a
# host doing typical work (the default was captured on the loaded benchmark machine; hostLoad
# in a config makes the simulated hosts quieter). The textfile collector serves
# profiles/textfile/*.prom (a cron job's summary with NaN quantiles, as production hosts have),
# and the label families this machine has fewer of than a typical host (CPUs, disks,
# filesystems, network interfaces) are expanded by `tsbench profile capture -expand`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
go build -o bin/tsbench ./cmd/tsbench
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
  --collector.textfile.directory="$PWD/profiles/textfile" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/metrics" >/dev/null && break; sleep 0.1; done
sleep 10 # a fresh exporter's Go metrics start at zero: let it run a few garbage collections first
bin/tsbench profile capture -url "http://127.0.0.1:$port/metrics" -out profiles/node_exporter.json \
  -duration 5m -interval 1s \
  -expand 'node_cpu_:cpu=16,node_softnet_:cpu=16,node_disk_:device=4,node_filesystem_:mountpoint=6,node_network_:device=6'
# Units: node_exporter's text has no # UNIT line; fill them (and the help) as the default has them.
bin/tsbench profile metadata -url "http://127.0.0.1:$port/metrics" -profile profiles/node_exporter.json
