#!/usr/bin/env python3
"""Golden values for pitwall-stats' A/B tests, computed with SciPy.

Writes mwu.json, welch.json and bh.json next to this file; the Rust tests read them with
include_str!, so they run offline. Re-run after changing a case:

    python3 -m venv /tmp/pw-scipy-venv && /tmp/pw-scipy-venv/bin/pip install scipy numpy
    /tmp/pw-scipy-venv/bin/python stats/golden/gen_golden.py

Inputs are rounded to 6 decimals before use so the JSON holds exactly the values SciPy saw.
"""
import json
import os

import numpy as np
import scipy
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261202)


def r6(a):
    return [round(float(v), 6) for v in a]


def mwu_cases():
    cases = []

    def add(name, x, y):
        x, y = r6(x), r6(y)
        res = {}
        for alt in ("two-sided", "greater", "less"):
            r = stats.mannwhitneyu(x, y, alternative=alt, method="auto")
            res[alt.replace("-", "_")] = float(r.pvalue)
            u1 = float(r.statistic)
        xy = np.concatenate([x, y])
        ties = len(np.unique(xy)) < len(xy)
        exact = (len(x) <= 8 or len(y) <= 8) and not ties
        cases.append(dict(name=name, x=x, y=y, u1=u1, p=res,
                          method="exact" if exact else "asymptotic"))

    # Small exact cases, both orders (statrs gets the second order wrong).
    add("3v3 separated", [1, 2, 3], [4, 5, 6])
    add("3v3 separated reversed", [4, 5, 6], [1, 2, 3])
    add("1v1", [1.0], [2.0])
    add("2v7", [3.5, 9.1], [1, 2, 4, 5, 6, 7, 8])
    for i, (n1, n2) in enumerate([(4, 4), (5, 5), (5, 8), (8, 5), (6, 20), (20, 6), (8, 8),
                                  (7, 30), (3, 12), (8, 50)]):
        shift = [0.0, 0.5, 1.0, 2.0][i % 4]
        add(f"exact {n1}v{n2} shift {shift}", rng.normal(0, 1, n1) + shift, rng.normal(0, 1, n2))
    # Ties force the normal approximation even for small samples.
    add("ties small", [1, 2, 2, 3], [2, 3, 3, 4, 5])
    add("all tied", [7, 7, 7], [7, 7, 7, 7])
    add("ties rounded", np.round(rng.normal(10, 1, 12)), np.round(rng.normal(10.5, 1, 15)))
    add("ties across 5v6", [1, 1, 2, 3, 5], [1, 2, 4, 4, 6, 7])
    # Large, normal approximation.
    for i, (n1, n2) in enumerate([(9, 9), (10, 20), (20, 10), (30, 30), (50, 80), (200, 150),
                                  (9, 40)]):
        shift = [0.0, 0.3, 0.8, 1.5][i % 4]
        add(f"asymptotic {n1}v{n2} shift {shift}",
            rng.lognormal(shift * 0.1, 0.1, n1), rng.lognormal(0, 0.1, n2))
    add("asymptotic far tail", rng.normal(10, 1, 40), rng.normal(0, 1, 40))
    add("timings with outlier", [100.1, 100.4, 99.8, 100.0, 160.2, 100.3, 99.9, 100.2, 100.6],
        [101.9, 102.3, 102.0, 101.7, 102.8, 102.1, 101.8, 102.4, 102.2])
    return cases


def welch_cases():
    cases = []

    def add(name, x, y):
        x, y = r6(x), r6(y)
        r = stats.ttest_ind(x, y, equal_var=False)
        cases.append(dict(name=name, x=x, y=y, t=float(r.statistic), df=float(r.df),
                          p=float(r.pvalue)))

    add("textbook", [1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    add("2v2", [1.0, 2.0], [3.0, 5.0])
    for i, (n1, n2) in enumerate([(5, 5), (5, 20), (20, 5), (10, 10), (3, 40), (30, 30),
                                  (100, 7), (12, 13), (6, 6), (50, 50), (8, 15), (15, 8),
                                  (25, 4), (4, 25), (40, 40), (9, 11), (60, 20), (20, 60)]):
        shift = [0.0, 0.2, 0.5, 1.0, 3.0][i % 5]
        sd2 = [1.0, 0.3, 3.0][i % 3]
        add(f"{n1}v{n2} shift {shift} sd {sd2}", rng.normal(shift, 1, n1), rng.normal(0, sd2, n2))
    add("timings", rng.lognormal(np.log(100), 0.02, 15), rng.lognormal(np.log(103), 0.03, 12))
    add("far tail", rng.normal(20, 1, 30), rng.normal(0, 1, 30))
    return cases


def bh_cases():
    cases = []

    def add(name, p):
        p = [float(v) for v in p]
        q = stats.false_discovery_control(p, method="bh")
        cases.append(dict(name=name, p=p, q=[float(v) for v in q]))

    add("four", [0.01, 0.04, 0.03, 0.2])
    add("single", [0.3])
    add("all ones", [1.0, 1.0, 1.0])
    add("zeros", [0.0, 0.5, 0.0])
    add("ties", [0.02, 0.02, 0.02, 0.5, 0.001])
    add("monotone needed", [0.001, 0.002, 0.05, 0.049, 0.9, 0.8])
    for i, m in enumerate([5, 10, 20, 40, 40, 100, 7, 13, 60, 200, 3, 25, 33, 80, 150, 9]):
        null = rng.uniform(0, 1, m)
        sig = rng.uniform(0, 0.01, m)
        mix = np.where(rng.uniform(0, 1, m) < [0.0, 0.2, 0.5, 0.9][i % 4], sig, null)
        add(f"random m={m}", mix)
    return cases


def main():
    meta = dict(scipy=scipy.__version__, numpy=np.__version__)
    for name, cases in [("mwu", mwu_cases()), ("welch", welch_cases()), ("bh", bh_cases())]:
        with open(os.path.join(HERE, f"{name}.json"), "w") as f:
            json.dump(dict(generator="stats/golden/gen_golden.py", **meta, cases=cases), f,
                      indent=1)
            f.write("\n")
        print(f"{name}: {len(cases)} cases")


if __name__ == "__main__":
    main()
