#!/usr/bin/env python3
"""A planted slowdown in a 40-commit history: does `pitwall bisect` blame the right commit,
and does `pitwall run --base first --head last` flag only the slowed benchmark?

What it measures, per trial (a fresh repository each):
  (a) `pitwall bisect --good <commit 0> --bad <commit 39> --format json BISECT_ARGS`: the
      culprit (`first_bad.sha`) against the planted commit, classed as `correct`,
      `uncertain` (a wrong or missing culprit, but bisect says it is not sure), `wrong-sure`
      (a wrong culprit given as sure: the failure that must never happen) or `no-culprit`
      (bisect exited 2: it found no regression between the endpoints); probes (`steps`) and
      wall time. "Says uncertain" is the top-level `"uncertain"` of the JSON; an old binary
      without it is judged by its steps' `uncertain` flags (marked as such in the output).
  (b) `pitwall run --base <commit 0> --head <commit 39> --no-report RUN_ARGS` then
      `pitwall compare --pair latest --format json`: the slowed benchmark must be a
      `regression`, and none of the other 5 may be called (regression or improvement).

Truth: 6 benchmarks of real Python work (arithmetic loop, dict ops, string formatting,
sorting, json dumps, regex; bench.py from _realwork.py), timed on this machine, printed as
Google Benchmark JSON with 10 repetitions per process, each repetition ~--rep-ms ms
(iterations calibrated once per run of this script). Commit 0 is the base; of commits 1..39,
one at a random position 5..35 (per trial, recorded) slows one random benchmark by running
--slowdown (default 1.125) times as many calls of its kernel per reported iteration (real
extra work: more iterations of the same loop inside each timed repetition, while the reported
`iterations` stay the same, so the per-iteration time rises; the measured ratio, real_time and
cpu_time, is printed per trial, from 4 + 4 interleaved processes run by this script);
the other 38 touch only a comment in bench.py or README.md.

Targets: (a) in --trials (default 5) trials, bisect finds the planted commit or says
uncertain, and never gives a sure wrong culprit; (b) the A/B run flags the slowed benchmark
and calls nothing else changed.

Run (from the repository root, after `cargo build --release`):
    python3 tests/eval/ab/planted.py --pitwall target/release/pitwall \
        --run-args "--until-decided --max-rounds 15" --bisect-args "--max-rounds 12" --out /tmp/planted.json
A process takes ~0.4 s (6 × 10 × 5 ms + start-up). Per trial: the A/B run (≤ 15 rounds, ~15 s),
and bisect (endpoints + ~6 probes of ≤ 12 rounds: 1–2 min): about 10–15 min for 5 trials on a
2-core machine.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402
import _realwork as rw  # noqa: E402

NAMES = ["loop_arith", "dict_ops", "str_format", "sort_ints", "json_dumps", "regex"]
REPS = 10
N_COMMITS = 40


def build_repo(repo: str, iters: dict, slowed: str, factor: float, position: int) -> tuple[list[str], dict]:
    c.init_repo(repo)
    c.write(os.path.join(repo, "pitwall.toml"), c.pitwall_toml("planted", f"{sys.executable} bench.py"))
    readme = "# planted\n\nBenchmarks of real Python work.\n"
    c.write(os.path.join(repo, "README.md"), readme)
    work: dict = {}
    comment = "revision 0"
    c.write(os.path.join(repo, "bench.py"), rw.bench_source(NAMES, iters, REPS, comment, work))
    shas = [c.commit_all(repo, "commit 0: benchmarks")]
    for i in range(1, N_COMMITS):
        if i == position:
            work = {slowed: factor}
            c.write(os.path.join(repo, "bench.py"), rw.bench_source(NAMES, iters, REPS, comment, work))
            msg = f"commit {i}: more work per iteration in {slowed}"
        elif i % 2:
            comment = f"revision {i}"
            c.write(os.path.join(repo, "bench.py"), rw.bench_source(NAMES, iters, REPS, comment, work))
            msg = f"commit {i}: comment"
        else:
            readme += f"\nNote {i}.\n"
            c.write(os.path.join(repo, "README.md"), readme)
            msg = f"commit {i}: README"
        shas.append(c.commit_all(repo, msg))
    calls = [iters[slowed], max(1, round(iters[slowed] * factor))]
    return shas, {"slowed_calls_per_repetition": calls, "planted_work_factor": calls[1] / calls[0]}


def measure_ratio(repo: str, shas: list[str], position: int, slowed: str, processes: int = 4) -> dict:
    """Median over interleaved processes of the slowed benchmark's median time, planted commit /
    the commit before it, for real_time (`time`) and cpu_time."""
    paths = []
    for k, sha in (("before", shas[position - 1]), ("after", shas[position])):
        d = os.path.join(repo, ".pitwall", f"ratio-{k}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "bench.py")
        with open(path, "w") as f:
            f.write(c.git(repo, "show", f"{sha}:bench.py") + "\n")
        paths.append(path)
    out = {}
    for field in ("real_time", "cpu_time"):
        meds: dict[int, list[float]] = {0: [], 1: []}
        for _ in range(processes):
            for side, path in enumerate(paths):
                meds[side].append(rw.process_medians(rw.run_bench(sys.executable, path, field=field))["BM_" + slowed])
        out[field] = statistics.median(meds[1]) / statistics.median(meds[0])
    return out


def measure_all(repo: str, shas: list[str], processes: int = 10) -> dict:
    """The harness's own look at every benchmark between the first and the last commit: median
    over interleaved processes of each benchmark's per-process median `real_time`, last /
    first. It is the truth a call on a benchmark other than the slowed one is checked against:
    the planted change may really move a neighbour (a benchmark later in the same process sees
    another heap and interpreter state), and then a call on it is right, not false."""
    paths = []
    for k, sha in (("first", shas[0]), ("last", shas[-1])):
        d = os.path.join(repo, ".pitwall", f"all-{k}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "bench.py")
        with open(path, "w") as f:
            f.write(c.git(repo, "show", f"{sha}:bench.py") + "\n")
        paths.append(path)
    meds: dict[int, dict[str, list[float]]] = {0: {}, 1: {}}
    for _ in range(processes):
        for side, path in enumerate(paths):
            for name, m in rw.process_medians(rw.run_bench(sys.executable, path)).items():
                meds[side].setdefault(name, []).append(m)
    return {name: statistics.median(meds[1][name]) / statistics.median(meds[0][name]) for name in meds[0]}


def run_bisect(pitwall: str, repo: str, good: str, bad: str, bisect_args: list[str], timeout: float) -> dict:
    cmd = [pitwall, "bisect", "--good", good, "--bad", bad, "--format", "json", *bisect_args]
    rc, out, err, wall = c.run(cmd, cwd=repo, timeout=timeout, ok=(0, 2))
    res = {"exit": rc, "wall_s": wall, "stderr_tail": "\n".join(err.strip().splitlines()[-8:])}
    try:
        res["json"] = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        res["json"], res["stdout_tail"] = None, out[-2000:]
    return res


def classify(b: dict, truth_sha: str, slowed_key_part: str) -> dict:
    j = b.get("json") or {}
    first = (j.get("first_bad") or {}).get("sha") if isinstance(j.get("first_bad"), dict) else j.get("first_bad")
    steps = j.get("steps") or []
    if "uncertain" in j:
        uncertain, src = bool(j["uncertain"]), "top-level"
    else:
        uncertain, src = any(s.get("uncertain") for s in steps), "steps (old binary: no top-level `uncertain`)"
    also = [a.get("sha") if isinstance(a, dict) else a for a in (j.get("also_possible") or [])]
    if b["exit"] == 2 or not first:
        cls = "no-culprit"
    elif first == truth_sha:
        cls = "correct"
    elif uncertain:
        cls = "uncertain"
    else:
        cls = "wrong-sure"
    return {
        "class": cls, "culprit": first, "uncertain": uncertain, "uncertain_from": src,
        "truth_in_also_possible": truth_sha in also, "followed_key": j.get("key"),
        "followed_planted_benchmark": slowed_key_part in (j.get("key") or ""),
        "steps": len(steps), "max_steps": j.get("max_steps"), "ratio": j.get("ratio"),
    }


def main() -> None:
    p = c.common_args(__doc__)
    p.add_argument("--trials", type=int, default=5, help="trials (fresh repositories), default 5")
    p.add_argument("--bisect-args", default="", metavar='"ARGS"', help='extra arguments for `pitwall bisect`, e.g. "--max-rounds 12"')
    p.add_argument("--rep-ms", type=float, default=5.0, help="target ms per repetition (default 5)")
    p.add_argument("--slowdown", type=float, default=1.125, help="iteration factor of the planted commit (default 1.125)")
    p.add_argument("--seed", type=int, help="seed of positions and slowed benchmarks; default random")
    p.add_argument("--skip-bisect", action="store_true", help="only the A/B check (b)")
    args = p.parse_args()
    pitwall = c.resolve_pitwall(args.pitwall)
    run_args, bisect_args = shlex.split(args.run_args), shlex.split(args.bisect_args)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    doc = {"script": "planted.py", "pitwall": pitwall, "run_args": run_args, "bisect_args": bisect_args,
           "seed": seed, "repetitions": REPS, "trials": []}
    t_start = time.monotonic()
    with c.temp_dir("pw-planted-cal-", False) as d:
        iters = rw.calibrate(sys.executable, d, NAMES, [args.rep_ms] * len(NAMES))
    doc["iterations"] = iters
    errors = 0
    for ti in range(args.trials):
        position, slowed = rng.randint(5, 35), rng.choice(NAMES)
        rec = {"trial": ti, "position": position, "slowed": "BM_" + slowed}
        doc["trials"].append(rec)
        with c.temp_dir(f"pw-planted-{ti}-", args.keep) as repo:
            try:
                shas, info = build_repo(repo, iters, slowed, args.slowdown, position)
                rec.update(info, truth_sha=shas[position], first=shas[0], last=shas[-1])
                rec["measured_ratio"] = measure_ratio(repo, shas, position, slowed)
                c.log(args, f"trial {ti}: planted commit {position} ({shas[position][:12]}) slows BM_{slowed}: "
                      f"measured ratio real_time {rec['measured_ratio']['real_time']:.3f}, cpu_time {rec['measured_ratio']['cpu_time']:.3f}"
                      + ("" if 1.10 <= rec["measured_ratio"]["real_time"] <= 1.15 else " (real_time outside 1.10-1.15: a noisy machine?)"))
                ab = c.ab_trial(pitwall, repo, shas[0], shas[-1], run_args, args.timeout)
                rec["ab"] = ab
                rec["independent_ratios"] = measure_all(repo, shas)
                rec["ab_score"] = score_ab(ab, "BM_" + slowed, rec["independent_ratios"])
                c.log(args, f"trial {ti}: A/B rounds {ab['rounds']}: slowed benchmark "
                      f"{rec['ab_score']['slowed_verdict']} ({rec['ab_score']['slowed_ratio']}), "
                      f"false calls {rec['ab_score']['false_calls']} ({ab['wall_s']:.0f} s)"
                      + "".join(f"\n  call on {x}" for x in rec["ab_score"]["false_call_list"]))
                if not args.skip_bisect:
                    b = run_bisect(pitwall, repo, shas[0], shas[-1], bisect_args, args.timeout)
                    rec["bisect"] = b
                    rec["bisect_score"] = classify(b, shas[position], "BM_" + slowed)
                    s = rec["bisect_score"]
                    pos = shas.index(s["culprit"]) if s["culprit"] in shas else None
                    s["culprit_position"] = pos
                    c.log(args, f"trial {ti}: bisect {s['class']} (culprit commit {pos}, truth {position}, "
                          f"uncertain {s['uncertain']}, followed {s['followed_key']}, {s['steps']} probes, "
                          f"{b['wall_s']:.0f} s)" + (f"\n  {b['stderr_tail'].splitlines()[-1]}" if b["exit"] else ""))
            except c.HarnessError as e:
                errors += 1
                rec["error"] = str(e)
                c.log(args, f"trial {ti}: ERROR {e}")
    doc["wall_s"] = time.monotonic() - t_start
    summarize(doc, args, errors)
    c.write_out(args.out, doc)


def score_ab(ab: dict, slowed: str, independent: dict | None = None) -> dict:
    """Calls on benchmarks other than the slowed one are false calls, unless the harness's own
    measurement of that benchmark (`measure_all`) moved beyond the 2% threshold the same way:
    then the planted change really moved it, and the call is counted as explained."""
    out = {"slowed_verdict": None, "slowed_ratio": None, "false_calls": 0, "explained_calls": 0,
           "false_call_list": [], "cpu_time": {}}
    for b in ab["benchmarks"]:
        name, measure = c.bench_name_measure(b)
        v = b.get("verdict")
        if measure != "time":
            out["cpu_time"][name] = v
            continue
        if name == slowed:
            out["slowed_verdict"] = v
            out["slowed_ratio"] = round(b["ratio"], 4) if b.get("ratio") is not None else None
        elif v in c.CALLS:
            own = (independent or {}).get(name)
            explained = own is not None and (
                (v == "regression" and own > 1.02) or (v == "improvement" and own < 0.98))
            note = f"{name} {v} {b.get('ratio'):.4f}, the harness measured {own:.4f}" if own else f"{name} {v}"
            if explained:
                out["explained_calls"] += 1
                out["false_call_list"].append(note + " (explained: it really moved)")
            else:
                out["false_calls"] += 1
                out["false_call_list"].append(note + " (FALSE)")
    out["ok"] = out["slowed_verdict"] == "regression" and out["false_calls"] == 0
    return out


def summarize(doc: dict, args, errors: int) -> None:
    rows = []
    for r in doc["trials"]:
        ab, bs = r.get("ab_score", {}), r.get("bisect_score", {})
        rows.append([
            r["trial"], r["position"], r["slowed"], "/".join(f"{x:.3f}" for x in r.get("measured_ratio", {}).values()) or "-",
            ab.get("slowed_verdict", "-"), ab.get("false_calls", "-"), r.get("ab", {}).get("rounds", "-"),
            bs.get("class", "error" if "error" in r else "-"), bs.get("culprit_position", "-"),
            bs.get("steps", "-"), f"{r['bisect']['wall_s']:.0f}" if "bisect" in r else "-",
        ])
    print()
    print(f"planted.py: {len(doc['trials'])} trials, run args {shlex.join(doc['run_args']) or '(none)'}, "
          f"bisect args {shlex.join(doc['bisect_args']) or '(none)'}, seed {doc['seed']}, pitwall {doc['pitwall']}")
    print(c.table(rows, ["trial", "planted", "benchmark", "measured real/cpu", "A/B verdict", "A/B false calls", "rounds",
                         "bisect", "culprit", "probes", "bisect s"]))
    done = [r for r in doc["trials"] if "error" not in r]
    classes = [r["bisect_score"]["class"] for r in done if "bisect_score" in r]
    src = {r["bisect_score"]["uncertain_from"] for r in done if "bisect_score" in r}
    if classes:
        print("bisect: " + ", ".join(f"{k} {classes.count(k)}" for k in ("correct", "uncertain", "wrong-sure", "no-culprit"))
              + f" (uncertain read from {', '.join(sorted(src))})")
    print(f"total {doc['wall_s']:.0f} s; errors: {errors}")
    ab_ok = bool(done) and all(r["ab_score"]["ok"] for r in done)
    checks = [("(b) A/B flags the slowed benchmark and nothing that did not move, every trial", ab_ok and errors == 0)]
    if classes:
        checks.insert(0, ("(a) bisect: correct or uncertain, never a sure wrong culprit",
                          all(k in ("correct", "uncertain") for k in classes) and len(classes) == len(doc["trials"])))
    for name, ok in checks:
        print(f"  [{'PASS' if ok else 'FAIL'}] {name}")
    doc["summary"] = {"bisect_classes": classes, "ab_ok": [r["ab_score"]["ok"] for r in done],
                      "targets_met": all(ok for _, ok in checks), "errors": errors}


if __name__ == "__main__":
    main()
