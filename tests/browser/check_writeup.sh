#!/usr/bin/env bash
# Loads a pitwall write-up (`pitwall writeup --format html`) in headless Chromium and checks that
# it renders: the trend charts and sparklines are drawn (at least MIN_CHARTS <polyline> elements
# in the rendered DOM), nothing is logged as a console error and nothing remote is requested
# (the page is self-contained), and a screenshot is saved as SCREENSHOT_DIR/writeup.png
# (default target/browser).
#
#   tests/browser/check_writeup.sh WRITEUP_HTML MIN_CHARTS [SCREENSHOT_DIR]
#
# Exit status: 0 ok, 1 check failed, 2 usage error, 3 Chromium not found.
set -euo pipefail

if [[ $# -lt 2 || ! -f "$1" || ! "$2" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 WRITEUP_HTML MIN_CHARTS [SCREENSHOT_DIR] (WRITEUP_HTML must be a file)" >&2
    exit 2
fi
page=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
min=$2
shots=${3:-target/browser}
mkdir -p "$shots"
shots=$(cd "$shots" && pwd)

# shellcheck source=tests/browser/lib.sh
source "$(dirname "$0")/lib.sh"

check "$page" writeup "$min" '<polyline'
grep -q '<h1' "$profile/writeup.dom" || fail "writeup: no <h1> in the rendered DOM"
grep -q '<script' "$profile/writeup.dom" && fail "writeup: a <script> element (the write-up has none)"

if (( failures > 0 )); then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "write-up renders in $("$chrome" --version 2>/dev/null || echo chromium)"
