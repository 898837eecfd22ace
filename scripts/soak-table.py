"""Prints make soak's table (scripts/soak.sh) from DIR/results.json, DIR/sizes.tsv and the
files in DIR. It only reads and prints."""
import json
import os
import sys

out = sys.argv[1]
r = json.load(open(os.path.join(out, "results.json")))
g = r.get("generator") or {}
mib = 1 << 20


def per_hour(v):
    return "unknown (run too short)" if v is None else f"{v / mib:+.2f} MiB/h"


def size(name):
    p = os.path.join(out, name)
    return os.path.getsize(p) if os.path.exists(p) else 0


rows = [
    ("tsbench live heap slope (heap after GC)", f"{per_hour(g.get('heapLiveBytesPerHour'))} after the first {g.get('slopeAfterSeconds', 0) / 60:.0f} min"),
    ("tsbench RSS slope", per_hour(g.get("rssBytesPerHour"))),
    ("tsbench RSS max", "unknown" if g.get("rssBytesMax") is None else f"{g['rssBytesMax'] / mib:.1f} MiB"),
]
# results.json's growth: the sizes at the checkpoints of the second half of the run.
sizes = [tuple(map(int, l.split("\t"))) for l in open(os.path.join(out, "sizes.tsv"))] if os.path.exists(os.path.join(out, "sizes.tsv")) else []
end = size("results.json")
rows.append(("results.json", f"{end / 1e6:.2f} MB at the end"))
if len(sizes) >= 3:
    half = [s for s in sizes if s[0] >= sizes[-1][0] / 2] or sizes[-2:]
    (t0, s0), (t1, s1) = half[0], half[-1]
    growth = (s1 - s0) / (t1 - t0) * 3600 if t1 > t0 else 0.0
    at24 = s1 + growth * max(0, 24 * 3600 - t1) / 3600
    rows.append(("results.json growth", f"{growth / 1e6:+.3f} MB/h over the checkpoints from {t0 // 60} to {t1 // 60} min; "
                 f"at 24 h ≤ {at24 / 1e6:.2f} MB (linear: an upper bound, as each timeline stops growing at 540 points)"))
rows.append(("report.html", f"{size('report.html') / 1e6:.2f} MB"))
rows.append(("tsbench.log", f"{size('tsbench.log') / 1e3:.1f} kB"))
interval = r["workload"]["scrapeIntervalSeconds"]
for s in r["storages"]:
    w = s.get("write")
    if not w:
        continue
    dropped = sum(w["droppedSamples"].values())
    ok = w["generatedSamples"] == w["ackedSamples"] + dropped + w["pendingSamples"]
    rows.append((f"{s['name']} schedule drift max", f"{w['maxScheduleDriftSeconds']:.2f} s (scrape interval {interval:g} s)"))
    rows.append((f"{s['name']} account", f"generated {w['generatedSamples']} = acked {w['ackedSamples']} + dropped {dropped} + pending {w['pendingSamples']} {'✓' if ok else '✗ DOES NOT BALANCE'}"))
    checks = (s.get("verify") or {}).get("checks")
    if checks is not None:
        lost = (s.get("verify") or {}).get("lostAfterAck")
        missing = sum(c.get("missing", 0) for c in checks)
        changed = sum(c.get("changed", 0) for c in checks)
        checked = sum(c.get("checked", 0) for c in checks)
        rows.append((f"{s['name']} read-back checks", f"{len(checks)} checks, {checked} samples checked, {missing} missing, {changed} changed, lost after ack {json.dumps(lost)}"))
for gap in r.get("gaps") or []:
    rows.append(("gap", f"{gap['from']} → {gap['to']} ({gap['reason']})"))
print("\n| figure | value |\n|---|---|")
for k, v in rows:
    print(f"| {k} | {v} |")
