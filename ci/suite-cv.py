#!/usr/bin/env python3
"""Run-to-run variation of each benchmark's median across stored runs.

Reads `pitwall export` JSON on stdin and prints, per benchmark measure, the number of runs,
the mean of the per-run medians and their coefficient of variation (stdev / mean), then the
median CV per suite. Standard library only.

    for i in 1 2 3 4 5; do target/release/pitwall run --quiet --store /tmp/cv.db >/dev/null; done
    target/release/pitwall export --store /tmp/cv.db | python3 ci/suite-cv.py
"""
import json
import statistics
import sys
from collections import defaultdict


def key(r):
    params = ",".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items()))
    return (r["suite"], f'{r["name"]}[{params}]' if params else r["name"], r["measure"], r["unit"])


def main():
    doc = json.load(sys.stdin)
    medians = defaultdict(list)
    for run in doc["runs"]:
        for r in run["results"]:
            if r["status"] == "ok" and r["samples"]:
                medians[key(r)].append(statistics.median(r["samples"]))
    per_suite = defaultdict(list)
    print(f'{"suite":<11} {"benchmark":<42} {"measure":<11} {"runs":>4} {"mean median":>14} {"cv":>7}')
    for (suite, bench, measure, unit), ms in sorted(medians.items()):
        if len(ms) < 2:
            continue
        mean = statistics.fmean(ms)
        cv = statistics.stdev(ms) / mean if mean else float("nan")
        per_suite[suite].append(cv)
        print(f"{suite:<11} {bench:<42} {measure:<11} {len(ms):>4} {mean:>14.4g} {cv*100:>6.2f}%")
    print()
    for suite, cvs in sorted(per_suite.items()):
        print(f"{suite}: median cv {statistics.median(cvs)*100:.2f}% (max {max(cvs)*100:.2f}%) over {len(cvs)} measures")


if __name__ == "__main__":
    main()
