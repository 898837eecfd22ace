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
# results.json at each checkpoint: seconds since the start, bytes (scripts/soak.sh).
sizes = [tuple(map(int, l.split("\t"))) for l in open(os.path.join(out, "sizes.tsv"))] if os.path.exists(os.path.join(out, "sizes.tsv")) else []
end = size("results.json")
rows.append(("results.json", f"{end / 1e6:.2f} MB at the end"))


def timeline_points(n):
    """How many points a timeline holds after n observations (results.Timeline: 540 at most,
    neighbours merged two into one when full)."""
    counts, width = [], 1
    for _ in range(n):
        if counts and counts[-1] + 1 <= width:
            counts[-1] += 1
            continue
        counts.append(1)
        if len(counts) > 540:
            counts = [sum(counts[i:i + 2]) for i in range(0, len(counts), 2)]
            width *= 2
    return len(counts)


if len(sizes) >= 3:
    half = [c for c in sizes if c[0] >= sizes[-1][0] / 2] or sizes[-2:]
    (t0, s0), (t1, s1) = half[0], half[-1]
    if t1 > t0:
        rows.append(("results.json growth", f"{(s1 - s0) / (t1 - t0) * 3600 / 1e6:+.3f} MB/h over the checkpoints from {t0 // 60} to {t1 // 60} min"))
    # Each checkpoint's size against its timelines' points (one per 10 s observation, merged
    # past 540), fitted by least squares, at the points a timeline holds after 24 h.
    xs = [timeline_points(t // 10) for t, _ in sizes]
    ys = [b for _, b in sizes]
    n, sx, sy = len(xs), sum(xs), sum(ys)
    sxx, sxy = sum(x * x for x in xs), sum(x * y for x, y in zip(xs, ys))
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx) if n * sxx != sx * sx else 0.0
    at24 = sy / n + slope * (timeline_points(24 * 360) - sx / n)
    rows.append(("results.json at 24 h", f"≈ {at24 / 1e6:.2f} MB ({slope:.0f} bytes per timeline point over {n} checkpoints, "
                 f"at the {timeline_points(24 * 360)} points a timeline holds after 24 h)"))
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
    v = s.get("verify") or {}
    total = (v.get("continuous") or {}).get("total")
    if total:  # every check added up (the checks list itself is bounded)
        when = f" (first missed at {v['lostAfterAckAt']})" if v.get("lostAfterAckAt") else ""
        rows.append((f"{s['name']} read-back checks", f"{total['checks']} checks, {total['checked']} samples checked, "
                     f"{total['missing']} missing, {total['changed']} changed, {total['readErrors']} read errors, "
                     f"{total['seconds']:.1f} s and {total['reads']} reads in all; lost after ack {v.get('lostAfterAck', 0)}{when}"))
    if v.get("checkedSamples"):
        rows.append((f"{s['name']} read-back at the end", f"{v['checkedSamples']} samples checked, {v.get('missingSamples', 0)} missing, {v.get('changedValues', 0)} changed"))
for gap in r.get("gaps") or []:
    rows.append(("gap", f"{gap['from']} → {gap['to']} ({gap['reason']})"))
print("\n| figure | value |\n|---|---|")
for k, v in rows:
    print(f"| {k} | {v} |")
