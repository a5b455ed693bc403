# Shared by the headless-Chromium checks (check_report.sh, check_writeup.sh): finds Chromium,
# sets its flags, and defines `check PAGE NAME MIN PATTERN` (load, dump the DOM, count PATTERN,
# scan the log for console errors and remote loads, save a screenshot under $shots) and `fail`.
# The caller sets `shots` and sources this file; `failures` counts failed checks.
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

