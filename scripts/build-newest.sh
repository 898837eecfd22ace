#!/usr/bin/env bash
# Builds, idempotently, the newest VictoriaMetrics and Prometheus this machine can build from
# their Go modules, for the reproductions' "newest" runs (docs/reproductions.md):
#
#   bin/newest/victoria-metrics   github.com/VictoriaMetrics/VictoriaMetrics v1.150.0 (~5 min, 2 cores)
#   bin/newest/prometheus         github.com/prometheus/prometheus v0.310.0 = Prometheus 3.10 (~10 min)
#
# Each is built from a writable copy of its module directory (the module cache is read-only),
# as its own repository builds it. A binary already built is kept; delete it to build again.
#
#   scripts/build-newest.sh [victoria-metrics|prometheus]...
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/bin/newest
mkdir -p "$out"

# build NAME MODULE VERSION PACKAGE LDFLAGS [ENV...]: go build PACKAGE of MODULE@VERSION to
# bin/newest/NAME, LDFLAGS setting the version the binary reports (its own Makefile sets it the
# same way; without it VictoriaMetrics reports none), with ENV.
build() {
  local name=$1 module=$2 version=$3 pkg=$4 ldflags=$5
  shift 5
  if [[ -x $out/$name ]]; then
    echo "bin/newest/$name: already built ($("$out/$name" --version 2>&1 | head -n1))"
    return
  fi
  local dir
  dir=$(GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [[ -z $dir ]]; then
    echo "build-newest: go mod download $module@$version gave no directory" >&2
    return 1
  fi
  local work
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" && rm -rf "$work"' RETURN
  cp -r "$dir" "$work/src"
  chmod -R u+w "$work/src"
  echo "bin/newest/$name: building $pkg of $module@$version"
  (cd "$work/src" && env GOWORK=off "$@" go build -ldflags "$ldflags" -o "$out/$name" "$pkg")
}

want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=(victoria-metrics prometheus)
for name in "${want[@]}"; do
  case $name in
  victoria-metrics)
    build victoria-metrics github.com/VictoriaMetrics/VictoriaMetrics v1.150.0 ./app/victoria-metrics \
      "-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-$(date -u +%Y%m%d-%H%M%S)-tags-v1.150.0-0-gmodule" \
      GOFLAGS=-mod=mod CGO_ENABLED=0
    ;;
  prometheus)
    # v0.310.0 of the module is Prometheus 3.10.0 (its VERSION file).
    build prometheus github.com/prometheus/prometheus v0.310.0 ./cmd/prometheus \
      "-X github.com/prometheus/common/version.Version=3.10.0 -X github.com/prometheus/common/version.Branch=v0.310.0 -X github.com/prometheus/common/version.BuildUser=tsbench"
    ;;
  *)
    echo "build-newest: unknown $name (victoria-metrics or prometheus)" >&2
    exit 2
    ;;
  esac
done
