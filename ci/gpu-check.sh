#!/usr/bin/env bash
# The device check for a lent GPU machine (DEVELOPERS.md, issue 4): what NVML reports through
# `pitwall env`, set beside nvidia-smi's own answers, a short observe-mode run of the CPU suites
# with a GPU load beside it so the per-sample GPU state (clocks, temperature, power, throttle
# bits) and the monitor's cost are real readings, then every CUDA suite (kernel, inference,
# collective over NCCL) at small sizes and short budgets, with one table of their results
# (docs/SUITES.md), and the cuda-kernels suite of docs/examples/cuda-kernels. Never locks
# clocks or changes any setting of the card. About 4-6 minutes on one H200; it must stay within
# 8 (the device tool's timeout_s 480 leaves room for a rerun within a 15-minute lease).
#
# The lent machine has no Rust toolchain and no network: run ci/gpu-stage.sh here first, then
# the device tool with command "bash ci/gpu-check.sh", carry [".gpu"], timeout_s 480.
# Without a GPU (or with PITWALL_FAKE_NVML, then with a binary built with the test-hooks
# feature) it runs the same steps, as a rehearsal.
# Writes everything under $OUT (or /tmp/pitwall-gpu-check) and prints a short table.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/pitwall-gpu-check}"
mkdir -p "$out"
export PITWALL_NO_PROGRESS=1

bin="${PITWALL_BIN:-}"
if [ -z "$bin" ] && [ -x .gpu/pitwall ]; then
  bin=.gpu/pitwall
elif [ -z "$bin" ]; then
  command -v cargo >/dev/null || { echo "error: no .gpu/pitwall and no cargo (hint: run ci/gpu-stage.sh and carry .gpu)" >&2; exit 2; }
  if [ -n "${PITWALL_FAKE_NVML:-}" ]; then
    # The rehearsal with the file-backed fake NVML: its own binary with the test hooks, in
    # its own target directory, so target/release/pitwall stays a release build without them.
    cargo build --release --quiet -p pitwall --features test-hooks --target-dir target/rehearsal
    bin=target/rehearsal/release/pitwall
  else
    cargo build --release --quiet -p pitwall
    bin=target/release/pitwall
  fi
fi
echo "== $("$bin" --version) on $(hostname), $(date -u +%FT%TZ)"

# The CUDA libraries of the Python image (torch's wheels) are not on the loader path by
# default; a user's runner would put the ones its benchmarks use there.
if command -v python3 >/dev/null; then
  libs=$(python3 - <<'PY' 2>/dev/null || true
import glob, site
dirs = []
for sp in site.getsitepackages():
    dirs += sorted(glob.glob(sp + "/nvidia/*/lib")) + sorted(glob.glob(sp + "/nvidia/cu*/lib"))
print(":".join(dict.fromkeys(dirs)))
PY
)
  [ -n "$libs" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$libs"
fi

echo "== nvidia-smi (for cross-checking pitwall's readings)"
if command -v nvidia-smi >/dev/null; then
  q=name,uuid,driver_version,pci.bus_id,vbios_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem,clocks.max.sm,clocks.default_applications.graphics,temperature.gpu,power.draw,power.limit,persistence_mode,ecc.mode.current
  nvidia-smi --query-gpu=$q --format=csv | tee "$out/nvidia-smi.csv" || true
  nvidia-smi topo -m > "$out/topo.txt" 2>&1 || true
  nvidia-smi -q > "$out/nvidia-smi-q.txt" 2>&1 || true
else
  echo "(no nvidia-smi here)" | tee "$out/nvidia-smi.csv"
fi

echo "== pitwall env"
"$bin" env | tee "$out/env.txt"
"$bin" env --format json > "$out/env.json"

# A GPU load for the run's duration, so the monitor sees clocks and power move; it also shows
# up as "another process on the GPU" in the run's warnings, which is one of the checks.
load_pid=""
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  timeout 40 python3 - <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 35
while time.time() < end:
    for _ in range(20):
        a @ a
    torch.cuda.synchronize()
    time.sleep(0.3)  # leave idle gaps so clocks move both ways
PY
  load_pid=$!
  sleep 5  # CUDA context up before pitwall looks at the GPU's processes
fi

cfg="$out/gpu-check.toml"
cat > "$cfg" <<'TOML'
[project]
name = "gpu-check"

[suites]
backend = "cpu"        # this run is about GPU monitoring beside the CPU suites

[gpu]
clocks = "observe"     # never lock clocks on a lent card
monitor_period_ms = 10

[sampling]
max_time_s = 1.0

[[suite]]
kind = "kernel"
max_bytes = 67108864

[[suite]]
kind = "inference"
min_samples = 200
TOML

echo "== observe-mode run (CPU suites, GPU monitored every 10 ms)"
"$bin" run --config "$cfg" --store "sqlite:$out/pitwall.db" --no-report 2>&1 | tee "$out/run.txt"
"$bin" export --store "sqlite:$out/pitwall.db" -o "$out/export.json"
[ -n "$load_pid" ] && { kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; }

# Every CUDA suite (docs/SUITES.md) on the card, small sizes, short budgets: the kernel suite
# (GEMMs, copies, triad, row kernels, transfers), inference, and the NCCL collectives over every
# visible GPU in one process (one GPU: world size 1, and the run says so), each checked before
# it is timed. Exit 3 means the probe said why CUDA cannot run here (CUDA 13 driver,
# libnvrtc.so.13 and libcublas.so.13 needed); a suite that cannot run (no NCCL) is skipped
# with one line. Neither stops the check.
cuda_cfg="$out/gpu-check-cuda.toml"
cat > "$cuda_cfg" <<'TOML'
[project]
name = "gpu-check-cuda"

[suites]
backend = "cuda"

[gpu]
clocks = "observe"

[sampling]
warmup_s = 0.05
max_time_s = 0.3

[[suite]]
kind = "kernel"
max_bytes = 314572800

# The MLP and transformer block at batch 1 (seq 128, 512) and batch 8 (seq 128), eager and
# CUDA graph: 12 benchmarks, each checked stage by stage before it is timed.
[[suite]]
kind = "inference"
max_bytes = 104857600
min_samples = 200

[[suite]]
kind = "collective"
max_bytes = 16777216
TOML
echo "== CUDA suites ([suites] backend = \"cuda\": kernel up to 300 MiB, inference up to 100 MiB, NCCL collectives up to 16 MiB)"
cuda_rc=0
timeout 300 "$bin" run --config "$cuda_cfg" --store "sqlite:$out/pitwall-cuda.db" --no-report 2>&1 | tee "$out/cuda-run.txt" || cuda_rc=$?
echo "cuda run exit code: $cuda_rc" | tee -a "$out/cuda-run.txt"
cuda_json="$out/export-cuda.json"
"$bin" export --store "sqlite:$out/pitwall-cuda.db" -o "$cuda_json" 2>/dev/null || echo '{"runs": []}' > "$cuda_json"

# The cuda-kernels suite: the documented example repository's own kernels
# (docs/examples/cuda-kernels), compiled from its files with NVRTC, each checked (a host axpy,
# a reference kernel) before it is timed. Run from that directory: sources are relative to it.
kern_cfg="$out/gpu-check-kernels.toml"
{ printf '[project]\nname = "gpu-check-kernels"\n\n[suites]\nbackend = "cuda"\n\n[gpu]\nclocks = "observe"\n\n[sampling]\nmax_time_s = 0.5\n\n'
  cat docs/examples/cuda-kernels/pitwall.toml; } > "$kern_cfg"
echo "== cuda-kernels suite (docs/examples/cuda-kernels)"
kern_rc=0
abs_bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
(cd docs/examples/cuda-kernels && "$abs_bin" kernels --config "$kern_cfg" --sm 90 && \
  timeout 90 "$abs_bin" run --config "$kern_cfg" --store "sqlite:$out/pitwall-kernels.db" --no-report) \
  2>&1 | tee "$out/kernels-run.txt" || kern_rc=$?
echo "cuda-kernels run exit code: $kern_rc" | tee -a "$out/kernels-run.txt"

python3 - "$out/export.json" "$out/env.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][-1]
env = json.load(open(sys.argv[2]))
fp = run["fingerprint"]
print("== pitwall's view")
for g in fp.get("gpus", []):
    x = g.get("extra", {})
    print(f'gpu {x.get("index")}: {g["model"]} driver {g.get("driver")} bus {x.get("pci_bus_id")} '
          f'numa {x.get("numa_node")} pcie gen{x.get("pcie_gen")} x{x.get("pcie_width")} '
          f'power limit {x.get("power_limit_w")} W max sm {x.get("max_sm_mhz")} MHz '
          f'persistence {x.get("persistence_mode")} ecc {x.get("ecc_enabled")} '
          f'nvlink peers {len(x.get("nvlink_peers", []))} topology {x.get("topology", {})} '
          f'other processes {x.get("other_processes")}')
if not fp.get("gpus"):
    print("gpus: none;", fp.get("extra", {}).get("gpu"))
print("cuda libraries:", fp.get("extra", {}).get("cuda_libraries") or env.get("extra", {}).get("cuda_libraries"))
print("pinning:", json.dumps(fp.get("extra", {}).get("pinning")))
print("monitor:", json.dumps(fp.get("extra", {}).get("gpu_monitor")))
print(f'{"benchmark":<44} {"samples":>7} {"sm MHz min-max":>15} {"max temp C":>10} {"max W":>7} {"throttled":>9}')
for r in run["results"]:
    meta = r.get("sample_meta", [])
    sm = [m["sm_clock_mhz"] for m in meta if m.get("sm_clock_mhz") is not None]
    temp = [m["temperature_c"] for m in meta if m.get("temperature_c") is not None]
    power = [m["power_w"] for m in meta if m.get("power_w") is not None]
    thr = sum(1 for m in meta if m.get("throttled"))
    name = (r["name"] + " " + ",".join(f"{k}={v}" for k, v in r.get("params", {}).items()) + " " + r.get("measure", ""))[:44]
    rng = f"{min(sm)}-{max(sm)}" if sm else "-"
    print(f'{name:<44} {len(r["samples"]):>7} {rng:>15} {max(temp) if temp else "-":>10} '
          f'{round(max(power)) if power else "-":>7} {thr:>9}')
PY

# One table of every CUDA suite's results: status, median time per iteration, median rates
# (TFLOP/s or GB/s; algbw and busbw for the collectives), the slowest rank's median time.
python3 - "$cuda_json" "$cuda_rc" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1])).get("runs", [])
print(f"== CUDA suites (pitwall run exit code {sys.argv[2]})")
if not runs:
    print("no CUDA results: see cuda-run.txt for why (the probe's line, or the run's error)")
    sys.exit(0)
rows = {}
for r in runs[-1]["results"]:
    params = ",".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items()))
    key = (r["suite"], f'{r["name"]}[{params}]' if params else r["name"])
    row = rows.setdefault(key, {"status": r["status"], "error": r.get("error"), "m": {}})
    if r["status"] != "ok":
        row["status"], row["error"] = r["status"], r.get("error") or row["error"]
    if r["samples"]:
        row["m"][r["measure"]] = (statistics.median(r["samples"]), r["unit"])
print(f'{"suite":<10} {"benchmark":<58} {"status":<7} {"time us":>10} {"rates":<40} {"slowest rank us":>15}')
for (suite, name), row in rows.items():
    m = row["m"]
    t = m.get("time", (None, ""))[0]
    rates = " ".join(f"{k}={v:.4g} {u}"
                     for k, (v, u) in m.items() if k != "time" and not k.startswith("time_rank"))
    ranks = [v for k, (v, _) in m.items() if k.startswith("time_rank")]
    print(f'{suite:<10} {name[:58]:<58} {row["status"]:<7} '
          f'{(f"{t / 1e3:.2f}" if t is not None else "-"):>10} {rates[:40]:<40} '
          f'{(f"{max(ranks) / 1e3:.2f}" if ranks else "-"):>15}')
    if row["status"] != "ok" and row["error"]:
        print(f'           {row["error"][:150]}')
PY
