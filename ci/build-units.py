#!/usr/bin/env python3
"""Where a release build's time went: cargo's `--timings` report of TARGET_DIR, summed per crate.

usage: ci/build-units.py TARGET_DIR   (after `cargo build --release --timings`)
Prints the unit count and unit-seconds, then every crate with at least 0.8 s, heaviest first.
"""
import glob
import json
import os
import re
import sys

reports = glob.glob(os.path.join(sys.argv[1], "cargo-timings", "cargo-timing-*.html"))
if not reports:
    sys.exit(f"no cargo-timings report under {sys.argv[1]}; hint: build with --timings")
text = open(max(reports, key=os.path.getmtime)).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);", text, re.S).group(1))
per_crate = {}
for unit in units:
    per_crate[unit["name"]] = per_crate.get(unit["name"], 0) + unit["duration"]
print(f"{len(units)} units, {sum(per_crate.values()):.1f} unit-seconds")
print(" ".join(f"{k}:{v:.1f}" for k, v in sorted(per_crate.items(), key=lambda x: -x[1]) if v >= 0.8))
