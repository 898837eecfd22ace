#!/usr/bin/env bash
# Installs, idempotently, the Debian packages tsbench needs to run its default benchmark and its
# tests: the storages under test, a real node_exporter (profile capture), and Chromium (the
# report's browser test), and InfluxDB 1.x (a storage without the Prometheus query API, written
# and read back over remote write and remote read by its e2e test). Packages already present are
# left alone; nothing else is touched.
#
#   scripts/install-deps.sh            # storages + exporter
#   scripts/install-deps.sh --browser  # also chromium, for the report test
#   scripts/install-deps.sh --image    # also buildah, for `make image`
set -euo pipefail

# binary:package pairs; a binary on PATH means its package is there.
want=(
  victoria-metrics:victoria-metrics
  vmagent:victoria-metrics
  prometheus:prometheus
  prometheus-node-exporter:prometheus-node-exporter
  influxd:influxdb
)
for arg in "$@"; do
  case $arg in
    --browser) want+=(chromium:chromium) ;;
    --image) want+=(buildah:buildah) ;;
    *) echo "install-deps: unknown option $arg (--browser, --image)" >&2; exit 2 ;;
  esac
done

missing=()
for pair in "${want[@]}"; do
  bin=${pair%%:*}
  pkg=${pair#*:}
  command -v "$bin" >/dev/null 2>&1 || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

# Root installs directly; another user through sudo when it is there.
as_root=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing packages: ${missing[*]}; run as root, or install them: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  as_root=(sudo)
fi
echo "install-deps: installing ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq
# policy-rc.d keeps the packages' own services from starting: tsbench starts its own instances
# on free loopback ports with temporary data dirs.
policy=/usr/sbin/policy-rc.d
had_policy=0
[[ -e $policy ]] && had_policy=1
if [[ $had_policy -eq 0 ]]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod +x "$policy"
fi
status=0
# env, not export: sudo drops the caller's environment.
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
[[ $had_policy -eq 0 ]] && "${as_root[@]}" rm -f "$policy"
exit $status
