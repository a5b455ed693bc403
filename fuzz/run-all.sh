#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 60) with corpora seeded from tests/fixtures,
# and prints one line per target: executions and crashes. Needs cargo-fuzz
# (`cargo install cargo-fuzz`); on a stable toolchain RUSTC_BOOTSTRAP=1 enables the nightly
# flags it uses. Results go into docs/RELIABILITY.md by hand.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
export RUSTC_BOOTSTRAP=1
seed() { # target fixture-dir...
  local t=$1; shift
  mkdir -p "corpus/$t"
  for d in "$@"; do
    [ -d "../tests/fixtures/$d" ] && find "../tests/fixtures/$d" -type f ! -name '*.md' ! -name '*.cc' ! -name '*.py' -exec cp {} "corpus/$t/" \; || true
  done
}
seed pitwall_json .
seed google_benchmark google-benchmark
seed cargo_criterion cargo-criterion
seed nvbench nvbench
seed nccl_tests nccl-tests
seed hyperfine hyperfine
seed pytest_benchmark pytest-benchmark
seed mlperf_loadgen mlperf-loadgen
seed bmf bmf
seed detect_and_export . google-benchmark hyperfine bmf nccl-tests
cargo fuzz build >/dev/null 2>&1
for t in $(cargo fuzz list); do
  log=$(mktemp)
  if cargo fuzz run "$t" -- -max_total_time="$seconds" >"$log" 2>&1; then status=ok; else status=CRASH; fi
  runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -1 | awk '{print $2}')
  echo "$t: ${runs:-?} executions in ${seconds}s: $status"
  [ "$status" = ok ] || tail -30 "$log"
  rm -f "$log"
done
