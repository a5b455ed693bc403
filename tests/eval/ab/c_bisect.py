#!/usr/bin/env python3
"""A true +14% step in a small C benchmark repository, as a new user would write it: does
`pitwall bisect` with default flags name the commit that made it?

What it measures, per trial (a fresh repository each): `pitwall bisect --good <commit 0>
--bad <commit 11> --format json` with no other flags (BISECT_ARGS, default none, is for
experiments only), run in the repository. Its culprit (`first_bad.sha`) against the planted
commit is classed as `correct`, `uncertain` (a wrong or missing culprit, but bisect says it is
not sure: top-level `"uncertain"` of the JSON, else its steps' flags), `wrong-sure` (a wrong
culprit given as sure: the failure that must never happen) or `no-culprit` (exit 2: bisect
found no regression between the endpoints; the first lines of its stderr are recorded); the
probes (`steps`) and the wall time are recorded too.

Truth: a repository of one C file, bench.c, with 4 benchmarks of real CPU work (`sort`: qsort
of N ints from a fixed-seed LCG; `hash`: FNV-1a over a buffer, looped; `matmul`: a small double
matrix product; `strops`: an snprintf/strlen loop), each run for 10 repetitions in one process,
each repetition timed with clock_gettime(CLOCK_MONOTONIC) and ~4 ms long (work sizes calibrated
once per run of this script, on this machine), printed as pitwall JSON (docs/FORMATS.md: one
result per benchmark, measure `time`, unit `ns`, the 10 samples). A volatile sink keeps the
compiler from dropping work. pitwall.toml is what a new user writes: `[project] name = "cbench"`,
`build = "cc -O2 -o bench bench.c"`, one command suite `./bench` with `format = "pitwall-json"`,
nothing else. 12 commits: commit 0 is the base; one commit at a random position 3..9 (per trial,
seeded, recorded) makes `sort` sort more elements per repetition, sized so that the time rises
by --slowdown (default 1.14, n log n); the other commits touch only a comment in bench.c or
README.md. The script measures the true ratio itself (bad/good, the median over 6 + 6
interleaved processes of each process's median `sort` time, both commits built by this script
in temporary directories) and prints it per trial.

Target (issue 25): with default flags, bisect finds the culprit in --trials (default 5) of 5
trials, and is never sure and wrong. The summary prints "culprit found in K of N; wrong-sure: W"
and PASS when K == N and W == 0; the exit status is 0 on PASS, 1 on FAIL.

Run (from the repository root, after `cargo build --release`):
    python3 tests/eval/ab/c_bisect.py --pitwall target/release/pitwall --out /tmp/c_bisect.json
A process takes ~0.2 s (4 × 10 × 4 ms + start-up); a trial (its own ratio measurement, then
bisect: endpoints and 3–4 probes, each commit built once with cc) takes ~10–30 s on a 2-core
machine, 5 trials ~1–3 min. Run it on a quiet machine: a compiler running beside it time-slices
the benchmark processes (samples jump from 4 to 8 ms) and the answer is about that, not about
pitwall. The 1-minute load average at the start and the end of each trial is recorded and shown
(about 1 on a quiet 2-core machine: this script's own benchmark processes).
"""

from __future__ import annotations

import json
import math
import os
import random
import shlex
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402

NAMES = ["sort", "hash", "matmul", "strops"]
REPS = 10
N_COMMITS = 12
TARGET_MS = 4.0
CC = "cc"

PITWALL_TOML = """[project]
name = "cbench"
build = "cc -O2 -o bench bench.c"

[[suite]]
name = "bench"
kind = "command"
command = "./bench"
format = "pitwall-json"
"""

BENCH_C = r"""/* bench.c: small CPU benchmarks, printed as pitwall JSON. */
/* {comment} */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS {reps}
#define SORT_N {sort_n}
#define HASH_BYTES 65536
#define HASH_LOOPS {hash_loops}
#define MAT_N {mat_n}
#define STR_N {str_n}

static volatile uint64_t sink;

static double now_ns(void) {{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}}

static uint32_t lcg_state;
static uint32_t lcg(void) {{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state;
}}

static int cmp_int(const void *a, const void *b) {{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}}

static int *sort_buf;
static void bench_sort(void) {{
    lcg_state = 12345u;
    for (int i = 0; i < SORT_N; i++) sort_buf[i] = (int)(lcg() >> 1);
    qsort(sort_buf, SORT_N, sizeof(int), cmp_int);
    sink += (uint64_t)sort_buf[SORT_N / 2];
}}

static unsigned char hash_buf[HASH_BYTES];
static void bench_hash(void) {{
    uint64_t h = 1469598103934665603ull;
    for (int l = 0; l < HASH_LOOPS; l++) {{
        for (int i = 0; i < HASH_BYTES; i++) {{
            h ^= hash_buf[i];
            h *= 1099511628211ull;
        }}
    }}
    sink += h;
}}

static double ma[MAT_N * MAT_N], mb[MAT_N * MAT_N], mc[MAT_N * MAT_N];
static void bench_matmul(void) {{
    for (int i = 0; i < MAT_N; i++)
        for (int j = 0; j < MAT_N; j++) {{
            double s = 0.0;
            for (int k = 0; k < MAT_N; k++) s += ma[i * MAT_N + k] * mb[k * MAT_N + j];
            mc[i * MAT_N + j] = s;
        }}
    sink += (uint64_t)mc[(MAT_N / 2) * MAT_N + MAT_N / 3];
}}

static void bench_strops(void) {{
    char buf[64];
    size_t total = 0;
    for (int i = 0; i < STR_N; i++) {{
        snprintf(buf, sizeof buf, "item-%d-%x", i, i * 7);
        total += strlen(buf);
    }}
    sink += total;
}}

struct bench {{ const char *name; void (*fn)(void); }};

int main(void) {{
    struct bench benches[] = {{
        {{"sort", bench_sort}}, {{"hash", bench_hash}}, {{"matmul", bench_matmul}}, {{"strops", bench_strops}},
    }};
    int nb = (int)(sizeof benches / sizeof benches[0]);
    sort_buf = malloc(sizeof(int) * SORT_N);
    if (!sort_buf) return 1;
    lcg_state = 99u;
    for (int i = 0; i < HASH_BYTES; i++) hash_buf[i] = (unsigned char)lcg();
    for (int i = 0; i < MAT_N * MAT_N; i++) {{
        ma[i] = (double)(lcg() % 1000) / 1000.0;
        mb[i] = (double)(lcg() % 1000) / 1000.0;
    }}
    printf("{{\"schema\": \"pitwall/v1\", \"benchmarks\": [");
    for (int b = 0; b < nb; b++) {{
        double samples[REPS];
        for (int r = 0; r < REPS; r++) {{
            double t0 = now_ns();
            benches[b].fn();
            samples[r] = now_ns() - t0;
        }}
        printf("%s\n  {{\"name\": \"%s\", \"measure\": \"time\", \"unit\": \"ns\", \"samples\": [",
               b ? "," : "", benches[b].name);
        for (int r = 0; r < REPS; r++) printf("%s%.0f", r ? ", " : "", samples[r]);
        printf("]}}");
    }}
    printf("\n]}}\n");
    free(sort_buf);
    return 0;
}}
"""


def bench_source(sizes: dict, comment: str) -> str:
    return BENCH_C.format(comment=comment, reps=REPS, **sizes)


def compile_bench(src: str, d: str) -> str:
    os.makedirs(d, exist_ok=True)
    c.write(os.path.join(d, "bench.c"), src)
    exe = os.path.join(d, "bench")
    c.run([CC, "-O2", "-o", exe, "bench.c"], cwd=d, timeout=120)
    return exe


def run_bench(exe: str) -> dict[str, float]:
    """One process: the median of each benchmark's samples (ns)."""
    out = c.run([exe], cwd=os.path.dirname(exe), timeout=120)[1]
    doc = json.loads(out)
    return {b["name"]: statistics.median(b["samples"]) for b in doc["benchmarks"]}


def nlogn(n: float) -> float:
    return n * math.log2(n)


def sort_n_for(n0: int, factor: float) -> int:
    """The n whose n log n is `factor` times that of n0."""
    lo, hi = float(n0), float(n0) * factor
    for _ in range(60):
        mid = (lo + hi) / 2
        if nlogn(mid) < factor * nlogn(n0):
            lo = mid
        else:
            hi = mid
    return round(hi)


def calibrate(d: str, target_ms: float) -> tuple[dict, dict]:
    """Work sizes that make one repetition of each benchmark last about target_ms here; two
    passes (scale from a first guess, then check and scale once more), then a check."""
    sizes = {"sort_n": 20000, "hash_loops": 4, "mat_n": 160, "str_n": 5000}
    ms: dict = {}
    for _ in range(2):
        exe = compile_bench(bench_source(sizes, "calibration"), d)
        meds = [run_bench(exe) for _ in range(3)]
        ms = {k: statistics.median(m[k] for m in meds) / 1e6 for k in NAMES}
        f = {k: target_ms / max(ms[k], 1e-6) for k in NAMES}
        sizes = {
            "sort_n": max(1000, sort_n_for(sizes["sort_n"], f["sort"]) if f["sort"] >= 1
                          else round(sizes["sort_n"] * f["sort"])),
            "hash_loops": max(1, round(sizes["hash_loops"] * f["hash"])),
            # a multiple of 8: an odd size runs ~2x slower per flop here (no aligned vector loop)
            "mat_n": max(8, 8 * round(sizes["mat_n"] * f["matmul"] ** (1 / 3) / 8)),
            "str_n": max(100, round(sizes["str_n"] * f["strops"])),
        }
    exe = compile_bench(bench_source(sizes, "calibration"), d)
    meds = [run_bench(exe) for _ in range(3)]
    ms = {k: round(statistics.median(m[k] for m in meds) / 1e6, 3) for k in NAMES}
    return sizes, ms


def build_repo(repo: str, sizes: dict, slowdown: float, position: int) -> tuple[list[str], dict]:
    c.init_repo(repo)
    with open(os.path.join(repo, ".gitignore"), "a") as f:
        f.write("bench\n")
    c.write(os.path.join(repo, "pitwall.toml"), PITWALL_TOML)
    readme = "# cbench\n\nSmall C benchmarks: `cc -O2 -o bench bench.c && ./bench`.\n"
    c.write(os.path.join(repo, "README.md"), readme)
    cur = dict(sizes)
    comment = "revision 0"
    c.write(os.path.join(repo, "bench.c"), bench_source(cur, comment))
    shas = [c.commit_all(repo, "commit 0: benchmarks")]
    slow_n = sort_n_for(sizes["sort_n"], slowdown)
    for i in range(1, N_COMMITS):
        if i == position:
            cur = dict(cur, sort_n=slow_n)
            c.write(os.path.join(repo, "bench.c"), bench_source(cur, comment))
            msg = f"commit {i}: sort a bigger array"
        elif i % 2:
            comment = f"revision {i}"
            c.write(os.path.join(repo, "bench.c"), bench_source(cur, comment))
            msg = f"commit {i}: comment"
        else:
            readme += f"\nNote {i}.\n"
            c.write(os.path.join(repo, "README.md"), readme)
            msg = f"commit {i}: README"
        shas.append(c.commit_all(repo, msg))
    return shas, {"sort_n": [sizes["sort_n"], slow_n], "planted_nlogn_factor": nlogn(slow_n) / nlogn(sizes["sort_n"])}


def measure_ratio(repo: str, shas: list[str], position: int, scratch: str, processes: int = 6) -> dict:
    """Median over interleaved processes of each process's median time, planted commit / the
    commit before it, for every benchmark (the `sort` one is the truth)."""
    exes = []
    for k, sha in (("good", shas[position - 1]), ("bad", shas[position])):
        exes.append(compile_bench(c.git(repo, "show", f"{sha}:bench.c") + "\n", os.path.join(scratch, f"ratio-{k}")))
    meds: dict[int, dict[str, list[float]]] = {0: {}, 1: {}}
    for _ in range(processes):
        for side, exe in enumerate(exes):
            for name, m in run_bench(exe).items():
                meds[side].setdefault(name, []).append(m)
    return {name: statistics.median(meds[1][name]) / statistics.median(meds[0][name]) for name in meds[0]}


def run_bisect(pitwall: str, repo: str, good: str, bad: str, bisect_args: list[str], timeout: float) -> dict:
    cmd = [pitwall, "bisect", "--good", good, "--bad", bad, "--format", "json", *bisect_args]
    rc, out, err, wall = c.run(cmd, cwd=repo, timeout=timeout, ok=(0, 2))
    lines = err.strip().splitlines()
    res = {"exit": rc, "wall_s": wall, "stderr_head": "\n".join(lines[:8]), "stderr_tail": "\n".join(lines[-8:])}
    try:
        res["json"] = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        res["json"], res["stdout_tail"] = None, out[-2000:]
    return res


def classify(b: dict, truth_sha: str) -> dict:
    j = b.get("json") or {}
    fb = j.get("first_bad")
    first = fb.get("sha") if isinstance(fb, dict) else fb
    steps = j.get("steps") or []
    if "uncertain" in j:
        uncertain, src = bool(j["uncertain"]), "top-level"
    else:
        uncertain, src = any(s.get("uncertain") for s in steps), "steps (no top-level `uncertain`)"
    also = [a.get("sha") if isinstance(a, dict) else a for a in (j.get("also_possible") or [])]
    if first == truth_sha:
        cls = "correct"
    elif b["exit"] == 2 or not first:
        cls = "no-culprit"
    elif uncertain:
        cls = "uncertain"
    else:
        cls = "wrong-sure"
    return {
        "class": cls, "culprit": first, "uncertain": uncertain, "uncertain_from": src,
        "truth_in_also_possible": truth_sha in also, "followed_key": j.get("key"),
        "steps": len(steps), "max_steps": j.get("max_steps"), "ratio": j.get("ratio"),
        "step_summary": [dict({k: s.get(k) for k in ("position", "class", "ratio", "ci", "rounds", "uncertain", "note") if k in s},
                              sha=(s.get("commit") or {}).get("sha") if isinstance(s.get("commit"), dict) else s.get("commit"))
                         for s in steps],
    }


def main() -> int:
    p = c.common_args(__doc__)
    p.add_argument("--trials", type=int, default=5, help="trials (fresh repositories), default 5")
    p.add_argument("--seed", type=int, help="seed of the planted positions; default random")
    p.add_argument("--slowdown", type=float, default=1.14, help="planted n log n factor of `sort` (default 1.14)")
    p.add_argument("--bisect-args", default="", metavar='"ARGS"',
                   help="extra arguments for `pitwall bisect`, for experiments only (the target is for none)")
    args = p.parse_args()
    pitwall = c.resolve_pitwall(args.pitwall)
    bisect_args = shlex.split(args.bisect_args)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    doc = {"script": "c_bisect.py", "pitwall": pitwall, "bisect_args": bisect_args, "seed": seed,
           "slowdown": args.slowdown, "repetitions": REPS, "trials": []}
    t_start = time.monotonic()
    with c.temp_dir("pw-cbisect-cal-", False) as d:
        sizes, ms = calibrate(d, TARGET_MS)
    doc["sizes"], doc["calibrated_ms"] = sizes, ms
    c.log(args, f"sizes {sizes}; ms per repetition {ms}")
    errors = 0
    for ti in range(args.trials):
        position = rng.randint(3, 9)
        rec = {"trial": ti, "position": position, "loadavg_1m": round(os.getloadavg()[0], 2)}
        doc["trials"].append(rec)
        with c.temp_dir(f"pw-cbisect-{ti}-", args.keep) as repo, c.temp_dir(f"pw-cbisect-m{ti}-", False) as scratch:
            try:
                shas, info = build_repo(repo, sizes, args.slowdown, position)
                rec.update(info, truth_sha=shas[position], first=shas[0], last=shas[-1])
                ratios = measure_ratio(repo, shas, position, scratch)
                rec["measured_ratios"] = ratios
                c.log(args, f"trial {ti}: planted commit {position} ({shas[position][:12]}) sorts {info['sort_n'][0]} -> "
                      f"{info['sort_n'][1]} ints: measured sort ratio {ratios['sort']:.3f} (others "
                      + ", ".join(f"{k} {v:.3f}" for k, v in ratios.items() if k != "sort") + ")")
                b = run_bisect(pitwall, repo, shas[0], shas[-1], bisect_args, args.timeout)
                rec["bisect"] = b
                rec["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
                s = classify(b, shas[position])
                s["culprit_position"] = shas.index(s["culprit"]) if s["culprit"] in shas else None
                rec["bisect_score"] = s
                c.log(args, f"trial {ti}: bisect {s['class']} (culprit commit {s['culprit_position']}, truth {position}, "
                      f"uncertain {s['uncertain']}, followed {s['followed_key']}, {s['steps']} probes, {b['wall_s']:.0f} s)"
                      + (f"\n  stderr: " + "\n  ".join(
                          [ln for ln in b["stderr_head"].splitlines()[:2]]
                          + [ln for ln in b["stderr_tail"].splitlines() if ln.startswith(("error", "warning"))])
                         if b["exit"] else ""))
            except c.HarnessError as e:
                errors += 1
                rec["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
                rec["error"] = str(e)
                c.log(args, f"trial {ti}: ERROR {e}")
    doc["wall_s"] = time.monotonic() - t_start
    ok = summarize(doc, errors)
    c.write_out(args.out, doc)
    return 0 if ok else 1


def summarize(doc: dict, errors: int) -> bool:
    rows = []
    for r in doc["trials"]:
        s = r.get("bisect_score", {})
        rows.append([
            r["trial"], r["position"],
            f"{r['measured_ratios']['sort']:.3f}" if "measured_ratios" in r else "-",
            s.get("class", "error" if "error" in r else "-"), s.get("culprit_position", "-"),
            s.get("uncertain", "-"), s.get("steps", "-"),
            f"{r['bisect']['wall_s']:.0f}" if "bisect" in r else "-", f"{r.get('loadavg_1m', '-')}/{r.get('loadavg_1m_end', '-')}",
        ])
    print()
    print(f"c_bisect.py: {len(doc['trials'])} trials, slowdown {doc['slowdown']}, bisect args "
          f"{shlex.join(doc['bisect_args']) or '(none: default flags)'}, seed {doc['seed']}, pitwall {doc['pitwall']}")
    print(f"sizes {doc['sizes']}, ms per repetition {doc['calibrated_ms']}")
    print(c.table(rows, ["trial", "planted", "measured sort ratio", "class", "culprit", "uncertain", "probes", "wall s", "load 1m start/end"]))
    classes = [r.get("bisect_score", {}).get("class", "error") for r in doc["trials"]]
    n = len(doc["trials"])
    k, w = classes.count("correct"), classes.count("wrong-sure")
    print(", ".join(f"{x} {classes.count(x)}" for x in ("correct", "uncertain", "wrong-sure", "no-culprit", "error")))
    print(f"total {doc['wall_s']:.0f} s; errors: {errors}")
    ok = n > 0 and k == n and w == 0
    print(f"  [{'PASS' if ok else 'FAIL'}] culprit found in {k} of {n}; wrong-sure: {w}")
    doc["summary"] = {"classes": classes, "found": k, "trials": n, "wrong_sure": w, "errors": errors, "pass": ok}
    return ok


if __name__ == "__main__":
    sys.exit(main())
