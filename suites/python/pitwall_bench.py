"""pitwall_bench: time Python, PyTorch or Triton code and print pitwall JSON with every sample.

Standard library only. When PyTorch with CUDA is importable and a benchmark runs on the GPU,
each sample is timed with CUDA events and the L2 cache is flushed before it (by writing a
256 MiB buffer, as Triton's do_bench does), so samples are cold-cache kernel times; otherwise
time.perf_counter_ns times the call on the CPU.

Sampling follows pitwall's own engine: warm-up, then samples until the relative half-width of
the distribution-free 95% interval of the median is at most `target_rel_ci`, or `max_time_s`
is spent, never fewer than `min_samples` (Conover 1999, section 3.2).

    from pitwall_bench import Bench
    bench = Bench()
    bench.run("matmul", lambda: a @ b, params={"n": 4096}, cuda=True)
    bench.emit()            # prints {"schema": "pitwall/v1", "benchmarks": [...]}

Use it from pitwall.toml as a command suite:

    [[suite]]
    name = "kernels"
    kind = "command"
    command = "python3 bench_kernels.py"
    format = "pitwall-json"
"""

import json
import math
import sys
import time

SCHEMA = "pitwall/v1"
L2_FLUSH_BYTES = 256 << 20


def _torch():
    try:
        import torch  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def median_ci_rel_half_width(sorted_values):
    """Relative half-width of the 95% interval of the median, or None below 6 samples."""
    n = len(sorted_values)
    if n < 6:
        return None
    half = 1.959963984540054 * math.sqrt(n) / 2.0
    j = max(int(math.floor(n / 2.0 - half)), 1)
    k = min(int(math.ceil(n / 2.0 + half)) + 1, n)
    lo, hi = sorted_values[j - 1], sorted_values[k - 1]
    mid = (sorted_values[(n - 1) // 2] + sorted_values[n // 2]) / 2.0
    if mid == 0:
        return None
    return (hi - lo) / 2.0 / abs(mid)


class Bench:
    """Collects benchmarks and prints them as pitwall JSON."""

    def __init__(self):
        self.benchmarks = []

    def run(self, name, fn, params=None, cuda=False, flush_l2=True, warmup_s=0.1,
            min_samples=10, max_samples=100_000, max_time_s=1.0, target_rel_ci=0.01):
        """Samples `fn()` (one call per sample) and records the times in nanoseconds.

        cuda=True times with CUDA events when PyTorch with CUDA is available (and flushes L2
        before each sample when flush_l2); otherwise wall-clock time on the CPU.
        """
        torch = _torch() if cuda else None
        flush = None
        if torch is not None and flush_l2:
            flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")

        def one_sample():
            if torch is not None:
                if flush is not None:
                    flush.zero_()
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                return start.elapsed_time(end) * 1e6  # ms -> ns
            t0 = time.perf_counter_ns()
            fn()
            return float(time.perf_counter_ns() - t0)

        error = None
        samples = []
        try:
            deadline = time.monotonic() + warmup_s
            one_sample()
            while time.monotonic() < deadline:
                one_sample()
            ordered = []
            start = time.monotonic()
            while True:
                v = one_sample()
                samples.append(v)
                ordered.insert(_bisect_right(ordered, v), v)
                n = len(samples)
                if n >= max_samples:
                    break
                if n >= min_samples:
                    width = median_ci_rel_half_width(ordered)
                    if (width is not None and width <= target_rel_ci) or time.monotonic() - start >= max_time_s:
                        break
        except Exception as exc:  # a failing benchmark is recorded, the others still run
            error = "%s: %s" % (type(exc).__name__, exc)
        entry = {"name": name, "measure": "time", "unit": "ns", "direction": "lower_is_better",
                 "params": {str(k): str(v) for k, v in (params or {}).items()},
                 "samples": samples}
        if error is not None:
            entry["error"] = error
        self.benchmarks.append(entry)
        return samples

    def skip(self, name, reason, params=None):
        """Records `name` as skipped on purpose (e.g. "no CUDA device"): stored with status
        skipped, it neither fails the run nor is compared."""
        self.benchmarks.append({"name": name, "measure": "time", "unit": "ns",
                                "direction": "lower_is_better",
                                "params": {str(k): str(v) for k, v in (params or {}).items()},
                                "skipped": str(reason)})

    def to_json(self):
        return json.dumps({"schema": SCHEMA, "benchmarks": self.benchmarks})

    def emit(self, file=None):
        print(self.to_json(), file=file or sys.stdout)


def _bisect_right(values, v):
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if v < values[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


if __name__ == "__main__":
    # A self-contained demo: two CPU benchmarks, or a matmul on the GPU when available.
    bench = Bench()
    for n in (1_000, 10_000):
        data = list(range(n))
        bench.run("sum", lambda d=data: sum(d), params={"n": n}, max_time_s=0.2)
    torch = _torch()
    if torch is not None:
        a = torch.randn(2048, 2048, device="cuda")
        bench.run("matmul_f32", lambda: a @ a, params={"n": 2048}, cuda=True)
    else:
        bench.skip("matmul_f32", "no CUDA device (PyTorch with CUDA not available)",
                   params={"n": 2048})
    bench.emit()
