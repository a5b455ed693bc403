#!/usr/bin/env bash
# Prepares the device check on THIS machine: the lent GPU machine has no Rust toolchain and no
# network, so the release binary is built here and carried there in .gpu/ (ignored by git).
# Then, with the device tool: run command "bash ci/gpu-check.sh", carry [".gpu"], timeout 360.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p pitwall
mkdir -p .gpu
cp target/release/pitwall .gpu/pitwall
strip .gpu/pitwall 2>/dev/null || true
size=$(stat -c %s .gpu/pitwall)
echo "staged .gpu/pitwall ($((size / 1024 / 1024)) MiB, built with $(rustc --version), glibc $(ldd --version | head -1 | awk '{print $NF}'))"
if [ "$size" -gt $((48 * 1024 * 1024)) ]; then
  echo "error: .gpu/pitwall is over 48 MiB; the device tool carries 64 MiB in all" >&2
  exit 1
fi
