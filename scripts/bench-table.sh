#!/usr/bin/env bash
# Prints `go test -bench` output (stdin) as it comes, then one table of every figure the
# benchmarks reported: benchmark, figure, value; when BenchmarkProtocols ran, its figures per
# protocol side by side; when BenchmarkNativeHistograms ran, classic against native per
# protocol; when BenchmarkProcess ran, the whole process's CPU per sample beside
# the bare loop's as one line. The raw lines are also kept in the file named by $1, for
# benchstat. It only reads and prints.
set -euo pipefail
raw=${1:?usage: bench-table.sh RAW_OUTPUT_FILE < go-test-output}
tee "$raw" | awk '
  { print }
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
    # after the name and the iteration count, figures come as value-unit pairs
    for (i = 3; i + 1 <= NF; i += 2) {
      rows[++n] = "| " name " | " $(i + 1) " | " $i " |"
      fig[name, $(i + 1)] = $i
    }
  }
  END {
    if (n == 0) exit
    print "\n| benchmark | figure | value |\n|---|---|---|"
    for (r = 1; r <= n; r++) print rows[r]
    # BenchmarkProtocols: the protocols side by side, in the order they ran
    np = 0
    for (r = 1; r <= n; r++) {
      split(rows[r], c, " [|] ")
      if (c[1] ~ /^[|] Protocols\/protocol=/ && c[2] == "cpu-ms/Msamples") {
        p = c[1]; sub(/^[|] Protocols\/protocol=/, "", p); proto[++np] = p
      }
    }
    if (np > 0) {
      print "\n| protocol | CPU ms per million samples | bytes on the wire per sample |\n|---|---|---|"
      for (i = 1; i <= np; i++)
        printf "| %s | %s | %s |\n", proto[i], fig["Protocols/protocol=" proto[i], "cpu-ms/Msamples"], fig["Protocols/protocol=" proto[i], "wire-bytes/sample"]
    }
    # BenchmarkNativeHistograms: classic against native per protocol, per histogram
    if (("NativeHistograms/proto=rw1/classic", "wire-bytes/histogram") in fig) {
      print "\n| protocol | classic bytes per histogram | native | ratio | classic CPU ns per histogram | native | ratio |\n|---|---|---|---|---|---|---|"
      split("rw1 rw2 otlp", ps, " ")
      for (i = 1; i <= 3; i++) {
        cl = "NativeHistograms/proto=" ps[i] "/classic"; nn = "NativeHistograms/proto=" ps[i] "/native"
        if (!((nn, "wire-bytes/histogram") in fig)) continue
        printf "| %s | %s | %s | %.2f | %s | %s | %.2f |\n", ps[i], fig[cl, "wire-bytes/histogram"], fig[nn, "wire-bytes/histogram"],
          fig[cl, "wire-bytes/histogram"] / fig[nn, "wire-bytes/histogram"], fig[cl, "cpu-ns/histogram"], fig[nn, "cpu-ns/histogram"],
          fig[cl, "cpu-ns/histogram"] / fig[nn, "cpu-ns/histogram"]
      }
    }
    if (("Process/cpu", "cpu-ratio") in fig)
      printf "\nwhole process: %.2f M samples per CPU-second; bare prompb + snappy loop: %.2f M; CPU per sample %.2f× the loop'"'"'s (aim: <= 1.0)\n",
        fig["Process/cpu", "samples/cpu-s"] / 1e6, fig["Process/cpu", "bare-samples/cpu-s"] / 1e6, fig["Process/cpu", "cpu-ratio"]
  }'
