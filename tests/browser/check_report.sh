#!/usr/bin/env bash
# Loads a pitwall HTML report in headless Chromium and checks that it renders.
#
#   tests/browser/check_report.sh REPORT_DIR [SCREENSHOT_DIR]
#
# For index.html and the first benchmark page (bench/*.html): dumps the DOM after load and
# checks that the chart has rendered points (sparklines on the index, and the index filter
# script ran: it sets data-ready on <body>; circle markers in #history on the benchmark page),
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

chrome=${CHROMIUM:-}
if [[ -z "$chrome" ]]; then
    for c in chromium chromium-browser google-chrome-stable google-chrome; do
        if command -v "$c" >/dev/null 2>&1; then chrome=$(command -v "$c"); break; fi
    done
fi
if [[ -z "$chrome" ]]; then
    echo "chromium not found (install it with: apt-get install -y chromium)" >&2
    exit 3
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
    --disable-component-update --disable-sync --no-first-run --disable-extensions
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --window-size=1280,1600)

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# check PAGE NAME MIN_COUNT PATTERN: load, dump the DOM, count PATTERN, scan the log.
check() {
    local page=$1 name=$2 min=$3 pattern=$4
    local url="file://$page" dom="$profile/$name.dom" log="$profile/$name.log"
    if ! timeout 60 "$chrome" "${flags[@]}" --dump-dom "$url" >"$dom" 2>"$log"; then
        fail "$name: chromium exited with an error"; sed -n 1,20p "$log" >&2
    fi
    local count
    count=$(grep -o "$pattern" "$dom" | wc -l || true)
    if (( count < min )); then
        fail "$name: expected at least $min of '$pattern' in the rendered DOM, found $count"
    else
        echo "ok: $name: $count of '$pattern' rendered"
    fi
    # Console messages are logged as 'CONSOLE(line)' or 'CONSOLE' lines; errors and uncaught
    # exceptions must not appear. Network errors would mean the page wanted something remote.
    if grep -E "Uncaught|CONSOLE.*([Ee]rror|[Ww]arning)|console\.error|ERR_(FILE_NOT_FOUND|NAME_NOT_RESOLVED|INTERNET)" "$log" >&2; then
        fail "$name: console errors or failed loads (above)"
    fi
    timeout 60 "$chrome" "${flags[@]}" --screenshot="$shots/$name.png" "$url" >/dev/null 2>&1 \
        || fail "$name: screenshot failed"
    [[ -s "$shots/$name.png" ]] && echo "ok: $name: screenshot $shots/$name.png"
}

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
fi

if (( failures > 0 )); then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "report renders in $("$chrome" --version 2>/dev/null || echo chromium)"
