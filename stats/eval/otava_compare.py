#!/usr/bin/env python3
"""Side-by-side comparison of pitwall's change-point detector with Apache Otava 0.8.0.

Why: pitwall's detector claims to beat Otava (the Hunter algorithm, Fleming et al., ICPE 2023)
on accuracy and speed; this script measures both on the same series in one process.

- Otava: `otava.analysis.compute_change_points(series)` with its defaults (window_len=50,
  max_pvalue=0.001, min_magnitude=0), timed here around the calls only.
- pitwall: the release `tcpd_eval` example with `--json` (DetectConfig::default()), which
  reports its own detection time; the wall time of the whole subprocess is shown too.
- Scores: TCPD's F1 (margin 5) and covering (van den Burg & Williams, arXiv:2003.06222, §4),
  re-implemented below exactly as in TCPD's metrics.py; synthetic series are scored against
  their single truth set, and false alarms are counted on the no-change histories.

Usage (see stats/eval/README.md):
    python3 stats/eval/otava_compare.py [--tcpd tests/data/tcpd] [--bin target/release/examples/tcpd_eval]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from otava.analysis import compute_change_points

SKIP = ("quality_control", "uk_coal_employ", "run_log")


def true_positives(truth, pred, margin=5):
    free = set(pred)
    tp = 0
    for tau in sorted(truth):
        close = sorted((abs(tau - x), x) for x in free if abs(tau - x) <= margin)
        if close:
            free.remove(close[0][1])
            tp += 1
    return tp


def f1(annotations, pred, margin=5):
    sets = [set(t) | {0} for t in annotations]
    x = set(pred) | {0}
    union = set().union(*sets) if sets else {0}
    p = true_positives(union, x, margin) / len(x)
    r = sum(true_positives(t, x, margin) / len(t) for t in sets) / len(sets)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def partition(points, n):
    b = sorted({0, *[p for p in points if 0 < p < n]}) + [n]
    return list(zip(b[:-1], b[1:]))


def cover(annotations, pred, n):
    pp = partition(pred, n)

    def ov(a, b):
        inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
        return inter / ((a[1] - a[0]) + (b[1] - b[0]) - inter)

    cs = [sum((a[1] - a[0]) * max(ov(a, b) for b in pp) for a in partition(t, n)) / n
          for t in annotations]
    return sum(cs) / len(cs)


def load_tcpd(root):
    ann = json.load(open(os.path.join(root, "annotations.json")))
    out = []
    for name in sorted(ann):
        path = os.path.join(root, "datasets", name, name + ".json")
        if name.startswith(SKIP) or not os.path.exists(path):
            continue
        raw = json.load(open(path))["series"][0]["raw"]
        last = next(v for v in raw if v is not None)
        series = []
        for v in raw:  # previous-value fill, as tcpd_eval does (no scored series has gaps)
            last = v if v is not None else last
            series.append(float(last))
        out.append((name, series, list(ann[name].values())))
    return out


def otava_points(series):
    cps, _weak = compute_change_points(series)
    return sorted(int(cp.index) for cp in cps)


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcpd", default="tests/data/tcpd")
    ap.add_argument("--bin", default="target/release/examples/tcpd_eval")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run([args.bin, args.tcpd, "--json", "--write-synth", tmp],
                              check=True, capture_output=True, text=True)
        pw_wall = time.perf_counter() - t0
        pw = json.loads(proc.stdout)
        synth = json.load(open(os.path.join(tmp, "synth.json")))

    tcpd = load_tcpd(args.tcpd)
    pw_tcpd = {r["name"]: r for r in pw["tcpd"]}
    pw_synth = {r["name"]: r for r in pw["synth"]}

    rows = []
    otava_seconds = 0.0
    for name, series, ann in tcpd:
        t0 = time.perf_counter()
        op = otava_points(series)
        otava_seconds += time.perf_counter() - t0
        pp = pw_tcpd[name]["predicted"]
        rows.append((name, len(series), f1(ann, op), cover(ann, op, len(series)),
                     f1(ann, pp), cover(ann, pp, len(series)), op, pp))

    s_rows, fa = [], {"otava": 0, "pitwall": 0, "points": 0}
    for s in synth:
        t0 = time.perf_counter()
        op = otava_points(s["series"])
        otava_seconds += time.perf_counter() - t0
        pp = pw_synth[s["name"]]["predicted"]
        n = len(s["series"])
        if s["kind"] == "nochange":
            fa["otava"] += len(op)
            fa["pitwall"] += len(pp)
            fa["points"] += n
        else:
            t = [s["truth"]]
            s_rows.append((f1(t, op), cover(t, op, n), f1(t, pp), cover(t, pp, n)))

    print(f"{'series':<20} {'n':>5} | {'otava F1':>8} {'cover':>6} | {'pitwall F1':>10} {'cover':>6}")
    for name, n, of, oc, pf, pc, op, pp in rows:
        print(f"{name:<20} {n:>5} | {of:>8.3f} {oc:>6.3f} | {pf:>10.3f} {pc:>6.3f}   otava {op} pitwall {pp}")
    # Cross-check: the Python metrics agree with the Rust ones on pitwall's predictions.
    worst = max(abs(r[4] - pw_tcpd[r[0]]["f1"]) + abs(r[5] - pw_tcpd[r[0]]["cover"]) for r in rows)
    print(f"(metric cross-check: max |python - rust| = {worst:.2e})")
    print()
    k = 1000.0 / max(fa["points"], 1)
    table = [
        ("TCPD mean F1", mean([r[2] for r in rows]), mean([r[4] for r in rows])),
        ("TCPD mean cover", mean([r[3] for r in rows]), mean([r[5] for r in rows])),
        ("synthetic mean F1", mean([r[0] for r in s_rows]), mean([r[2] for r in s_rows])),
        ("synthetic mean cover", mean([r[1] for r in s_rows]), mean([r[3] for r in s_rows])),
        ("false alarms / 1000 pts", fa["otava"] * k, fa["pitwall"] * k),
        ("detection time (s)", otava_seconds, pw["detect_seconds"]),
    ]
    print(f"{'':<26} {'otava 0.8.0':>12} {'pitwall':>12}")
    for label, o, p in table:
        print(f"{label:<26} {o:>12.4f} {p:>12.4f}")
    print(f"{'pitwall subprocess wall (s)':<26} {'':>12} {pw_wall:>12.4f}")
    print(f"speed-up (detection): {otava_seconds / pw['detect_seconds']:.0f}x; "
          f"(Otava detection vs pitwall whole process incl. start-up and JSON): {otava_seconds / pw_wall:.0f}x")
    print(f"series: {len(rows)} TCPD, {len(s_rows)} synthetic with shifts, "
          f"{fa['points']} synthetic no-change points")


if __name__ == "__main__":
    sys.exit(main())
