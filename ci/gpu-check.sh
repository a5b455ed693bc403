#!/usr/bin/env bash
# The device check for a lent GPU machine (issue 23): every CUDA suite at short budgets in
# observe mode, then a sanity table that answers, one line each, whether the numbers can be
# trusted: the CUDA libraries actually loaded (LD_DEBUG=files: libcuda.so.1 and not the
# toolkit's stub, libnvrtc.so.13, libcublasLt.so.13, libnccl.so.2 with its version), the copy
# kernel against cuMemcpyDtoD at 1 GiB (within 5%), cold against warm where the footprint is
# over 2x the L2 (within 5%), eager against graph at batch 1 (graph faster, never implausible),
# a 4 KiB host-to-device copy warm against cold, the clock `lock` would choose against
# clocks.max.sm, the NVML monitor's failures per field, and any implausible result.
#
# At most 5 minutes on one H200. It never locks clocks or changes any setting of the card,
# and needs nothing the lent machine lacks: no PyTorch, no network, no Rust toolchain (run
# ci/gpu-stage.sh here first, then the device tool with command "bash ci/gpu-check.sh",
# carry [".gpu"], timeout_s 360). A FAIL line makes it exit 1.
#
# Rehearsal without a GPU (PITWALL_FAKE_NVML=<file> bash ci/gpu-check.sh, which builds a
# binary with the test hooks): the same steps; every line that needs the GPU says in one line
# why it cannot run, and it exits 0.
# Writes everything under $OUT (or /tmp/pitwall-gpu-check).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/pitwall-gpu-check}"
mkdir -p "$out"
export PITWALL_NO_PROGRESS=1
started=$(date +%s)

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

# The CUDA libraries of a Python image's NVIDIA wheels are not on the loader path by default;
# a user's runner would put the ones its benchmarks use there. (No import: file names only.)
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

# Is there a GPU at all? Without one every GPU line says why not.
no_gpu=""
if ! command -v nvidia-smi >/dev/null; then
  no_gpu="no NVIDIA driver here (no nvidia-smi)"
elif ! nvidia-smi -L >/dev/null 2>&1; then
  no_gpu="nvidia-smi sees no GPU"
fi

echo "== nvidia-smi (for cross-checking pitwall's readings)"
if [ -z "$no_gpu" ]; then
  q=name,uuid,driver_version,pci.bus_id,clocks.sm,clocks.mem,clocks.max.sm,clocks.default_applications.graphics,temperature.gpu,power.draw,power.limit,persistence_mode,ecc.mode.current
  nvidia-smi --query-gpu=$q --format=csv | tee "$out/nvidia-smi.csv" || true
  nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader,nounits -i 0 > "$out/max-sm.txt" 2>/dev/null || true
  nvidia-smi topo -m > "$out/topo.txt" 2>&1 || true
else
  echo "($no_gpu)" | tee "$out/nvidia-smi.csv"
fi

echo "== pitwall env"
"$bin" env | tee "$out/env.txt"
"$bin" env --format json > "$out/env.json"

# Every CUDA suite, small sizes and short budgets, cold L2 (the default), observed clocks; the
# kernel suite up to its 1 GiB arrays (4 GiB of buffers for a copy's two sets), then the warm
# twins the table needs: the 1 GiB copies and the 4 KiB host-to-device copies.
cfg="$out/gpu-check.toml"
cat > "$cfg" <<'TOML'
[project]
name = "gpu-check"

[suites]
backend = "cuda"

[gpu]
clocks = "observe"     # never lock clocks on a lent card
monitor_period_ms = 10

[sampling]
warmup_s = 0.05
max_time_s = 0.3

[[suite]]
kind = "kernel"
max_bytes = 4400000000

[[suite]]
name = "kernel-warm"
kind = "kernel"
cache = "warm"
max_bytes = 4400000000

[[suite]]
kind = "inference"
max_bytes = 104857600
min_samples = 200

[[suite]]
kind = "collective"
max_bytes = 16777216
TOML

# LD_DEBUG=files in every process (pitwall and its workers): which .so files were loaded.
mkdir -p "$out/ld"
rm -f "$out/ld"/ld.*
run() {  # run NAME TIMEOUT ARGS...: one pitwall run into its own store, its exit code kept
  local name=$1 limit=$2; shift 2
  local rc=0
  LD_DEBUG=files LD_DEBUG_OUTPUT="$out/ld/ld" timeout "$limit" \
    "$bin" run --config "$cfg" --store "sqlite:$out/$name.db" --no-report "$@" \
    > "$out/$name.txt" 2>&1 || rc=$?
  echo "rc=$rc" >> "$out/$name.txt"
  "$bin" export --store "sqlite:$out/$name.db" -o "$out/$name.json" 2>/dev/null \
    || echo '{"runs": []}' > "$out/$name.json"
  echo "$name: exit code $rc ($(tail -n 4 "$out/$name.txt" | head -n 3 | tr '\n' ' ' | cut -c1-200))"
}
echo "== CUDA suites (kernel cold up to 1 GiB arrays, inference, collective)"
run cuda 190 --suite kernel --suite inference --suite collective
echo "== warm twins (1 GiB copies, 4 KiB host-to-device)"
run warm-1g 40 --suite kernel-warm --bench "[bytes=1073741824]"
run warm-4k 20 --suite kernel-warm --bench "cuda_h2d[bytes=4096,memory=pinned]"

# The .so files each process initialised, with where they came from; the rest is dropped.
cat "$out/ld"/ld.* 2>/dev/null | sed -n 's/.*calling init: //p' | sort -u > "$out/loaded-libs.txt" || true
rm -f "$out/ld"/ld.*

# The cuda-kernels suite of docs/examples/cuda-kernels, compiled from its files with NVRTC.
kern_cfg="$out/gpu-check-kernels.toml"
{ printf '[project]\nname = "gpu-check-kernels"\n\n[suites]\nbackend = "cuda"\n\n[gpu]\nclocks = "observe"\n\n[sampling]\nmax_time_s = 0.3\n\n'
  cat docs/examples/cuda-kernels/pitwall.toml; } > "$kern_cfg"
echo "== cuda-kernels suite (docs/examples/cuda-kernels)"
kern_rc=0
abs_bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
(cd docs/examples/cuda-kernels && timeout 40 "$abs_bin" run --config "$kern_cfg" \
  --store "sqlite:$out/kernels.db" --no-report) > "$out/kernels.txt" 2>&1 || kern_rc=$?
echo "cuda-kernels: exit code $kern_rc"

python3 ci/gpu-sanity.py "$out" "$no_gpu" "$kern_rc" | tee "$out/sanity.txt"
sanity_rc=${PIPESTATUS[0]}
echo "== done in $(( $(date +%s) - started )) s"
exit "$sanity_rc"
