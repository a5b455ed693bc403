#!/bin/bash
# Clean release builds of two checkouts, alternating, each into a fresh target directory, each
# started once the 1-minute load average is below 1 (docs/PERFORMANCE.md "Build time").
#
#   git worktree add --detach /tmp/base 81de2d2; git worktree add --detach /tmp/after HEAD
#   ci/build-time.sh /tmp/base /tmp/after /tmp/base /tmp/after
#
# One line per build on stdout: checkout, load before, wall and CPU (user + sys) seconds, the
# build's peak RSS, the size of the `pitwall` binary, and cargo's unit count and unit-seconds
# (`--timings`; ci/build-units.py prints the heaviest units of a kept target directory).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for dir in "$@"; do
  while [ "$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)" -ge 1 ]; do sleep 5; done
  load=$(cut -d' ' -f1 /proc/loadavg)
  target=$(mktemp -d)
  times=$(mktemp)
  (cd "$dir" && CARGO_TARGET_DIR=$target /usr/bin/time -o "$times" -f "%e %U %S %M" \
    cargo build --release -q --timings >/dev/null 2>&1)
  read -r wall user sys rss <"$times"
  cpu=$(python3 -c "print(round($user + $sys, 1))")
  size=$(stat -c %s "$target/release/pitwall")
  # The first line only; the script's second line may meet a closed pipe (not an error).
  units=$(python3 "$here/build-units.py" "$target" 2>/dev/null | head -1) || true
  echo "$(date +%H:%M) $dir load=$load wall=${wall}s cpu=${cpu}s build_rss=${rss}KB binary=${size}B $units"
  rm -rf "$target" "$times"
done
