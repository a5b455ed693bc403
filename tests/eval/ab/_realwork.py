"""Real timed Python work printed as Google Benchmark JSON, for real_aa.py and planted.py.

`bench_source(names, iters, reps, comment)` returns the text of a bench.py that, run with no
arguments, times each named kernel for `reps` repetitions of `iters[name]` reported iterations (`work[name]` times as many calls of
the kernel, default 1: the way planted.py adds real work per iteration), with
time.perf_counter_ns for real_time and time.process_time_ns for cpu_time, per iteration, in
ns, as Google Benchmark reports them), and prints `--benchmark_format=json` output with
`run_type: "iteration"` entries. Run with `--calibrate MS...` it prints, as JSON, the
iterations per kernel that make one repetition last about that many milliseconds.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess

KERNELS = [
    "loop_arith", "dict_ops", "str_format", "str_methods", "sort_ints", "sort_strs",
    "json_dumps", "json_loads", "regex", "set_ops", "numeric", "recursion",
]

_TEMPLATE = r'''"""Google-Benchmark-style timings of real Python work (pitwall A/B evaluation)."""
# {comment}
import json, math, random, re, sys, time

_r = random.Random(12345)  # the inputs are the same in every process and commit
INTS = [_r.randrange(1 << 30) for _ in range(4000)]
STRS = ["".join(_r.choice("abcdefghij") for _ in range(12)) for _ in range(2000)]
TEXT = " ".join(_r.choice(["alpha", "beta", "gamma", "delta", "error 42", "warn 7", "x=19"]) for _ in range(3000))
DOC = {{"items": [{{"id": i, "name": STRS[i], "tags": ["a", "b", str(i)], "score": i / 7}} for i in range(300)]}}
DOC_S = json.dumps(DOC)
RX = re.compile(r"(error|warn) (\d+)")


def loop_arith():
    s = 0
    for i in range(3000):
        s += i * i % 7
    return s


def dict_ops():
    d = {{}}
    for i in range(1500):
        d[i] = i
    return sum(d[i] for i in range(0, 1500, 3))


def str_format():
    return ",".join(f"{{i}}:{{i * 3}}" for i in range(800))


def str_methods():
    return len(TEXT.upper().replace("E", "e").split())


def sort_ints():
    return sorted(INTS)


def sort_strs():
    return sorted(STRS)


def json_dumps():
    return json.dumps(DOC)


def json_loads():
    return json.loads(DOC_S)


def regex():
    return len(RX.findall(TEXT))


def set_ops():
    a, b = set(INTS[:2000]), set(INTS[1000:3000])
    return len(a & b) + len(a | b)


def numeric():
    s = 0.0
    for i in range(1, 1500):
        s += math.sqrt(i) * math.sin(i)
    return s


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def recursion():
    return fib(16)


NAMES = {names!r}
ITERS = {iters!r}
# Work per reported iteration: each timed repetition calls the kernel round(ITERS * WORK)
# times and reports ITERS iterations, so WORK 1.125 is 12.5% more real work per iteration.
WORK = {work!r}
REPS = {reps}


def calibrate(targets_ms):
    out = {{}}
    for name, ms in zip(NAMES, targets_ms):
        f = globals()[name]
        f()
        per = []
        for _ in range(5):
            t0 = time.perf_counter_ns()
            for _ in range(20):
                f()
            per.append((time.perf_counter_ns() - t0) / 20)
        out[name] = max(1, round(ms * 1e6 / min(per)))
    json.dump(out, sys.stdout)


def main():
    entries = []
    for fi, name in enumerate(NAMES):
        f, n = globals()[name], ITERS[name]
        calls = max(1, round(n * WORK.get(name, 1.0)))
        f()  # warm-up
        for r in range(REPS):
            t0, c0 = time.perf_counter_ns(), time.process_time_ns()
            for _ in range(calls):
                f()
            real, cpu = time.perf_counter_ns() - t0, time.process_time_ns() - c0
            entries.append({{
                "name": "BM_" + name, "family_index": fi, "per_family_instance_index": 0,
                "run_name": "BM_" + name, "run_type": "iteration", "repetitions": REPS,
                "repetition_index": r, "threads": 1, "iterations": n,
                "real_time": real / n, "cpu_time": cpu / n, "time_unit": "ns",
            }})
    json.dump({{"context": {{"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "executable": "bench.py",
                           "num_cpus": 1, "library_build_type": "release"}},
               "benchmarks": entries}}, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--calibrate":
        calibrate([float(x) for x in sys.argv[2:]])
    else:
        main()
'''


def bench_source(names: list[str], iters: dict, reps: int, comment: str, work: dict | None = None) -> str:
    return _TEMPLATE.format(names=list(names), iters=dict(iters), reps=reps, comment=comment, work=dict(work or {}))


def calibrate(python: str, workdir: str, names: list[str], targets_ms: list[float]) -> dict:
    """Iterations per kernel for the target repetition times, measured on this machine."""
    path = os.path.join(workdir, "calibrate_bench.py")
    with open(path, "w") as f:
        f.write(bench_source(names, {n: 1 for n in names}, 1, "calibration"))
    try:
        out = subprocess.run(
            [python, path, "--calibrate", *map(str, targets_ms)],
            capture_output=True, text=True, timeout=300, check=True, stdin=subprocess.DEVNULL,
        ).stdout
    finally:
        os.remove(path)
    return json.loads(out)


def run_bench(python: str, path: str, timeout: float = 300, field: str = "real_time") -> dict[str, list[float]]:
    """Runs one bench.py process; returns `field` samples (ns) per benchmark name."""
    out = subprocess.run(
        [python, path], capture_output=True, text=True, timeout=timeout, check=True, stdin=subprocess.DEVNULL,
        cwd=os.path.dirname(path),
    ).stdout
    res: dict[str, list[float]] = {}
    for e in json.loads(out)["benchmarks"]:
        res.setdefault(e["name"], []).append(e[field])
    return res


def process_medians(samples: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in samples.items()}
