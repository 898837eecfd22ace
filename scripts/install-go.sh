#!/usr/bin/env bash
# Makes sure, idempotently, that the `go` on PATH can build tsbench, which needs the Go that
# go.mod names (its `go` line). Either:
#
#   - the go on PATH is that version or newer: nothing is done;
#   - it is Go 1.21 or newer: nothing is done either, because since 1.21 a go fetches the
#     toolchain go.mod names through the module proxy (GOTOOLCHAIN=auto, which the Makefile
#     exports: some distributions set GOTOOLCHAIN=local in their go.env);
#   - there is none: Debian's golang-go is installed with apt-get when its candidate is 1.21 or
#     newer (Debian 13, Ubuntu 24.04), and then fetches the toolchain the same way;
#   - else one line on stderr says what to install, and the exit status is 1.
#
#   scripts/install-go.sh
set -euo pipefail
cd "$(dirname "$0")/.."

need=$(awk '$1 == "go" { print $2; exit }' go.mod)
# The first Go with toolchain switching (GOTOOLCHAIN).
switching=1.21

# ge A B: is version A at least version B?
ge() { [[ $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1) == "$2" ]]; }

if command -v go >/dev/null 2>&1; then
  # Asked from / with GOTOOLCHAIN=local: the go on PATH itself, not the toolchain go.mod would
  # make it switch to.
  have=$(cd / && GOTOOLCHAIN=local go env GOVERSION 2>/dev/null) || have=
  have=${have#go}
  if [[ -n $have ]] && { ge "$have" "$need" || ge "$have" "$switching"; }; then
    exit 0
  fi
  echo "install-go: $(command -v go) is go ${have:-of unknown version}, older than $switching, so it cannot fetch go $need (go.mod): install Go $need or newer from https://go.dev/dl/ and put it first on PATH" >&2
  exit 1
fi

# Root installs directly; another user through sudo when it is there (as install-deps.sh).
as_root=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-go: no go on PATH: install Go $need or newer from https://go.dev/dl/ (or, as root, Debian's golang-go if it is 1.21 or newer)" >&2
    exit 1
  fi
  as_root=(sudo)
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-go: no go on PATH: install Go $need or newer from https://go.dev/dl/" >&2
  exit 1
fi
"${as_root[@]}" apt-get update -qq
# "2:1.24~2" → 1.24; "(none)" or nothing when the package is unknown.
candidate=$(apt-cache policy golang-go 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
version=${candidate#*:}
version=${version%%[~+-]*}
if [[ ! $version =~ ^[0-9]+\.[0-9]+ ]] || ! ge "$version" "$switching"; then
  echo "install-go: no go on PATH, and this system's golang-go (${candidate:-none}) is older than $switching, which cannot fetch go $need (go.mod): install Go $need or newer from https://go.dev/dl/ (tar -C /usr/local -xzf go$need.linux-amd64.tar.gz) and put /usr/local/go/bin first on PATH" >&2
  exit 1
fi
echo "install-go: installing golang-go $candidate; it fetches go $need through the module proxy on first use" >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go >/dev/null
