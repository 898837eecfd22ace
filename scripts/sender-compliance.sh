#!/usr/bin/env bash
# make sender-compliance: prometheus/compliance's remote-write sender suite
# (remotewrite/sender, at the pinned commit below) with tsbench as the sender under test,
# once in remote write 2.0 and once in 1.0, then a line per case: applies / passes
# (scripts/sendercompliance; the cases that do not apply are listed, each with its reason,
# in scripts/sendercompliance/not-applicable.txt). Exits 1 when an applicable case fails.
#
# The suite is taken from COMPLIANCE_DIR (a checkout of github.com/prometheus/compliance),
# else cloned with git into $OUT/sender-compliance/compliance: the Go module proxy does not
# serve it. Its own dependencies come through the module proxy as usual. tsbench is plugged
# in by scripts/sendercompliance/_adapter, added to the suite's package with
# `go test -overlay`: the checkout is never changed. 6–7 minutes per protocol on 2 cores.
set -euo pipefail

COMMIT=67b8327a2e93dc28f64d4b21bbce00b362f565d5 # 2026-08-06; remotewrite/sender as of ccf48c7 (2026-05-26)
REPO=https://github.com/prometheus/compliance
GO=${GO:-go}
OUT=${OUT:-out}
PARALLEL=${PARALLEL:-8} # cases side by side: each is a tsbench of one target, mostly waiting
PROTOCOLS=${PROTOCOLS:-rw2 rw1}

root=$(pwd)
case $OUT in
/*) work=$OUT/sender-compliance ;;
*) work=$root/$OUT/sender-compliance ;;
esac
mkdir -p "$work"

dir=${COMPLIANCE_DIR:-}
if [ -z "$dir" ]; then
	dir=$work/compliance
	if [ ! -d "$dir/.git" ]; then
		if ! git clone --quiet "$REPO" "$dir"; then
			echo "sender-compliance: could not clone $REPO (above: git's reason); set COMPLIANCE_DIR to a checkout of it at $COMMIT" >&2
			exit 1
		fi
	fi
	if ! git -C "$dir" checkout --quiet "$COMMIT" 2>/dev/null; then
		git -C "$dir" fetch --quiet origin && git -C "$dir" checkout --quiet "$COMMIT"
	fi
fi
dir=$(cd "$dir" && pwd)
suite=$dir/remotewrite/sender
if [ ! -f "$suite/main_test.go" ]; then
	echo "sender-compliance: $suite/main_test.go not found: COMPLIANCE_DIR must be a checkout of $REPO" >&2
	exit 1
fi
if have=$(git -C "$dir" rev-parse HEAD 2>/dev/null) && [ "$have" != "$COMMIT" ]; then
	echo "sender-compliance: warning: $dir is at $have, not the pinned $COMMIT: the table may differ from docs/protocols.md" >&2
fi

$GO build -o "$work/tsbench" ./cmd/tsbench
printf '{"Replace":{"%s/zz_tsbench_target_test.go":"%s/scripts/sendercompliance/_adapter/tsbench_target_test.go"}}\n' \
	"$suite" "$root" >"$work/overlay.json"

# Build first, so that a suite that cannot be built here says why and nothing else.
if ! (cd "$suite" && $GO test -overlay "$work/overlay.json" -count=1 -run '^$' . >"$work/build.log" 2>&1); then
	cat "$work/build.log" >&2
	echo "sender-compliance: the suite does not build here (above: go's reason, e.g. a dependency the module proxy does not serve)" >&2
	exit 1
fi

args=()
for rw in $PROTOCOLS; do
	echo "sender-compliance: the suite with tsbench-$rw as the sender ($work/$rw.json)" >&2
	# A failed case is judged below; go test's own exit status says nothing more.
	(cd "$suite" && TSBENCH_BIN="$work/tsbench" PROMETHEUS_RW2_COMPLIANCE_SENDERS="tsbench-$rw" \
		$GO test -overlay "$work/overlay.json" -json -count=1 -parallel "$PARALLEL" -timeout 30m . >"$work/$rw.json") || true
	args+=("$rw=$work/$rw.json")
done
$GO run ./scripts/sendercompliance -na scripts/sendercompliance/not-applicable.txt "${args[@]}"
