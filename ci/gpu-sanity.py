#!/usr/bin/env python3
"""The sanity table of ci/gpu-check.sh: one line per question the device check answers (issue
23), each PASS, FAIL, INFO (a figure to read, no threshold) or n/a with why it could not be
answered here. Reads what gpu-check.sh wrote under OUT; standard library only. Exits 1 when a
line FAILs.

usage: gpu-sanity.py OUT NO_GPU_REASON KERNELS_EXIT_CODE
"""

import json
import os
import statistics
import sys

GIB = 1 << 30
WITHIN = 0.05  # copy vs cuMemcpyDtoD, cold vs warm: within 5%

out, no_gpu, kern_rc = sys.argv[1], sys.argv[2], sys.argv[3]


def load(name, default):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f) if name.endswith(".json") else f.read()
    except (OSError, ValueError):
        return default


def results(name):
    runs = load(name, {}).get("runs", [])
    return runs[-1]["results"] if runs else []


def run_extra(name, key):
    runs = load(name, {}).get("runs", [])
    return runs[-1]["fingerprint"].get("extra", {}).get(key) if runs else None


cuda, warm1, warm4 = results("cuda.json"), results("warm-1g.json"), results("warm-4k.json")


def why_not():
    """One line: why there are no CUDA results (the probe's own words where it said)."""
    for line in load("cuda.txt", "").splitlines():
        if "unavailable" in line or line.startswith("error:"):
            why = line.split("backend unavailable: ", 1)[-1].split("; hint:", 1)[0]
            return why.removeprefix("error: ")[:150]
    return no_gpu or "no CUDA results (see cuda.txt)"


rows = []


def row(item, verdict, detail):
    rows.append((item, verdict, detail))


def median(rs, name, measure, **params):
    for r in rs:
        p = r.get("params", {})
        if (r["name"] == name and r["measure"] == measure and r["samples"]
                and all(p.get(k) == str(v) for k, v in params.items())):
            return statistics.median(r["samples"]), r["status"]
    return None, None


# --- the .so files actually loaded (LD_DEBUG=files) -----------------------------------------
loaded = [l.strip() for l in load("loaded-libs.txt", "").splitlines() if l.strip()]
versions = run_extra("cuda.json", "cuda_libraries") or {}
for soname in ["libcuda.so.1", "libnvrtc.so.13", "libcublasLt.so.13", "libnccl.so.2"]:
    # The driver may be installed under its development name alone (a lent H200 VM,
    # 2026-12-04, had libcuda.so and no libcuda.so.1): any libcuda.so* counts, and only the
    # toolkit's stub (by place or by its size, about 70 KiB against the driver's tens of MiB)
    # fails.
    driver = soname == "libcuda.so.1"
    paths = [p for p in loaded if os.path.basename(p) == soname or
             os.path.basename(os.path.realpath(p)).startswith(soname) or
             (driver and os.path.basename(p).startswith("libcuda.so"))]
    if not cuda and not paths:
        row(f"loaded {soname}", "n/a", f"cannot run: {why_not()}")
        continue
    if not paths:
        other = sorted({os.path.basename(p) for p in loaded
                        if os.path.basename(p).startswith(soname.split(".so")[0] + ".so")})
        row(f"loaded {soname}", "FAIL",
            f"not loaded (loaded instead: {', '.join(other) or 'none'})")
        continue
    path = paths[0]
    real = os.path.realpath(path)
    detail = path if real == path else f"{path} -> {real}"
    if soname == "libnccl.so.2":
        version = os.path.basename(real)[len("libnccl.so."):]
        if "." not in version:  # no versioned file behind the soname: ask what pitwall read
            version = versions.get("nccl", version or "?")
        detail += f" (version {version})"
    small = driver and os.path.isfile(real) and os.path.getsize(real) < (1 << 20)
    if "stubs" in path or "stubs" in real or small:
        row(f"loaded {soname}", "FAIL", f"the toolkit's stub, not the driver: {detail}")
    else:
        row(f"loaded {soname}", "PASS", detail)

# --- copy kernel against cuMemcpyDtoD at 1 GiB (within 5%) -----------------------------------
item = "copy kernel vs cuMemcpyDtoD, 1 GiB"
copy, _ = median(cuda, "cuda_copy_kernel", "bandwidth", bytes=GIB)
memcpy, _ = median(cuda, "cuda_memcpy_d2d", "bandwidth", bytes=GIB)
if not cuda:
    row(item, "n/a", f"cannot run: {why_not()}")
elif copy is None or memcpy is None:
    row(item, "FAIL", "a 1 GiB copy was not measured (see cuda.txt)")
else:
    ratio = copy / memcpy
    row(item, "PASS" if abs(ratio - 1) <= WITHIN else "FAIL",
        f"{copy:.0f} vs {memcpy:.0f} GB/s ({(ratio - 1) * 100:+.1f}%, limit ±5%)")

# --- cold against warm where the footprint is over 2x the L2 (within 5%) ----------------------
item = "cold vs warm, footprint > 2x L2 (1 GiB)"
if not cuda:
    row(item, "n/a", f"cannot run: {why_not()}")
else:
    parts, worst = [], 0.0
    for name in ["cuda_copy_kernel", "cuda_memcpy_d2d", "cuda_triad"]:
        cold, _ = median(cuda, name, "bandwidth", bytes=GIB)
        warm, _ = median(warm1, name, "bandwidth", bytes=GIB)
        if cold and warm:
            d = warm / cold - 1
            worst = max(worst, abs(d))
            parts.append(f"{name[5:]} {cold:.0f}/{warm:.0f} GB/s ({d * 100:+.1f}%)")
    if parts:
        row(item, "PASS" if worst <= WITHIN else "FAIL", "; ".join(parts))
    else:
        row(item, "FAIL", "no 1 GiB cold/warm pair measured (see warm-1g.txt)")

# --- eager against graph at batch 1 ------------------------------------------------------------
item = "eager vs graph, batch 1"
if not cuda:
    row(item, "n/a", f"cannot run: {why_not()}")
else:
    parts, ok = [], True
    for r in cuda:
        p = r.get("params", {})
        if r["measure"] != "latency" or p.get("batch") != "1" or p.get("mode") != "eager":
            continue
        others = {k: v for k, v in p.items() if k != "mode"}
        graph, gstatus = median(cuda, r["name"], "latency", mode="graph", **others)
        if not r["samples"] or graph is None:
            continue
        eager = statistics.median(r["samples"])
        ok &= graph < eager and gstatus == "ok" and r["status"] == "ok"
        parts.append(f"{r['name'][5:]} seq={p.get('seq')} {eager / 1e3:.1f} -> {graph / 1e3:.1f} us "
                     f"(graph {(eager - graph) / 1e3:+.1f} us faster{'' if gstatus == 'ok' else ', ' + gstatus})")
    if parts:
        row(item, "PASS" if ok else "FAIL", "; ".join(parts))
    else:
        row(item, "FAIL", "no batch-1 eager/graph pair measured (see cuda.txt)")

# --- 4 KiB host-to-device, warm against cold ---------------------------------------------------
item = "4 KiB H2D (pinned), warm vs cold"
cold, _ = median(cuda, "cuda_h2d", "bandwidth", bytes=4096, memory="pinned")
warm, _ = median(warm4, "cuda_h2d", "bandwidth", bytes=4096, memory="pinned")
if not cuda:
    row(item, "n/a", f"cannot run: {why_not()}")
elif cold and warm:
    tc, tw = 4096 / cold, 4096 / warm  # GB/s -> ns per copy
    row(item, "INFO", f"cold {tc / 1e3:.2f} us, warm {tw / 1e3:.2f} us per copy "
        f"(a warm copy far below cold measures the host's enqueue rate, not the copy)")
else:
    row(item, "FAIL", "not measured (see cuda.txt, warm-4k.txt)")

# --- the clock `lock` would choose against clocks.max.sm ---------------------------------------
item = "clock lock would choose vs clocks.max.sm"
env = load("env.json", {}).get("fingerprint", {})
clocks = env.get("extra", {}).get("clocks") or {}
target = clocks.get("lock_target_sm_mhz")
gpus = env.get("gpus", [])
nvml_max = gpus[0].get("extra", {}).get("max_sm_mhz") if gpus else None
smi_max = load("max-sm.txt", "").strip()
if no_gpu:
    fake = f" (the NVML here, a test fake, says {target} vs {nvml_max} MHz)" if target else ""
    row(item, "n/a", f"cannot run: {no_gpu}{fake}")
elif target is None:
    row(item, "FAIL", "pitwall env names no lock clock (see env.txt)")
else:
    top = int(smi_max) if smi_max.isdigit() else nvml_max
    row(item, "PASS" if top and target < top else "FAIL",
        f"lock {target} MHz, max {top} MHz (nvidia-smi {smi_max or '?'}, NVML {nvml_max}); "
        f"nothing was locked")

# --- the NVML monitor's failures per field ------------------------------------------------------
item = "NVML failures per field"
monitor = run_extra("cuda.json", "gpu_monitor")
if not monitor:
    row(item, "n/a", f"cannot run: {why_not()}")
else:
    failed = monitor.get("failed_by_field") or {}
    detail = (f"{monitor.get('readings', 0)} readings, {monitor.get('failed', 0)} failed whole; "
              + (", ".join(f"{k} {v}" for k, v in sorted(failed.items())) or "no field failed")
              + f"; one query {monitor.get('query_us_mean', 0):.0f} us mean")
    # Clocks and their cycles need the SM query; the others cost only their own column.
    row(item, "FAIL" if failed.get("sm_mhz") or monitor.get("failed") else
        ("INFO" if failed else "PASS"), detail)

# --- any implausible result ----------------------------------------------------------------------
item = "implausible results"
everything = cuda + warm1 + warm4
if not everything:
    row(item, "n/a", f"cannot run: {why_not()}")
else:
    bad = sorted({r.get("error") or r["name"] for r in everything if r["status"] == "implausible"})
    row(item, "FAIL" if bad else "PASS",
        f"{len(bad)}: " + "; ".join(b[:120] for b in bad[:4]) if bad else "none")

# --- the cuda-kernels example ---------------------------------------------------------------------
item = "cuda-kernels example"
if not cuda:
    row(item, "n/a", f"cannot run: {why_not()}")
else:
    row(item, "PASS" if kern_rc == "0" else "FAIL", f"pitwall run exit code {kern_rc} (kernels.txt)")

width = max(len(r[0]) for r in rows)
print("== sanity table")
for item, verdict, detail in rows:
    print(f"{item:<{width}}  {verdict:<4}  {detail}")
sys.exit(1 if any(v == "FAIL" for _, v, _ in rows) else 0)
