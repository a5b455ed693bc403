#!/usr/bin/env python3
"""Synthetic pull requests with known truth, measured by the real pitwall binary.

What it measures: how often `pitwall run --base B --head H` + `pitwall compare --pair latest`
calls a change (regression/improvement) that is not there (false positives), how often it
finds one that is, in the right direction (detection), how often it calls the wrong
direction, how many rounds it takes, and the wall time per answer.

Truth: each pair is a fresh temporary git repository whose benchmark suite is a tiny Python
program (bench.py) printing Google Benchmark JSON as `--benchmark_format=json
--benchmark_repetitions=5` would (5 `run_type: "iteration"` entries per benchmark, no
aggregates) for 30 benchmarks. Benchmark i has a base level (log-uniform 1e3..1e6 ns, fixed
per pair), a within-process cv of 2–4% (fixed per benchmark, lognormal noise), 4% of samples
slow outliers of +10–50%, and every process draws its own multiplicative offset per benchmark,
lognormal with sd 0.7 × cv (code layout, ASLR, frequency: what makes the process, not the
sample, the replicate). Randomness inside bench.py is seeded from os.urandom, fresh per
process. The head commit changes only the data file (data.json): a third of the benchmarks
(10, chosen per pair and recorded) shift by 3–8%, slower or faster (random sign per
benchmark). `--no-offset` turns the per-process offset off, for comparison.

Trial: one `pitwall run --base <c0> --head <c1> --no-report RUN_ARGS`, then
`pitwall compare --pair latest --format json`. Scored on the `time` measure (real_time);
`cpu_time` (= real_time here, a second measure of the same samples) is reported alongside.

Targets (time measure): false positives <= 0.5% of unshifted benchmark-trials; detection >= 80%
of shifted benchmark-trials in the right direction; <= 10 rounds per pair-trial on average.

Run (from the repository root, after `cargo build --release`):
    python3 tests/eval/ab/synthetic.py --pitwall target/release/pitwall \
        --run-args "--until-decided --max-rounds 15" --out /tmp/synthetic.json
Defaults: 8 pairs x 5 trials. A few minutes on a 2-core machine (each process costs ~50 ms of
Python start-up; with 15 rounds a trial is 30 processes).

The testbed's noise record (issue 26): `--calibrations N` runs `pitwall calibrate --rounds 6`
N times in each pair's repository before its trials, so every trial borrows the record of N
calibration pairs (and of the trials before it, as a pull request's pair would).
`--record-scale F` calibrates a third commit whose benchmarks are F times as noisy (cv and
per-process offset), so the record is wrong by F in standard deviation.
"""

from __future__ import annotations

import json
import math
import os
import random
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402

N_BENCH = 30
REPS = 5

BENCH_PY = r'''"""Fake Google Benchmark binary: prints --benchmark_format=json output with
--benchmark_repetitions=5 for the benchmarks in data.json (levels in ns)."""
import json, math, os, random, sys

rng = random.Random(int.from_bytes(os.urandom(16), "little"))  # fresh per process
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data.json")) as f:
    data = json.load(f)
reps = data["repetitions"]
entries = []
for fi, b in enumerate(data["benchmarks"]):
    cv = b["cv"]
    offset = math.exp(rng.gauss(0.0, data["offset_sd_factor"] * cv))  # this process's offset
    for r in range(reps):
        t = b["level_ns"] * b["shift"] * offset * math.exp(rng.gauss(0.0, cv))
        if rng.random() < data["outlier_rate"]:
            t *= 1.0 + rng.uniform(0.10, 0.50)
        entries.append({
            "name": b["name"], "family_index": fi, "per_family_instance_index": 0,
            "run_name": b["name"], "run_type": "iteration", "repetitions": reps,
            "repetition_index": r, "threads": 1, "iterations": max(1, int(1e8 / b["level_ns"])),
            "real_time": t, "cpu_time": t, "time_unit": "ns",
        })
json.dump({"context": {"date": "synthetic", "host_name": "synthetic", "executable": "bench.py",
                       "num_cpus": 1, "library_build_type": "release"},
           "benchmarks": entries}, sys.stdout)
'''


def make_pair(rng: random.Random, offset_factor: float) -> dict:
    """Truth of one pair: levels, cvs, and the shifted third with signed shifts."""
    shifted = set(rng.sample(range(N_BENCH), N_BENCH // 3))
    benches = []
    for i in range(N_BENCH):
        shift = 1.0
        if i in shifted:
            mag = rng.uniform(0.03, 0.08)
            shift = 1.0 + mag if rng.random() < 0.5 else 1.0 - mag
        benches.append({
            "name": f"BM_synth_{i:02d}",
            "level_ns": 10 ** rng.uniform(3, 6),
            "cv": rng.uniform(0.02, 0.04),
            "shift": shift,
        })
    return {"benchmarks": benches, "offset_sd_factor": offset_factor}


def data_json(pair: dict, head: bool, noise_scale: float = 1.0) -> str:
    bs = [dict(b, shift=b["shift"] if head else 1.0, cv=b["cv"] * noise_scale) for b in pair["benchmarks"]]
    return json.dumps({
        "repetitions": REPS, "outlier_rate": 0.04,
        "offset_sd_factor": pair["offset_sd_factor"], "benchmarks": bs,
    }, indent=1) + "\n"


def build_repo(repo: str, pair: dict) -> tuple[str, str]:
    c.init_repo(repo)
    c.write(os.path.join(repo, "bench.py"), BENCH_PY)
    c.write(os.path.join(repo, "pitwall.toml"), c.pitwall_toml("synthetic", f"{sys.executable} bench.py", timeout_s=120))
    c.write(os.path.join(repo, "data.json"), data_json(pair, head=False))
    base = c.commit_all(repo, "base: benchmark levels")
    c.write(os.path.join(repo, "data.json"), data_json(pair, head=True))
    head = c.commit_all(repo, "head: shift a third of the benchmarks")
    return base, head


def calibrate(pitwall: str, repo: str, pair: dict, n: int, scale: float, timeout: float) -> str:
    """`pitwall calibrate` n times, of the base commit or (scale != 1) of a commit whose
    benchmarks are `scale` times as noisy; returns the commit calibrated."""
    commit = c.git(repo, "rev-parse", "HEAD~1")
    if scale != 1.0:
        c.write(os.path.join(repo, "data.json"), data_json(pair, head=False, noise_scale=scale))
        commit = c.commit_all(repo, f"calibration: noise x{scale}")
    for _ in range(n):
        c.run([pitwall, "calibrate", "--commit", commit, "--rounds", "6", "-q"], cwd=repo, timeout=timeout)
    return commit


def score_trial(pair: dict, trial: dict) -> dict:
    truth = {b["name"]: b["shift"] for b in pair["benchmarks"]}
    per_measure: dict[str, dict] = {}
    seen: dict[str, set] = {}
    for b in trial["benchmarks"]:
        name, measure = c.bench_name_measure(b)
        if name not in truth:
            continue
        s = per_measure.setdefault(measure, {
            "unshifted": 0, "false_calls": 0, "shifted": 0, "detected": 0, "wrong_direction": 0,
            "unchanged_on_shifted": 0, "inconclusive_shifted": 0, "inconclusive_unshifted": 0,
            "decided_at": [],
        })
        seen.setdefault(measure, set()).add(name)
        v, shift = b.get("verdict"), truth[name]
        if b.get("decided_at_round") is not None:
            s["decided_at"].append(b["decided_at_round"])
        if shift == 1.0:
            s["unshifted"] += 1
            s["false_calls"] += v in c.CALLS
            s["inconclusive_unshifted"] += v == "inconclusive"
        else:
            s["shifted"] += 1
            right = "regression" if shift > 1.0 else "improvement"
            s["detected"] += v == right
            s["wrong_direction"] += v in c.CALLS and v != right
            s["unchanged_on_shifted"] += v == "unchanged"
            s["inconclusive_shifted"] += v == "inconclusive"
    for m, s in per_measure.items():
        s["missing"] = len(truth) - len(seen[m])
    return per_measure


def main() -> None:
    p = c.common_args(__doc__)
    p.add_argument("--pairs", type=int, default=8, help="pairs (fresh repositories), default 8")
    p.add_argument("--trials", type=int, default=5, help="A/B answers per pair, default 5")
    p.add_argument("--no-offset", action="store_true", help="no per-process offset (offset sd 0 instead of 0.7 x cv)")
    p.add_argument("--seed", type=int, help="seed of the pair truths (levels, cvs, shifts); default random")
    p.add_argument("--calibrations", type=int, default=0, help="`pitwall calibrate` runs per repository before its trials")
    p.add_argument("--record-scale", type=float, default=1.0, help="calibrate a commit this many times as noisy")
    args = p.parse_args()
    pitwall = c.resolve_pitwall(args.pitwall)
    run_args = shlex.split(args.run_args)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    offset_factor = 0.0 if args.no_offset else 0.7
    doc = {
        "script": "synthetic.py", "pitwall": pitwall, "run_args": run_args, "seed": seed,
        "offset_sd_factor": offset_factor, "pairs": [],
        "calibrations": args.calibrations, "record_scale": args.record_scale,
    }
    t_start = time.monotonic()
    errors = 0
    for pi in range(args.pairs):
        pair = make_pair(rng, offset_factor)
        rec = {"pair": pi, "truth": pair, "trials": []}
        doc["pairs"].append(rec)
        with c.temp_dir(f"pw-synth-{pi}-", args.keep) as repo:
            base, head = build_repo(repo, pair)
            rec.update(base=base, head=head)
            if args.calibrations:
                try:
                    calibrate(pitwall, repo, pair, args.calibrations, args.record_scale, args.timeout)
                except c.HarnessError as e:
                    errors += 1
                    c.log(args, f"pair {pi} calibration: ERROR {e}")
            for ti in range(args.trials):
                try:
                    t = c.ab_trial(pitwall, repo, base, head, run_args, args.timeout)
                except c.HarnessError as e:
                    errors += 1
                    rec["trials"].append({"trial": ti, "error": str(e)})
                    c.log(args, f"pair {pi} trial {ti}: ERROR {e}")
                    continue
                t["trial"] = ti
                t["score"] = score_trial(pair, t)
                rec["trials"].append(t)
                s = t["score"].get("time", {})
                c.log(args, f"pair {pi} trial {ti}: rounds {t['rounds']}, "
                      f"false calls {s.get('false_calls')}/{s.get('unshifted')}, "
                      f"detected {s.get('detected')}/{s.get('shifted')}, wrong {s.get('wrong_direction')}, "
                      f"{t['wall_s']:.1f} s")
    doc["wall_s"] = time.monotonic() - t_start
    summarize(doc, args, errors)
    c.write_out(args.out, doc)


def summarize(doc: dict, args, errors: int) -> None:
    trials = [t for pr in doc["pairs"] for t in pr["trials"] if "error" not in t]
    measures = sorted({m for t in trials for m in t["score"]}, key=lambda m: (m != "time", m))
    rows, totals = [], {}
    for m in measures:
        tot: dict = {}
        for t in trials:
            for k, v in t["score"].get(m, {}).items():
                tot[k] = tot.get(k, [] if isinstance(v, list) else 0) + v
        totals[m] = tot
        rows.append([
            m, f"{tot['false_calls']}/{tot['unshifted']}", c.pct(tot["false_calls"], tot["unshifted"]),
            f"{tot['detected']}/{tot['shifted']}", c.pct(tot["detected"], tot["shifted"]),
            tot["wrong_direction"], tot["inconclusive_unshifted"] + tot["inconclusive_shifted"], tot["missing"],
        ])
    rounds = [t["rounds"] for t in trials]
    walls = [t["wall_s"] for t in trials]
    mean_rounds = sum(rounds) / len(rounds) if rounds else float("nan")
    print()
    print(f"synthetic.py: {len(doc['pairs'])} pairs x {args.trials} trials, run args {shlex.join(doc['run_args']) or '(none)'}, "
          f"offset sd {doc['offset_sd_factor']} x cv, seed {doc['seed']}, pitwall {doc['pitwall']}, "
          f"calibrations {doc['calibrations']} (noise x{doc['record_scale']})")
    print(c.table(rows, ["measure", "false calls", "FP rate", "detected", "detection", "wrong dir", "inconclusive", "missing"]))
    src = {t["rounds_source"] for t in trials}
    print(f"rounds per pair-trial: mean {mean_rounds:.2f}, min {min(rounds, default=0)}, max {max(rounds, default=0)} "
          f"(from {', '.join(sorted(src))})")
    dec = totals.get("time", {}).get("decided_at", [])
    if dec:
        print(f"decided_at_round (time): mean {sum(dec) / len(dec):.2f} over {len(dec)} decided benchmarks")
    if walls:
        print(f"wall per trial: mean {sum(walls) / len(walls):.1f} s, total {doc['wall_s']:.0f} s; errors: {errors}")
    t = totals.get("time")
    if t:
        checks = [
            ("false positives <= 0.5%", t["unshifted"] and t["false_calls"] / t["unshifted"] <= 0.005),
            ("detection >= 80% (right direction)", t["shifted"] and t["detected"] / t["shifted"] >= 0.80),
            ("<= 10 rounds per pair-trial on average", mean_rounds <= 10),
            ("no trial failed", errors == 0),
        ]
        for name, ok in checks:
            print(f"  [{'PASS' if ok else 'FAIL'}] {name}")
        doc["summary"] = {
            "fp_rate": t["false_calls"] / t["unshifted"] if t["unshifted"] else None,
            "detection": t["detected"] / t["shifted"] if t["shifted"] else None,
            "wrong_direction": t["wrong_direction"], "mean_rounds": mean_rounds,
            "targets_met": all(ok for _, ok in checks), "errors": errors,
        }


if __name__ == "__main__":
    main()
