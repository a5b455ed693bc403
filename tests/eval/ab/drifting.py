#!/usr/bin/env python3
"""Pairs under a drift shared by both sides (a warming GPU, a throttling host), measured by the
real pitwall binary (issue 25).

What it measures: whether `pitwall run --base B --head H` + `pitwall compare --pair latest`
calls a change that is not there when every execution is slower than the one before, whichever
side it measures, and whether it still finds a planted one.

Truth: each trial is a fresh temporary git repository whose benchmark suite is a tiny Python
program (bench.py) printing Google Benchmark JSON (10 repetitions per process) for 8
benchmarks. The k-th execution of the pair (either side, counting from 0; a counter file
outside the repository, reset before each trial) takes (1 + DRIFT·k) × its base time, DRIFT =
0.025 by default. Noise: 0.3% within a process (lognormal per sample) and 0.4% per process
(one lognormal offset per benchmark per process). Two kinds of trials:
  - A/A: base and head differ only in a comment; every call is false.
  - planted: the head makes benchmarks 0-3 take 5% longer (`--slowdown`); benchmarks 4-7 are
    unchanged.

Targets (time measure): A/A: 0 false calls and >= 80% of time measures `unchanged`. Planted:
the 4 slowed found (regression), nothing else called.

Run (from the repository root, after `cargo build --release`):
    python3 tests/eval/ab/drifting.py --pitwall target/release/pitwall \
        --run-args "--until-decided --max-rounds 15"
Defaults: 5 A/A trials and 5 planted trials, about a minute on a 2-core machine (each process
is ~50 ms of Python start-up; the drift is applied by the script, so machine load does not
matter).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402

N_BENCH = 8
REPS = 10

BENCH_PY = r'''"""Fake Google Benchmark binary under a shared drift: the k-th execution of the pair (a
counter file outside the repository) takes (1 + drift*k) x its time."""
import fcntl, json, math, os, random, sys

COUNTER = __COUNTER__
rng = random.Random(int.from_bytes(os.urandom(16), "little"))  # fresh per process
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data.json")) as f:
    data = json.load(f)
with open(COUNTER, "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    text = f.read().strip()
    k = int(text) if text else 0
    f.seek(0)
    f.truncate()
    f.write(str(k + 1))
drift = 1.0 + data["drift"] * k
entries = []
for fi, b in enumerate(data["benchmarks"]):
    offset = math.exp(rng.gauss(0.0, data["between_sd"]))
    for r in range(data["repetitions"]):
        t = b["level_ns"] * b["shift"] * drift * offset * math.exp(rng.gauss(0.0, data["within_sd"]))
        entries.append({
            "name": b["name"], "family_index": fi, "per_family_instance_index": 0,
            "run_name": b["name"], "run_type": "iteration", "repetitions": data["repetitions"],
            "repetition_index": r, "threads": 1, "iterations": 1000,
            "real_time": t, "cpu_time": t, "time_unit": "ns",
        })
json.dump({"context": {"date": "synthetic", "host_name": "drifting", "executable": "bench.py",
                       "num_cpus": 1, "library_build_type": "release"},
           "benchmarks": entries}, sys.stdout)
'''


def data_json(shifts: list[float], drift: float) -> str:
    benches = [
        {"name": f"BM_drift_{i}", "level_ns": 1000.0 * (i + 1), "shift": s}
        for i, s in enumerate(shifts)
    ]
    return json.dumps({
        "repetitions": REPS, "drift": drift, "within_sd": 0.003, "between_sd": 0.004,
        "benchmarks": benches,
    }, indent=1) + "\n"


def build_repo(repo: str, counter: str, head_shifts: list[float], drift: float) -> tuple[str, str]:
    c.init_repo(repo)
    c.write(os.path.join(repo, "bench.py"), BENCH_PY.replace("__COUNTER__", repr(counter)))
    c.write(os.path.join(repo, "pitwall.toml"),
            c.pitwall_toml("drifting", f"{sys.executable} bench.py", timeout_s=120))
    c.write(os.path.join(repo, "data.json"), data_json([1.0] * N_BENCH, drift))
    base = c.commit_all(repo, "base")
    if all(s == 1.0 for s in head_shifts):
        c.write(os.path.join(repo, "bench.py"),
                BENCH_PY.replace("__COUNTER__", repr(counter)) + "# a comment\n")
    else:
        c.write(os.path.join(repo, "data.json"), data_json(head_shifts, drift))
    head = c.commit_all(repo, "head")
    return base, head


def main() -> None:
    p = c.common_args(__doc__)
    p.add_argument("--trials", type=int, default=5, help="trials of each kind, default 5")
    p.add_argument("--drift", type=float, default=0.025, help="drift per execution, default 0.025")
    p.add_argument("--slowdown", type=float, default=1.05, help="planted ratio, default 1.05")
    args = p.parse_args()
    pitwall = c.resolve_pitwall(args.pitwall)
    run_args = shlex.split(args.run_args)
    doc = {"script": "drifting.py", "pitwall": pitwall, "run_args": run_args,
           "drift": args.drift, "slowdown": args.slowdown, "trials": []}
    t0 = time.monotonic()
    errors = 0
    tot = {"aa": {"n": 0, "false": 0, "unchanged": 0},
           "planted": {"slowed": 0, "found": 0, "others": 0, "false": 0}}
    rounds: dict[str, list[int]] = {"aa": [], "planted": []}
    for kind in ("aa", "planted"):
        shifts = [1.0] * N_BENCH if kind == "aa" else [args.slowdown] * 4 + [1.0] * 4
        for ti in range(args.trials):
            with c.temp_dir(f"pw-drift-{kind}-{ti}-", args.keep) as repo, \
                    tempfile.TemporaryDirectory(prefix="pw-drift-counter-") as cdir:
                counter = os.path.join(cdir, "executions")
                base, head = build_repo(repo, counter, shifts, args.drift)
                try:
                    t = c.ab_trial(pitwall, repo, base, head, run_args, args.timeout)
                except c.HarnessError as e:
                    errors += 1
                    doc["trials"].append({"kind": kind, "trial": ti, "error": str(e)})
                    c.log(args, f"{kind} {ti}: ERROR {e}")
                    continue
                with open(counter) as f:
                    t["executions"] = int(f.read().strip() or 0)
            t.update(kind=kind, trial=ti, truth=shifts)
            doc["trials"].append(t)
            rounds[kind].append(t["rounds"])
            verdicts = {}
            for b in t["benchmarks"]:
                name, measure = c.bench_name_measure(b)
                if measure == "time":
                    verdicts[name] = b.get("verdict")
            for i, s in enumerate(shifts):
                v = verdicts.get(f"BM_drift_{i}")
                if kind == "aa":
                    tot["aa"]["n"] += 1
                    tot["aa"]["false"] += v in c.CALLS
                    tot["aa"]["unchanged"] += v == "unchanged"
                elif s != 1.0:
                    tot["planted"]["slowed"] += 1
                    tot["planted"]["found"] += v == "regression"
                else:
                    tot["planted"]["others"] += 1
                    tot["planted"]["false"] += v in c.CALLS
            c.log(args, f"{kind} {ti}: rounds {t['rounds']}, executions {t['executions']}, "
                  + ", ".join(f"{k[-1]}={v}" for k, v in sorted(verdicts.items())))
    doc["wall_s"] = time.monotonic() - t0
    aa, pl = tot["aa"], tot["planted"]
    print()
    print(f"drifting.py: {args.trials} A/A + {args.trials} planted trials, drift {args.drift}/execution, "
          f"planted x{args.slowdown} on 4 of {N_BENCH}, run args {shlex.join(run_args) or '(none)'}, pitwall {pitwall}")
    print(c.table([
        ["A/A", f"{aa['false']}/{aa['n']}", f"{aa['unchanged']}/{aa['n']} ({c.pct(aa['unchanged'], aa['n'])})", "-",
         f"{sum(rounds['aa']) / max(1, len(rounds['aa'])):.1f}"],
        ["planted", f"{pl['false']}/{pl['others']}", "-", f"{pl['found']}/{pl['slowed']}",
         f"{sum(rounds['planted']) / max(1, len(rounds['planted'])):.1f}"],
    ], ["trials", "false calls", "unchanged", "planted found", "mean rounds"]))
    print(f"wall {doc['wall_s']:.0f} s; errors: {errors}")
    checks = [
        ("A/A: 0 false calls", aa["false"] == 0),
        ("A/A: >= 80% unchanged", aa["n"] and aa["unchanged"] / aa["n"] >= 0.8),
        ("planted: all slowed found", pl["found"] == pl["slowed"]),
        ("planted: nothing else called", pl["false"] == 0),
        ("no trial failed", errors == 0),
    ]
    for name, ok in checks:
        print(f"  [{'PASS' if ok else 'FAIL'}] {name}")
    doc["summary"] = {"totals": tot, "rounds": rounds, "targets_met": all(ok for _, ok in checks)}
    c.write_out(args.out, doc)


if __name__ == "__main__":
    main()
