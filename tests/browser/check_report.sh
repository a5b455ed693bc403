#!/usr/bin/env bash
# Loads a pitwall HTML report in headless Chromium and checks that it renders.
#
#   tests/browser/check_report.sh REPORT_DIR [SCREENSHOT_DIR]
#
# For index.html and the first benchmark page (bench/*.html): dumps the DOM after load and
# checks that the chart has rendered points (sparklines on the index, and the index filter
# script ran: it sets data-ready on <body>; circle markers in #history on the benchmark page,
# and the interactive uPlot chart drawn in #history-live),
# scans Chromium's log for console errors and uncaught exceptions, and saves a screenshot of
# each page under SCREENSHOT_DIR (default target/browser). Nothing is downloaded.
# Exit status: 0 ok, 1 check failed, 2 usage error, 3 Chromium not found.
set -euo pipefail

if [[ $# -lt 1 || ! -f "$1/index.html" ]]; then
    echo "usage: $0 REPORT_DIR [SCREENSHOT_DIR] (REPORT_DIR must hold index.html)" >&2
    exit 2
fi
report=$(cd "$1" && pwd)
shots=${2:-target/browser}
mkdir -p "$shots"
shots=$(cd "$shots" && pwd)

# shellcheck source=tests/browser/lib.sh
source "$(dirname "$0")/lib.sh"

check "$report/index.html" index 1 'class="spark"'
grep -q 'data-ready="1"' "$profile/index.dom" || fail "index: filter script did not run (no data-ready on <body>)"
# The branch selector starts on the history branch (its first option): after the script ran,
# every row of another branch is hidden and no row of the history branch is.
main=$(grep -o '<select id="f-branch"><option selected="">[^<]*' "$profile/index.dom" | sed 's/.*>//' || true)
if [[ -n "$main" ]]; then
    rows=$(grep -o '<tr data-suite=[^>]*>' "$profile/index.dom" || true)
    shown_other=$(grep -v "data-branch=\"$main\"" <<<"$rows" | grep -vc 'hidden' || true)
    hidden_main=$(grep "data-branch=\"$main\"" <<<"$rows" | grep -c 'hidden' || true)
    others=$(grep -vc "data-branch=\"$main\"" <<<"$rows" || true)
    if (( shown_other > 0 || hidden_main > 0 )); then
        fail "index: branch selector on $main shows $shown_other other-branch rows, hides $hidden_main of $main"
    else
        echo "ok: index: branch selector on $main hides the $others rows of other branches"
    fi
fi
# A benchmark on several testbeds has a chart with one line per testbed.
multi=$(grep -l 'class="chart testbeds"' "$report"/bench/*.html 2>/dev/null | sort | sed -n 1p || true)
if [[ -n "$multi" ]]; then
    check "$multi" testbeds 2 '<polyline class="median tb'
fi
bench=$(find "$report/bench" -name '*.html' | sort | sed -n 1p)
if [[ -z "$bench" ]]; then
    fail "no benchmark page under $report/bench"
else
    check "$bench" bench 1 '<circle class="pt'
    grep -q 'id="history"' "$profile/bench.dom" || fail "bench: no #history chart"
    # The interactive chart (assets/history.js with the vendored uPlot) replaced the SVG.
    grep -q '<div id="history-live" data-ready="1">' "$profile/bench.dom" \
        && grep -q 'class="uplot' "$profile/bench.dom" \
        || fail "bench: the interactive history chart was not drawn"
fi

if (( failures > 0 )); then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "report renders in $("$chrome" --version 2>/dev/null || echo chromium)"
