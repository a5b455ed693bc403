#!/usr/bin/env python3
"""Reference A/B method on the data set written by `stats/examples/ab_eval.rs`.

Reference: Mann-Whitney U two-sided (scipy.stats.mannwhitneyu, method="auto") per benchmark,
Benjamini-Hochberg at 0.05 across the 40 benchmarks of each trial, and a 2% floor on the ratio
of medians; a call is a regression when the change is worse for the metric's direction.
Prints the reference next to pitwall's verdicts stored in the same file, per seed and pooled.

    /tmp/pw-scipy-venv/bin/python stats/eval/ab_reference.py target/ab_eval.json
"""
import json
import sys
from collections import defaultdict

import numpy as np
from scipy import stats


def score(rows):
    nulls = [r for r in rows if r["shift"] == 0]
    shifted = [r for r in rows if r["shift"] != 0]
    fp = sum(r["call"] in ("regression", "improvement") for r in nulls)
    det = sum(r["call"] == ("regression" if r["shift"] > 0 else "improvement") for r in shifted)
    return fp / len(nulls), fp, len(nulls), det / len(shifted), det, len(shifted)


def reference(trial, alpha=0.05, floor=0.02):
    ps, ratios = [], []
    for b in trial["benchmarks"]:
        ps.append(stats.mannwhitneyu(b["cand"], b["base"], alternative="two-sided",
                                     method="auto").pvalue)
        ratios.append(np.median(b["cand"]) / np.median(b["base"]))
    qs = stats.false_discovery_control(ps, method="bh")
    calls = []
    for b, q, r in zip(trial["benchmarks"], qs, ratios):
        if q <= alpha and abs(r - 1) >= floor:
            worse = (r > 1) != b["higher_is_better"]
            calls.append("regression" if worse else "improvement")
        else:
            calls.append("no call")
    return calls


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "target/ab_eval.json"
    data = json.load(open(path))
    by_seed = defaultdict(lambda: {"ref": [], "pw": []})
    for trial in data["trials"]:
        calls = reference(trial)
        for b, c in zip(trial["benchmarks"], calls):
            by_seed[trial["seed"]]["ref"].append(dict(shift=b["shift"], call=c))
            by_seed[trial["seed"]]["pw"].append(dict(shift=b["shift"], call=b["pitwall"]))
    print(f"{'':14} {'method':10} {'FPR':>8} {'':>13} {'detection':>10}")
    pooled = {"ref": [], "pw": []}
    for seed, d in sorted(by_seed.items()) + [("pooled", None)]:
        rows = d if d is not None else pooled
        for key, label in (("pw", "pitwall"), ("ref", "reference")):
            fpr, fp, n0, det, k, n1 = score(rows[key])
            print(f"seed {seed!s:<9} {label:10} {fpr:8.4f} {f'({fp}/{n0})':>13} {det:10.4f} ({k}/{n1})")
            if d is not None:
                pooled[key].extend(rows[key])


if __name__ == "__main__":
    main()
