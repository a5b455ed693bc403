#!/usr/bin/env python3
"""Loads the index of a running `pitwall serve` in headless Chromium and uses its filters.

    tests/browser/index_filters.py INDEX_URL

The index's filter script is a file of the server's (`assets/filter.js`; the page's policy
runs no inline script): it must have run (the row count is shown), and picking a testbed in
the selector must hide the other testbeds' rows. Fails on a console error or warning, an
uncaught exception, a JavaScript dialog, an <img> or inline <script> in <main> (hostile names
turned markup), or any request that leaves the server's origin.
Exit status: 0 ok, 1 check failed, 2 usage error, 3 Chromium not found.
"""

import json
import sys
import time

from cdp import check_events, fail, run_with_page


def drive(page, url):
    for domain in ("Page", "Runtime", "Log", "Network"):
        page.call(f"{domain}.enable")
    page.call("Page.navigate", url=url)
    for _ in range(150):
        if page.eval("document.readyState === 'complete' && "
                     "document.getElementById('f-count') && "
                     "document.getElementById('f-count').textContent !== ''"):
            break
        time.sleep(0.1)
    else:
        fail("the filter script never ran (#f-count stays empty)")
        return
    total = page.eval("document.querySelectorAll('#benchmarks tbody tr').length")
    print("ok: the filters ran: " + page.eval("document.getElementById('f-count').textContent"))
    testbeds = page.eval("Array.from(document.querySelectorAll('#f-testbed option'))"
                         ".map(function(o){return o.value;}).filter(Boolean)")
    if len(testbeds) >= 2:
        pick = testbeds[0]
        page.eval("(function(){var s=document.getElementById('f-testbed');s.value="
                  + json.dumps(pick) + ";s.dispatchEvent(new Event('change'));})()")
        shown = page.eval("Array.from(document.querySelectorAll('#benchmarks tbody tr'))"
                          ".filter(function(t){return !t.hidden;})"
                          ".map(function(t){return t.getAttribute('data-testbed');})")
        if not shown or any(t != pick for t in shown) or len(shown) == total:
            fail(f"picking testbed {pick!r} showed rows of {shown}")
        else:
            print(f"ok: testbed {pick} shows {len(shown)} of {total} rows")
    smuggled = page.eval("document.querySelectorAll('main img, main script:not([src])').length")
    if smuggled:
        fail(f"{smuggled} <img> or inline <script> in <main>: hostile names became markup")
    page.eval("1")
    origin = "/".join(url.split("/")[:3])
    check_events(page, allowed=(origin + "/", "data:"))


def main():
    if len(sys.argv) != 2 or not sys.argv[1].startswith(("http://", "https://")):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    code = run_with_page(lambda page: drive(page, sys.argv[1]))
    if code:
        return code
    print("the index's filters work")
    return 0


if __name__ == "__main__":
    sys.exit(main())
