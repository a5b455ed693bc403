#!/usr/bin/env python3
"""Issue 27's contention target through the real binary: no alert from runs taken while a
multi-threaded load shares the cores.

Per trial (a fresh repository and store each):
  1. the repository of c_history.py (four C benchmarks of real CPU work, 10 commits with the
     same timestamp), with NO change in the code's speed: every commit touches a comment or the
     README (`--slowdown 1.0`).
  2. `pitwall run --commit C0..C4` on the idle machine (after C0 itself), then a CPU hog is
     started (a C program: one spinning thread per core plus one, its main thread asleep in
     pthread_join, as a parallel compiler looks), `pitwall run --commit C5..C9` while it runs,
     and the hog is stopped.
  3. `pitwall detect --benchmark bench --format json` and `pitwall alerts --format json`.
The load makes a false step: each benchmark's per-run medians of C5–C9 against C0–C4 are
printed, and the same ten values are given to `pitwall detect --series` (a file, where pitwall
cannot know which runs were contended) to show what the history would say without the
contention rule. Pass for a trial: the five loaded runs are stored `contended`, the five idle
ones are not, and there is no alert on any benchmark.

Run (from the repository root, after `cargo build --release`), on an otherwise idle machine:
    python3 tests/eval/history/c_load.py --pitwall target/release/pitwall --out /tmp/c_load.json
About 1 minute per trial on a 2-core machine.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ab"))
sys.path.insert(0, HERE)
import _common as c  # noqa: E402
import c_bisect as cb  # noqa: E402
import c_history as ch  # noqa: E402

HOG_C = r"""
#include <pthread.h>
#include <unistd.h>
static void *spin(void *arg) { volatile unsigned long x = 0; (void)arg; for (;;) x++; return 0; }
int main(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN) + 1;
    pthread_t t[256];
    if (n > 256) n = 256;
    for (long i = 0; i < n; i++) pthread_create(&t[i], 0, spin, 0);
    for (long i = 0; i < n; i++) pthread_join(t[i], 0);
    return 0;
}
"""


def build_hog(d: str) -> str:
    src = os.path.join(d, "hog.c")
    exe = os.path.join(d, "hog")
    c.write(src, HOG_C)
    c.run([cb.CC, "-O2", "-pthread", "-o", exe, src], cwd=d, timeout=120)
    return exe


def trial(pitwall: str, sizes: dict, hog: str, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="c_load") as repo:
        shas = ch.build_repo(repo, sizes, 1.0)
        env = dict(os.environ, PITWALL_STORE=os.path.join(repo, ".pitwall", "history.db"))
        run = lambda args, ok=(0,): c.run([pitwall, *args], cwd=repo, timeout=timeout, ok=ok, env=env)  # noqa: E731
        half = ch.STEP_AT
        run(["run", "-q", "--no-report", "--commit", shas[0], "--commit", f"{shas[0]}..{shas[half - 1]}"])
        load = subprocess.Popen([hog])
        try:
            run(["run", "-q", "--no-report", "--commit", f"{shas[half - 1]}..{shas[-1]}"])
        finally:
            load.kill()
            load.wait()
        det = [json.loads(ln) for ln in run(["detect", "--benchmark", "bench", "--format", "json"])[1].splitlines() if ln.strip()]
        alerts = json.loads(run(["alerts", "--format", "json"])[1])["alerts"]
        export = json.loads(run(["export"])[1])
        # Per benchmark, the ten per-run medians in commit order, and what a plain series
        # detection of them says (no contention known).
        values: dict = {}
        contended = {}
        for r in export["runs"]:
            i = shas.index(r["commit"])
            contended[i] = bool((r.get("contention") or {}).get("contended"))
            for b in r["results"]:
                values.setdefault(b["name"], {})[i] = statistics.median(b["samples"]) / 1e6
        without_rule = {}
        for name, by_commit in values.items():
            path = os.path.join(repo, f"{name}.csv")
            c.write(path, "value\n" + "".join(f"{by_commit[i]}\n" for i in sorted(by_commit)))
            out = json.loads(run(["detect", "--series", path, "--format", "json"], ok=(0, 1))[1])
            without_rule[name] = [round(cp["rel_change"] * 100, 1) for cp in out.get("change_points", [])]
    ratios = {n: round(statistics.median([v[i] for i in v if i >= half]) / statistics.median([v[i] for i in v if i < half]), 3)
              for n, v in values.items()}
    ok_judged = all(contended[i] == (i >= half) for i in contended)
    return {
        "contended_by_commit": [contended[i] for i in sorted(contended)],
        "loaded_over_idle": ratios,
        "change_points_without_the_rule": without_rule,
        "history_change_points": {d.get("benchmark"): d.get("change_points") for d in det},
        "alerts": [(a.get("key"), a.get("status")) for a in alerts],
        "ok": {"judged": ok_judged, "no_alert": not alerts},
        "pass": ok_judged and not alerts,
    }


def main() -> int:
    ap = c.common_args(__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    pitwall = c.resolve_pitwall(args.pitwall)
    with tempfile.TemporaryDirectory(prefix="c_load_cal") as d:
        sizes, ms = cb.calibrate(d, cb.TARGET_MS)
        hog = build_hog(d)
        print(f"sizes {sizes}, ms per repetition {ms}", flush=True)
        trials = []
        for t in range(args.trials):
            r = trial(pitwall, sizes, hog, args.timeout)
            trials.append(r)
            print(f"trial {t + 1}: {'pass' if r['pass'] else 'FAIL'} {r['ok']}; contended by commit "
                  f"{r['contended_by_commit']}; loaded/idle {r['loaded_over_idle']}; change points without "
                  f"the rule {r['change_points_without_the_rule']}; alerts {r['alerts']}", flush=True)
    passed = sum(r["pass"] for r in trials)
    print(f"no alert, loaded runs judged contended and idle ones not, in {passed} of {len(trials)}")
    c.write_out(args.out, {"sizes": sizes, "ms": ms, "trials": trials})
    print("PASS" if passed == len(trials) else "FAIL")
    return 0 if passed == len(trials) else 1


if __name__ == "__main__":
    sys.exit(main())
