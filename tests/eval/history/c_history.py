#!/usr/bin/env python3
"""Issue 27's real-data target for histories: a small C benchmark repository with a true +14%
step in `sort`, five runs either side, every commit with the same timestamp, three commits
re-measured out of order. Does the history, from an empty store, find the step at the right
commit, raise no other alert, and does the write-up name it with the right sign?

Per trial (a fresh repository and store each):
  1. the repository of tests/eval/ab/c_bisect.py (bench.c: `sort`, `hash`, `matmul`,
     `strops`, 10 repetitions of ~4 ms each per process, printed as pitwall JSON; work sizes
     calibrated once per run of this script), 10 commits: 0–4 at the old level, commit 5
     sorts a bigger array (+14% by n log n), 6–9 after it; commits alternate between a comment
     in bench.c and a README line. Every commit has the same author and committer date (to
     the second), as scripted commits do.
  2. `pitwall run --commit C0 --commit C0..C9 --no-report` (the range is the first-parent
     commits after C0, oldest first), then `pitwall run --commit C7 --commit C2 --commit C4`
     (re-measured out of order: each refines its commit's point).
  3. `pitwall detect --benchmark sort --format json`, `pitwall alerts --format json`,
     `pitwall writeup --from 2000-01-01 --to 2100-01-01` (Markdown).
Pass for a trial: detect has exactly one change point in `sort` and its `commit_after` is C5;
the only alert is `sort`'s at C5, `active` (no other alert on any benchmark: alerts that
detection raised on the way and dismissed itself as "no longer detected" are closed, listed
in the output, and not counted; any other status counts, `suspected` included); the
write-up's line for it says "slower" (time × (1 + X/100)).

Target: 3 of 3 trials. The script prints each trial's points (per-commit values of `sort`,
ms), the change points, alerts and the write-up's line, then "PASS"/"FAIL"; exit 0 on PASS.

Run (from the repository root, after `cargo build --release`), on a quiet machine:
    python3 tests/eval/history/c_history.py --pitwall target/release/pitwall --out /tmp/c_history.json
About 1 minute per trial on a 2-core machine (13 builds and runs of ~0.3 s each).
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ab"))
import _common as c  # noqa: E402
import c_bisect as cb  # noqa: E402

N_COMMITS = 10
STEP_AT = 5
DATE = "2026-11-02T10:00:00+00:00"


def commit_all(repo: str, message: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_DATE=DATE, GIT_COMMITTER_DATE=DATE,
               GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="ada@example.com",
               GIT_COMMITTER_NAME="Ada", GIT_COMMITTER_EMAIL="ada@example.com")
    c.run(["git", "add", "-A"], cwd=repo, timeout=60, env=env)
    c.run(["git", "commit", "-q", "--allow-empty", "-m", message], cwd=repo, timeout=60, env=env)
    return c.git(repo, "rev-parse", "HEAD")


def build_repo(repo: str, sizes: dict, slowdown: float) -> list[str]:
    c.init_repo(repo)
    with open(os.path.join(repo, ".gitignore"), "a") as f:
        f.write("bench\n")
    c.write(os.path.join(repo, "pitwall.toml"), cb.PITWALL_TOML)
    readme = "# cbench\n\nSmall C benchmarks.\n"
    c.write(os.path.join(repo, "README.md"), readme)
    cur = dict(sizes)
    comment = "revision 0"
    c.write(os.path.join(repo, "bench.c"), cb.bench_source(cur, comment))
    shas = [commit_all(repo, "commit 0: benchmarks")]
    for i in range(1, N_COMMITS):
        if i == STEP_AT:
            cur = dict(cur, sort_n=cb.sort_n_for(sizes["sort_n"], slowdown))
            c.write(os.path.join(repo, "bench.c"), cb.bench_source(cur, comment))
            msg = f"commit {i}: sort a bigger array"
        elif i % 2:
            comment = f"revision {i}"
            c.write(os.path.join(repo, "bench.c"), cb.bench_source(cur, comment))
            msg = f"commit {i}: comment"
        else:
            readme += f"\nNote {i}.\n"
            c.write(os.path.join(repo, "README.md"), readme)
            msg = f"commit {i}: README"
        shas.append(commit_all(repo, msg))
    return shas


def trial(pitwall: str, sizes: dict, slowdown: float, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="c_history") as repo:
        shas = build_repo(repo, sizes, slowdown)
        env = dict(os.environ, PITWALL_STORE=os.path.join(repo, ".pitwall", "history.db"))
        run = lambda args, ok=(0,): c.run([pitwall, *args], cwd=repo, timeout=timeout, ok=ok, env=env)  # noqa: E731
        run(["run", "-q", "--no-report", "--commit", shas[0], "--commit", f"{shas[0]}..{shas[-1]}"])
        run(["run", "-q", "--no-report", "--commit", shas[7], "--commit", shas[2], "--commit", shas[4]])
        det = [json.loads(line) for line in run(["detect", "--benchmark", "sort", "--format", "json"])[1].splitlines() if line.strip()]
        alerts = json.loads(run(["alerts", "--format", "json"])[1])["alerts"]
        writeup = run(["writeup", "--from", "2000-01-01", "--to", "2100-01-01"])[1]
        export = json.loads(run(["export"])[1])
    # Each run's median `sort` time (ms) by commit index, in the order stored, and whether the
    # run was contended; the step over the run-to-run noise (sd of per-run values within the
    # two segments, pooled), the measure of how clear the step is.
    per_run = []
    for r in export["runs"]:
        for b in r["results"]:
            if b["name"] == "sort":
                per_run.append((shas.index(r["commit"]), statistics.median(b["samples"]) / 1e6,
                                bool((r.get("contention") or {}).get("contended"))))
    before = [v for i, v, _ in per_run if i < STEP_AT]
    after = [v for i, v, _ in per_run if i >= STEP_AT]
    pooled = math.sqrt(((len(before) - 1) * statistics.variance(before) + (len(after) - 1) * statistics.variance(after))
                       / (len(before) + len(after) - 2))
    step_over_noise = (statistics.mean(after) - statistics.mean(before)) / pooled
    sort = [d for d in det if d.get("benchmark", "").startswith("bench/sort")]
    cps = sort[0]["change_points"] if sort else []
    ok_cp = len(cps) == 1 and cps[0].get("commit_after") == shas[STEP_AT]
    alert_keys = [(a.get("key"), a.get("first_bad"), a.get("status"), a.get("note")) for a in alerts]
    # Alerts detection raised on the way and dismissed itself once their step was gone ("no
    # longer detected") are closed: listed, not counted. Every other alert counts.
    counted = [k for k in alert_keys if not (k[2] == "dismissed" and k[3] == "no longer detected")]
    ok_alerts = len(counted) == 1 and counted[0][0].startswith("bench/sort") and counted[0][1] == shas[STEP_AT] \
        and counted[0][2] == "active"
    lines = [ln for ln in writeup.splitlines() if "sort" in ln and "%" in ln]
    # The step's own words: the first "X% slower|faster" of each line (an interval that
    # follows it may cross zero).
    said = [m.group(1) for m in (re.search(r"\d+(?:\.\d+)?% (slower|faster)", ln) for ln in lines) if m]
    ok_sign = bool(said) and all(w == "slower" for w in said)
    return {
        "change_points": cps,
        "points": sort[0].get("points") if sort else None,
        "alerts": alert_keys,
        "writeup_lines": lines,
        "step_commit": shas[STEP_AT],
        "per_run_ms": [(i, round(v, 3), cont) for i, v, cont in per_run],
        "step_over_noise": round(step_over_noise, 2),
        "ok": {"change_point": ok_cp, "alerts": ok_alerts, "sign": ok_sign},
        "pass": ok_cp and ok_alerts and ok_sign,
    }


def main() -> int:
    ap = c.common_args(__doc__.splitlines()[0])
    ap.add_argument("--slowdown", type=float, default=1.14)
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    pitwall = c.resolve_pitwall(args.pitwall)
    with tempfile.TemporaryDirectory(prefix="c_history_cal") as d:
        sizes, ms = cb.calibrate(d, cb.TARGET_MS)
    print(f"sizes {sizes}, ms per repetition {ms}", flush=True)
    trials = []
    for t in range(args.trials):
        r = trial(pitwall, sizes, args.slowdown, args.timeout)
        trials.append(r)
        print(f"trial {t + 1}: {'pass' if r['pass'] else 'FAIL'} {r['ok']}; step/noise {r['step_over_noise']}; "
              f"runs {[(i, v) for i, v, _ in r['per_run_ms']]}; contended {sum(c for _, _, c in r['per_run_ms'])}; change points "
              f"{[(cp.get('index'), round(cp.get('rel_change', 0) * 100, 1)) for cp in r['change_points']]}; "
              f"alerts {[(k[0], k[2]) for k in r['alerts']]}; write-up {r['writeup_lines'][:2]}", flush=True)
    passed = sum(r["pass"] for r in trials)
    print(f"step found at the right commit with no other alert and the right sign in {passed} of {len(trials)}")
    c.write_out(args.out, {"sizes": sizes, "ms": ms, "trials": trials})
    print("PASS" if passed == len(trials) else "FAIL")
    return 0 if passed == len(trials) else 1


if __name__ == "__main__":
    sys.exit(main())
