#!/usr/bin/env bash
# The device check for a lent GPU machine (see DEVELOPERS.md): build, show what NVML reports,
# and run a short observe-mode measurement so per-sample GPU state is real. Never locks clocks
# or changes any setting of the card. Prints a short table; writes files under $OUT if set.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/pitwall-gpu-check}"
mkdir -p "$out"

cargo build --release --quiet
bin=target/release/pitwall

echo "== pitwall env"
"$bin" env | tee "$out/env.txt"
"$bin" env --format json > "$out/env.json"

cfg="$out/gpu-check.toml"
cat > "$cfg" <<'TOML'
[project]
name = "gpu-check"

[gpu]
clocks = "observe"     # never lock clocks on a lent card
monitor_period_ms = 10

[sampling]
max_time_s = 0.5

[[suite]]
kind = "kernel"
max_bytes = 67108864

[[suite]]
kind = "inference"
min_samples = 200
TOML

echo "== observe-mode run (CPU suites, GPU monitored)"
"$bin" run --config "$cfg" --store "sqlite:$out/pitwall.db" | tee "$out/run.txt"
"$bin" export --store "sqlite:$out/pitwall.db" -o "$out/export.json"
python3 - "$out/export.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][-1]
print("gpus:", [g["model"] for g in run["fingerprint"]["gpus"]])
print(f'{"benchmark":<40} {"samples":>7} {"min sm MHz":>10} {"max temp C":>10} {"throttled":>9}')
for r in run["results"]:
    meta = r.get("sample_meta", [])
    sm = [m["sm_clock_mhz"] for m in meta if "sm_clock_mhz" in m]
    temp = [m["temperature_c"] for m in meta if "temperature_c" in m]
    thr = sum(1 for m in meta if m.get("throttled"))
    name = r["name"] + str(r.get("params", {}))
    print(f'{name[:40]:<40} {len(r["samples"]):>7} {min(sm) if sm else "-":>10} {max(temp) if temp else "-":>10} {thr:>9}')
PY
