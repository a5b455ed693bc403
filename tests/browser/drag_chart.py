#!/usr/bin/env python3
"""Drives a benchmark page's interactive history chart in headless Chromium, as a person would.

    tests/browser/drag_chart.py PAGE_HTML|URL [SCREENSHOT_PNG]

SCREENSHOT_PNG (ending .png) is the page as loaded; beside it, `*-zoomed.png` after the drag.

Talks to Chromium over its DevTools protocol (--remote-debugging-port, a minimal websocket
client below: the standard library only, nothing to install). Loads the page from file://,
then with real mouse events: drags across the chart and checks that the visible x range
(`data-x-min`/`data-x-max`, which history.js sets from uPlot's x scale) narrowed; hovers a point
and checks the tooltip names its commit, run, median and interval; shift-drags and checks the
range moved without changing width; clicks "reset zoom" and checks the whole range is back.
Where the chart offers overlays (another testbed's or branch's series), it ticks the first
and checks that the chart shows it. A URL (a page of `pitwall serve`) is loaded as is, and
then only requests to its own origin are allowed. Throughout it fails on a console error or warning, an uncaught exception, a JavaScript dialog
(an injected alert()), an <img> or <script> the data smuggled in, or any request that is not
file:// (the page must load nothing remote).
Exit status: 0 ok, 1 check failed, 2 usage error, 3 Chromium not found.
"""

import os
import sys
import time

from cdp import check_events, fail, run_with_page, screenshot


def x_range(page):
    r = page.eval("[document.getElementById('history-plot').getAttribute('data-x-min'),"
                  " document.getElementById('history-plot').getAttribute('data-x-max')]")
    return float(r[0]), float(r[1])


def drive(page, url, shot, allowed):
    for domain in ("Page", "Runtime", "Log", "Network"):
        page.call(f"{domain}.enable")
    page.call("Page.navigate", url=url)
    for _ in range(100):
        if page.eval("document.readyState === 'complete' && "
                     "!!document.querySelector('#history-live[data-ready]')"):
            break
        time.sleep(0.1)
    else:
        fail("the interactive chart never became ready (#history-live[data-ready])")
        return
    if page.eval("document.getElementById('history-static').hidden"):
        print("ok: the interactive chart is drawn and the static SVG hidden")
    else:
        fail("the static SVG is still shown beside the interactive chart")
    smuggled = page.eval("document.querySelectorAll('img, main script:not([type])').length")
    if smuggled:
        fail(f"{smuggled} <img> or script elements in <main>: hostile data became markup")
    rect = page.eval("(function(){var r=document.querySelector('#history-plot .u-over')"
                     ".getBoundingClientRect();return [r.left,r.top,r.width,r.height];})()")
    left, top, width, height = rect
    y = top + height / 2
    full = x_range(page)
    screenshot(page, shot)
    page.drag(left + width * 0.3, left + width * 0.6, y)
    zoomed = x_range(page)
    if not (zoomed[0] > full[0] and zoomed[1] < full[1] and zoomed[1] - zoomed[0] < (full[1] - full[0]) * 0.6):
        fail(f"dragging did not zoom: x range {full} -> {zoomed}")
    else:
        print(f"ok: dragging zoomed the x range {full[0]:.2f}..{full[1]:.2f} to {zoomed[0]:.2f}..{zoomed[1]:.2f}")
    screenshot(page, shot and shot[: -len(".png")] + "-zoomed.png")
    page.mouse("mouseMoved", left + width * 0.5, y)
    tip = page.eval("(function(){var t=document.getElementById('history-tip');"
                    "return t.hidden ? null : t.textContent;})()")
    if not tip or "run " not in tip or "median " not in tip:
        fail(f"hovering a point showed no tooltip with its run and median: {tip!r}")
    else:
        print("ok: hovering shows " + tip.replace("\n", " | "))
    page.drag(left + width * 0.5, left + width * 0.7, y, modifiers=8)
    panned = x_range(page)
    same_width = abs((panned[1] - panned[0]) - (zoomed[1] - zoomed[0])) < 1e-6
    if not (panned[0] < zoomed[0] and same_width):
        fail(f"shift-drag did not pan: x range {zoomed} -> {panned}")
    else:
        print(f"ok: shift-drag panned to {panned[0]:.2f}..{panned[1]:.2f}")
    b = page.eval("(function(){var r=document.getElementById('history-reset')"
                  ".getBoundingClientRect();return [r.left+r.width/2,r.top+r.height/2];})()")
    page.mouse("mouseMoved", b[0], b[1])
    page.mouse("mousePressed", b[0], b[1], buttons=1)
    page.mouse("mouseReleased", b[0], b[1])
    if x_range(page) != full:
        fail(f"reset zoom did not restore {full}: {x_range(page)}")
    else:
        print("ok: reset zoom restored the whole range")
    overlays = page.eval("document.querySelectorAll('#history-overlays input').length")
    if overlays:
        b = page.eval("(function(){var r=document.querySelector('#history-overlays input')"
                      ".getBoundingClientRect();return [r.left+r.width/2,r.top+r.height/2];})()")
        page.mouse("mouseMoved", b[0], b[1])
        page.mouse("mousePressed", b[0], b[1], buttons=1)
        page.mouse("mouseReleased", b[0], b[1])
        shown = page.eval("document.getElementById('history-plot')"
                          ".getAttribute('data-overlays-shown')")
        label = page.eval("document.querySelector('#history-overlays label').textContent")
        if shown != "1":
            fail(f"ticking the overlay {label!r} did not show it (data-overlays-shown={shown!r})")
        else:
            print(f"ok: overlaid {label}")
    page.eval("1")  # collect the events of the last actions
    check_events(page, allowed)


def main():
    remote = len(sys.argv) > 1 and sys.argv[1].startswith(("http://", "https://"))
    if len(sys.argv) < 2 or not (remote or os.path.isfile(sys.argv[1])):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if remote:
        url = sys.argv[1]
        origin = "/".join(url.split("/")[:3])
        allowed = (origin + "/", "data:")
    else:
        url = "file://" + os.path.abspath(sys.argv[1])
        allowed = ("file://", "data:")
    shot = sys.argv[2] if len(sys.argv) > 2 else None
    code = run_with_page(lambda page: drive(page, url, shot, allowed))
    if code:
        return code
    print("the history chart zooms, pans and resets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
